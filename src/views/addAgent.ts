/**
 * "Atrium: Add Agent…": a preset (found on PATH, or installed pinned with npm), an agent from the ACP
 * registry (installed pinned into the extension's storage, with progress and Cancel), or a custom command
 * (checked on PATH first). The result is an entry in the user's `agentHost.agents`; installing is its own
 * phase with its own errors, never a slow start.
 */
import * as vscode from 'vscode';
import { inertMarkup } from '../core/visibleText';
import { agentConfigOf, install, InstallError, listInstalled, uninstall, updateAvailable, type InstalledAgent } from '../agents/installer';
import { companionPath, presetConfig, PRESETS, type AgentPreset, type Companion } from '../agents/presets';
import { distributionFor, loadRegistry, platformKey, type LoadedRegistry, type RegistryAgent } from '../agents/registry';
import { findOnPath } from '../agents/tools';
import type { AgentConfig } from '../session/agentConfig';

export interface AddAgentContext {
  /** Where agents are installed (`<globalStorage>/agents` unless `agentHost.install.storageDir`). */
  storage: string;
  /** Where the downloaded registry is cached. */
  registryCache: string;
  log: vscode.LogOutputChannel;
}

type Choice = vscode.QuickPickItem & { run?: () => Promise<AgentConfig | undefined> };

function setting<T>(key: string, fallback: T): T {
  return vscode.workspace.getConfiguration('agentHost').get<T>(key, fallback);
}

/** Runs the whole flow; resolves with the entry added (undefined when the person gave up). */
export async function addAgent(ctx: AddAgentContext): Promise<AgentConfig | undefined> {
  const items: Choice[] = [{ label: vscode.l10n.t('Presets'), kind: vscode.QuickPickItemKind.Separator }];
  for (const p of PRESETS) {
    // Found only with what it starts itself (pi-acp with pi): else it is installed with it.
    const found = findOnPath(p.command, process.env);
    const ready = found && (p.runs ?? []).every((c) => companionPath(c, process.env)) ? found : undefined;
    const how = ready
      ? vscode.l10n.t('found: {0}', ready)
      : p.install.npm
        ? vscode.l10n.t('installs {0} with npm', [p.install.npm, ...(p.runs ?? [])].map((n) => `${n.package}@${n.version}`).join(' + '))
        : p.install.uvx
          ? vscode.l10n.t('runs {0} with uvx', p.install.uvx)
          : vscode.l10n.t('not found on PATH');
    items.push({ label: p.name, description: `${p.protocol.toUpperCase()} · ${how}`, detail: `${p.description} ${p.permission}`, run: () => fromPreset(ctx, p, ready, found) });
  }
  items.push({ label: vscode.l10n.t('More'), kind: vscode.QuickPickItemKind.Separator });
  items.push({
    label: `$(globe) ${vscode.l10n.t('Browse the ACP Registry…')}`,
    detail: vscode.l10n.t('Agents published in the Agent Client Protocol registry, installed pinned to their version.'),
    run: () => fromRegistry(ctx),
  });
  items.push({ label: `$(terminal) ${vscode.l10n.t('Custom Command…')}`, detail: vscode.l10n.t('Any agent that speaks ACP or pi RPC mode over stdio.'), run: () => custom() });
  const pick = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Atrium: Add Agent'), matchOnDescription: true, matchOnDetail: true });
  const config = await pick?.run?.();
  if (config) await save(config, ctx.log);
  return config;
}

/** `ready`: the command found with all it starts; `found`: the command alone (then what it lacks is said and installed). */
async function fromPreset(ctx: AddAgentContext, preset: AgentPreset, ready: string | undefined, found: string | undefined): Promise<AgentConfig | undefined> {
  if (ready) return presetConfig(preset, { command: ready });
  const npm = preset.install.npm;
  if (npm) {
    const yes = vscode.l10n.t('Install');
    const packages = [npm, ...(preset.runs ?? [])].map((n) => `${n.package}@${n.version}`).join(' + ');
    const lacks = (preset.runs ?? []).filter((c) => !companionPath(c, process.env)).map((c) => c.bin);
    const question = found
      ? vscode.l10n.t("{0} is on PATH ({1}) but {2}, which it starts, is not. Install {3} with npm into Atrium's storage?", preset.name, found, lacks.join(', '), packages)
      : vscode.l10n.t("{0} is not on PATH. Install {1} with npm into Atrium's storage?", preset.name, packages);
    const answer = await vscode.window.showInformationMessage(
      question,
      { modal: true, detail: [npm.needs ? vscode.l10n.t('It also needs: {0}.', npm.needs) : '', vscode.l10n.t('Into: {0}', ctx.storage)].filter(Boolean).join('\n') },
      yes,
    );
    if (answer !== yes) return undefined;
    const entry: RegistryAgent = { id: preset.id, name: preset.name, version: npm.version, description: preset.description, distribution: { npx: { package: `${npm.package}@${npm.version}` } } };
    const installed = await installWithProgress(ctx, entry, preset.runs);
    return installed && presetConfig(preset, { command: installed.command, args: installed.args, env: installed.env });
  }
  if (preset.install.registryId) {
    const registry = await loadWithProgress(ctx);
    const entry = registry?.registry.agents.find((a) => a.id === preset.install.registryId);
    if (!entry) {
      void vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('{0} is not in the ACP registry ({1}).', preset.name, registry?.from ?? '')));
      return undefined;
    }
    const installed = await installWithProgress(ctx, entry);
    return installed && { ...agentConfigOf(installed), args: [...installed.args], preset: preset.id };
  }
  void vscode.window.showErrorMessage(vscode.l10n.t('{0} is not on PATH ({1}).', preset.name, process.env.PATH ?? ''));
  return undefined;
}

