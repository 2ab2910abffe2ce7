/**
 * `agent-host registry list|search`, `install`, `uninstall`, `installed`: agents from the ACP registry,
 * installed pinned to their version. `install` prints the agent config to paste into `agentHost.agents`.
 */
import { parseArgs } from 'node:util';
import { agentConfigOf, defaultStorageDir, install, InstallError, listInstalled, uninstall, updateAvailable, type InstalledAgent } from '../agents/installer';
import { defaultRegistryCacheDir, loadRegistry, platformKey, searchRegistry, type LoadedRegistry, type RegistryAgent } from '../agents/registry';

export const AGENT_VERBS: ReadonlySet<string> = new Set(['registry', 'install', 'uninstall', 'installed']);

export const AGENTS_USAGE = `Usage: agent-host registry list [--registry FILE|URL] [--format text|json]
       agent-host registry search QUERY [--registry FILE|URL] [--format text|json]
       agent-host install ID [--version V | --preview] [--storage DIR] [--registry FILE|URL] [--format text|json]
       agent-host uninstall ID [--version V] [--storage DIR]
       agent-host installed [--storage DIR] [--format text|json]

Agents from the ACP registry (default https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json,
cached with its ETag in --cache-dir, default $XDG_CACHE_HOME/agent-host/registry; offline: the cached copy,
else the snapshot bundled with Atrium). install puts the agent, pinned to its version, in
<storage>/<id>/<version>/ (default storage $XDG_DATA_HOME/agent-host/agents or ~/.local/share/agent-host/agents)
and prints its agent config as JSON, ready for "agentHost.agents" or --config.

Exit codes: 0 done, 1 failed, 2 usage, 7 cancelled (Ctrl+C).`;

export interface AgentsIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

type Values = { registry?: string; storage?: string; version?: string; preview?: boolean; format?: string; 'cache-dir'?: string; help?: boolean };

/** Runs one verb (`argv[0]`); resolves with the exit code. */
export async function runAgentsCommand(argv: string[], io: AgentsIo): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        registry: { type: 'string' },
        storage: { type: 'string' },
        version: { type: 'string' },
        preview: { type: 'boolean' },
        format: { type: 'string' },
        'cache-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    io.err(`${(e as Error).message}\n\n${AGENTS_USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(`${AGENTS_USAGE}\n`);
    return 0;
  }
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json') {
    io.err('--format must be text or json');
    return 2;
  }
  const storage = values.storage ?? defaultStorageDir(io.env);
  const [verb, ...rest] = positionals;
  const json = (v: unknown) => io.out(`${JSON.stringify(v, null, 2)}\n`);
  const load = () => loadFrom(values, io);
  switch (verb) {
    case 'registry': {
      const [sub, ...words] = rest;
      if (sub !== 'list' && sub !== 'search') {
        io.err(`registry needs list or search\n\n${AGENTS_USAGE}`);
        return 2;
      }
      if (sub === 'search' && !words.length) {
        io.err('registry search needs a query');
        return 2;
      }
      const loaded = await load();
      const agents = sub === 'search' ? searchRegistry(loaded.registry.agents, words.join(' ')) : loaded.registry.agents;
      const installed = listInstalled(storage);
      const rows = agents.map((a) => row(a, installed));
      if (format === 'json') json({ source: loaded.source, from: loaded.from, ...(loaded.fallbackReason ? { fallbackReason: loaded.fallbackReason } : {}), problems: loaded.problems, agents: rows });
      else if (!rows.length) io.out(sub === 'search' ? `No agent matches "${words.join(' ')}".\n` : 'The registry lists no agents.\n');
      else
        for (const r of rows)
          io.out(
            `${r.id}  ${r.version}  [${r.kinds.join(', ')}]  ${r.name}: ${r.description}${r.installed.length ? `  (installed ${r.installed.join(', ')}${r.update ? `; update ${r.update}` : ''})` : ''}\n`,
          );
      return 0;
    }
    case 'install': {
      const id = rest[0];
      if (!id) {
        io.err(`install needs an agent id\n\n${AGENTS_USAGE}`);
        return 2;
      }
      const loaded = await load();
      const entry = findEntry(loaded, id, io);
      if (!entry) return 1;
      let preview = !!values.preview;
      if (values.version !== undefined && values.version !== entry.version) {
        if (values.version !== entry.preview?.version) {
          io.err(
            `the registry offers ${id} ${entry.version}${entry.preview ? ` (preview ${entry.preview.version})` : ''}, not ${values.version}: it pins each version's distribution, so no other version can be installed from it`,
          );
          return 1;
        }
        preview = true;
      }
      const abort = new AbortController();
      const onSigint = () => abort.abort();
      process.once('SIGINT', onSigint);
      let lastShown = -1;
      try {
        const { installed, already } = await install(entry, {
          storage,
          preview,
          signal: abort.signal,
          env: io.env,
          onProgress: (p) => {
            if (p.received === undefined) return io.err(`[${p.phase}] ${p.message}`);
            // Downloads: one line per tenth (or per 4 MiB without a length).
            const step = p.total ? Math.floor((p.received / p.total) * 10) : Math.floor(p.received / (4 << 20));
            if (step !== lastShown) io.err(`[download] ${p.message}`);
            lastShown = step;
          },
        });
        io.err(`${already ? 'Already installed' : 'Installed'}: ${installed.id} ${installed.version} (${installed.kind}) in ${installed.dir}`);
        if (format === 'json') json({ id: installed.id, version: installed.version, kind: installed.kind, dir: installed.dir, already, sha256s: installed.sha256s, config: agentConfigOf(installed) });
        else json(agentConfigOf(installed));
        return 0;
      } catch (e) {
        if (e instanceof InstallError) {
          io.err(`install of ${id} ${e.cancelled ? 'cancelled' : 'failed'} (${e.phase}): ${e.message}`);
          return e.cancelled ? 7 : 1;
        }
        io.err(`install of ${id} failed: ${(e as Error).message}`);
        return 1;
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
    }
    case 'uninstall': {
      const id = rest[0];
      if (!id) {
        io.err(`uninstall needs an agent id\n\n${AGENTS_USAGE}`);
        return 2;
      }
      const removed = uninstall(storage, id, values.version);
      if (!removed.length) {
        io.err(`${id}${values.version ? ` ${values.version}` : ''} is not installed in ${storage}`);
        return 1;
      }
      if (format === 'json') json({ id, removed });
      else io.out(`Removed ${id} ${removed.join(', ')}.\n`);
      return 0;
    }
    case 'installed': {
      const all = listInstalled(storage);
      if (format === 'json') json(all);
      else if (!all.length) io.out(`Nothing installed in ${storage}.\n`);
      else for (const i of all) io.out(`${i.id}  ${i.version}  (${i.kind}, ${i.installedAt})  ${[i.command, ...i.args].join(' ')}\n`);
      return 0;
    }
    default:
      io.err(`unknown verb "${verb ?? ''}"\n\n${AGENTS_USAGE}`);
      return 2;
  }
}