async function loadWithProgress(ctx: AddAgentContext): Promise<LoadedRegistry | undefined> {
  try {
    const url = setting<string>('registry.url', '') || undefined;
    return await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Reading the ACP registry…') }, () =>
      loadRegistry({ ...(url ? { url } : {}), cacheDir: ctx.registryCache }),
    );
  } catch (error) {
    void vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('Could not read the ACP registry: {0}', (error as Error).message)));
    return undefined;
  }
}

async function fromRegistry(ctx: AddAgentContext): Promise<AgentConfig | undefined> {
  const loaded = await loadWithProgress(ctx);
  if (!loaded) return undefined;
  if (loaded.problems.length) ctx.log.warn(`ACP registry (${loaded.from}): skipped ${loaded.problems.join('; ')}`);
  const platform = platformKey();
  const installed = listInstalled(ctx.storage);
  const items = loaded.registry.agents.map((a) => {
    let kind: string;
    try {
      kind = distributionFor(a, platform).kind;
    } catch {
      kind = vscode.l10n.t('no build for this platform');
    }
    const have = installed.find((i) => i.id === a.id);
    const state = have
      ? updateAvailable(
          installed.filter((i) => i.id === a.id),
          a,
        )
        ? vscode.l10n.t('installed {0}, update available', have.version)
        : vscode.l10n.t('installed')
      : '';
    return { label: a.name, description: [a.version, a.license, kind, state].filter(Boolean).join(' · '), detail: a.description, entry: a };
  });
  const source = { network: vscode.l10n.t('online'), cache: vscode.l10n.t('cached copy'), bundled: vscode.l10n.t('bundled snapshot, offline'), file: loaded.from }[loaded.source];
  const pick = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('ACP Registry ({0})', source),
    matchOnDescription: true,
    matchOnDetail: true,
    placeHolder: vscode.l10n.t('Search by name or description'),
  });
  if (!pick) return undefined;
  const done = await installWithProgress(ctx, pick.entry);
  if (!done) return undefined;
  const preset = PRESETS.find((p) => p.install.registryId === pick.entry.id);
  const config = agentConfigOf(done);
  // A preset's permission settings come with it (e.g. codex's approval policy).
  return preset ? { ...config, args: [...(config.args ?? []), ...preset.args], env: { ...preset.env, ...(config.env ?? {}) }, preset: preset.id } : config;
}

/** Installs with a cancellable progress notification; errors are said with their phase. */
async function installWithProgress(ctx: AddAgentContext, entry: RegistryAgent, companions?: Companion[]): Promise<InstalledAgent | undefined> {
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: inertMarkup(vscode.l10n.t('Installing {0} {1}', entry.name, entry.version)), cancellable: true },
      (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return install(entry, { storage: ctx.storage, signal: abort.signal, onProgress: (p) => progress.report({ message: inertMarkup(p.message) }), ...(companions ? { with: companions } : {}) });
      },
    );
    const beside = (companions ?? []).map((c) => ` with ${c.package}@${c.version} (${c.env}=${result.installed.env[c.env]})`).join('');
    ctx.log.info(`Installed ${entry.id} ${entry.version} (${result.installed.kind})${beside} in ${result.installed.dir}${result.already ? ' (already there)' : ''}`);
    return result.installed;
  } catch (error) {
    const e = error as Error;
    if (e instanceof InstallError && e.cancelled) return undefined;
    const phase = e instanceof InstallError ? e.phase : 'install';
    ctx.log.error(`Installing ${entry.id} ${entry.version} failed (${phase}): ${e.message}`);
    void vscode.window.showErrorMessage(inertMarkup(vscode.l10n.t('Installing {0} failed ({1}): {2}', entry.name, phase, e.message)));
    return undefined;
  }
}

async function custom(): Promise<AgentConfig | undefined> {
  const command = await vscode.window.showInputBox({
    title: vscode.l10n.t('Add Agent: command'),
    prompt: vscode.l10n.t('The program that starts the agent (a name on PATH or a full path)'),
    ignoreFocusOut: true,
    validateInput: (value) => {
      const v = value.trim();
      if (!v) return undefined;
      if (/[\\/]/.test(v)) return findOnPath(v.split(/[\\/]/).pop()!, { PATH: v.replace(/[\\/][^\\/]*$/, '') }) ? undefined : vscode.l10n.t('{0} is not an executable file', v);
      return findOnPath(v, process.env) ? undefined : vscode.l10n.t('"{0}" is not on PATH (searched: {1})', v, process.env.PATH ?? '');
    },
  });
  if (!command?.trim()) return undefined;
  const args = await vscode.window.showInputBox({ title: vscode.l10n.t('Add Agent: arguments'), prompt: vscode.l10n.t('Arguments, separated by spaces (e.g. --acp)'), ignoreFocusOut: true });
  if (args === undefined) return undefined;
  const protocol = await vscode.window.showQuickPick(
    [
      { label: 'ACP', description: vscode.l10n.t('Agent Client Protocol (JSON-RPC over stdio)'), value: 'acp' as const },
      { label: 'RPC', description: vscode.l10n.t('pi-family RPC mode (--mode rpc)'), value: 'rpc' as const },
    ],
    { title: vscode.l10n.t('Add Agent: protocol') },
  );
  if (!protocol) return undefined;
  const base = command.trim().split(/[\\/]/).pop()!;
  const name = await vscode.window.showInputBox({ title: vscode.l10n.t('Add Agent: name'), value: base, ignoreFocusOut: true });
  if (!name?.trim()) return undefined;
  return { name: name.trim(), command: command.trim(), args: args.split(/\s+/).filter(Boolean), env: {}, protocol: protocol.value };
}

/** Adds (or replaces, by name) the entry in the user's `agentHost.agents`. */
async function save(config: AgentConfig, log: vscode.LogOutputChannel): Promise<void> {
  const section = vscode.workspace.getConfiguration('agentHost');
  const current = section.inspect<AgentConfig[]>('agents')?.globalValue ?? [];
  const next = [...current.filter((a) => a.name !== config.name), config];
  await section.update('agents', next, vscode.ConfigurationTarget.Global);
  log.info(`Added agent "${config.name}": ${[config.command, ...(config.args ?? [])].join(' ')}`);
  const use = vscode.l10n.t('Make It the Default');
  const answer = await vscode.window.showInformationMessage(inertMarkup(vscode.l10n.t('Added "{0}" to agentHost.agents.', config.name)), use);
  if (answer === use) await section.update('defaultAgent', config.name, vscode.ConfigurationTarget.Global);
}

/** "Atrium: Manage Installed Agents…": update to the registry's version, or uninstall. */
export async function manageInstalled(ctx: AddAgentContext): Promise<void> {
  const installed = listInstalled(ctx.storage);
  if (!installed.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No agent is installed in {0}.', ctx.storage));
    return;
  }
  const registry = await loadWithProgress(ctx);
  const items = installed.map((i) => {
    const entry = registry?.registry.agents.find((a) => a.id === i.id);
    const newer = entry
      ? updateAvailable(
          installed.filter((x) => x.id === i.id),
          entry,
        )
      : undefined;
    return { label: `${i.name} ${i.version}`, description: newer ? vscode.l10n.t('update available: {0}', newer) : i.kind, detail: i.dir, i, entry: newer ? entry : undefined };
  });
  const pick = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Atrium: Installed Agents') });
  if (!pick) return;
  const update = vscode.l10n.t('Update');
  const remove = vscode.l10n.t('Uninstall');
  const answer = await vscode.window.showInformationMessage(`${pick.i.name} ${pick.i.version}`, { modal: true, detail: pick.i.dir }, ...(pick.entry ? [update] : []), remove);
  const section = vscode.workspace.getConfiguration('agentHost');
  const agents = section.inspect<AgentConfig[]>('agents')?.globalValue ?? [];
  const usesOld = (a: AgentConfig) => a.command.startsWith(pick.i.dir) || (a.args ?? []).some((x) => x.startsWith(pick.i.dir));
  if (answer === update && pick.entry) {
    const next = await installWithProgress(ctx, pick.entry);
    if (!next) return;
    // Applied to the entries that ran the old version: they take it at their next start (never mid-turn).
    const swap = (s: string) => s.split(pick.i.dir).join(next.dir);
    await section.update(
      'agents',
      agents.map((a) => (usesOld(a) ? { ...a, command: swap(a.command), args: (a.args ?? []).map(swap) } : a)),
      vscode.ConfigurationTarget.Global,
    );
    void vscode.window.showInformationMessage(inertMarkup(vscode.l10n.t('{0} {1} is installed; agents use it from their next start.', next.name, next.version)));
  } else if (answer === remove) {
    uninstall(ctx.storage, pick.i.id, pick.i.version);
    const left = agents.filter(usesOld).map((a) => a.name);
    if (left.length) void vscode.window.showWarningMessage(inertMarkup(vscode.l10n.t('Uninstalled. These agents still point at it: {0}', left.join(', '))));
  }
}