async function loadFrom(values: Values, io: AgentsIo): Promise<LoadedRegistry> {
  const loaded = await loadRegistry({ ...(values.registry ? { url: values.registry } : {}), cacheDir: values['cache-dir'] ?? defaultRegistryCacheDir(io.env) });
  if (loaded.source === 'cache' || loaded.source === 'bundled') {
    io.err(`registry: ${loaded.source === 'cache' ? 'the cached copy' : 'the bundled snapshot'} (${loaded.from})${loaded.fallbackReason ? `, because ${loaded.fallbackReason}` : ''}`);
  }
  for (const p of loaded.problems) io.err(`registry: ${p}`);
  return loaded;
}

function findEntry(loaded: LoadedRegistry, id: string, io: AgentsIo): RegistryAgent | undefined {
  const entry = loaded.registry.agents.find((a) => a.id === id);
  if (entry) return entry;
  const q = id.toLowerCase();
  const like = loaded.registry.agents.filter((a) => `${a.id} ${a.name.toLowerCase()}`.includes(q) || q.includes(a.id)).map((a) => a.id);
  io.err(`no agent "${id}" in the registry (${loaded.from})${like.length ? `; did you mean ${like.slice(0, 5).join(', ')}?` : ''}`);
  return undefined;
}

function row(a: RegistryAgent, installed: InstalledAgent[]) {
  const mine = installed.filter((i) => i.id === a.id);
  const platform = platformKey();
  const kinds = [
    ...(a.distribution.npx ? ['npx'] : []),
    ...(a.distribution.binary ? [platform && a.distribution.binary[platform] ? 'binary' : 'binary (not for this platform)'] : []),
    ...(a.distribution.uvx ? ['uvx'] : []),
  ];
  const update = updateAvailable(mine, a);
  return {
    id: a.id,
    name: a.name,
    version: a.version,
    description: a.description,
    kinds,
    ...(a.preview ? { preview: a.preview.version } : {}),
    installed: mine.map((i) => i.version),
    ...(update ? { update } : {}),
  };
}
