/**
 * The user's own MCP servers for a new agent session, read where VS Code keeps them — the profile's `mcp.json`
 * (in the user data folder), the `mcp` setting, each workspace folder's `.vscode/mcp.json` — and our
 * `agentHost.mcpServers` setting, merged by name (lowest first: the user's `mcp` setting, the user's file, the
 * workspace's `mcp` setting, the workspace folders' files, then `agentHost.mcpServers` of the user and of the
 * workspace).
 *
 * What the workspace brings (its files and its settings) runs only in a trusted workspace, and only after the
 * person allowed that exact command line in a modal; a changed command line asks again. `${input:…}` values are
 * asked once and kept in SecretStorage; `${env:…}` reads the extension host's environment.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import type { AgentConfig } from '../../session/agentConfig';
import { type McpConfig, type McpInput, type McpServerEntry, type McpSource, mcpCommandLine, mergeMcpConfigs, namedForAgent, parseMcpConfig, resolveMcpServer } from '../../session/mcpConfig';

/** globalState key of the command line the person allowed (or refused: `refused:` + line) for a workspace server. */
const APPROVAL = 'agentHost.mcp.approved';
const INPUT_SECRET = 'agentHost.mcp.input.';

interface ApprovalStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

export class McpSources {
  /** Problems already said (each once per window). */
  private readonly said = new Set<string>();

  constructor(
    /** `<user data>/User/globalStorage/<extension>`: the profile's mcp.json is `<user data>/User/mcp.json`. */
    private readonly globalStorage: string,
    private readonly approvals: ApprovalStore,
    private readonly secrets: vscode.SecretStorage,
    private readonly log: Logger,
  ) {}

  /** The profile's mcp.json (the default profile's in a user data folder). */
  get userFile(): string {
    return path.join(path.resolve(this.globalStorage, '..', '..'), 'mcp.json');
  }

  /** Every configuration, lowest precedence first, each server marked with where it came from. */
  read(): McpConfig {
    const configs: McpConfig[] = [];
    const file = (f: string, source: McpSource) => {
      if (!fs.existsSync(f)) return;
      const errors: ParseError[] = [];
      const json: unknown = parseJsonc(fs.readFileSync(f, 'utf8'), errors, { allowTrailingComma: true });
      if (errors.length) configs.push({ servers: [], inputs: [], problems: [`${f}: not valid JSON (offset ${errors[0]!.offset})`] });
      else configs.push(parseMcpConfig(json, source, f));
    };
    const setting = (section: string, key: string, what: string) => {
      const i = vscode.workspace.getConfiguration(section).inspect<unknown>(key);
      return { user: i?.globalValue, workspace: i?.workspaceValue ?? i?.workspaceFolderValue, what };
    };
    const mcp = setting('mcp', 'servers', 'the "mcp" setting');
    const ours = setting('agentHost', 'mcpServers', 'agentHost.mcpServers');
    // Newer VS Code also shows each mcp.json through the `mcp` setting: the file comes after it, so a server is named
    // by the file it is written in.
    if (mcp.user !== undefined) configs.push(parseMcpConfig({ servers: mcp.user }, 'user', `${mcp.what} (User)`));
    file(this.userFile, 'user');
    if (mcp.workspace !== undefined) configs.push(parseMcpConfig({ servers: mcp.workspace }, 'workspace', `${mcp.what} (Workspace)`));
    for (const folder of vscode.workspace.workspaceFolders ?? []) file(path.join(folder.uri.fsPath, '.vscode', 'mcp.json'), 'workspace');
    if (ours.user !== undefined) configs.push(parseMcpConfig(ours.user, 'agentHost', `${ours.what} (User)`));
    if (ours.workspace !== undefined) configs.push(parseMcpConfig(ours.workspace, 'workspace', `${ours.what} (Workspace)`));
    return mergeMcpConfigs(configs);
  }

  /**
   * The servers a new session of `agent` gets: trusted, allowed, resolved. A server left out is logged with why;
   * what the person can fix (a file that does not parse, an input not given) is also said once in a warning.
   * Nothing is asked for a server the agent will not get: one its entry's `mcpServers` leaves out, or any for an
   * agent whose protocol takes none (pi RPC, an agent service: their session only names them). A remote agent
   * (`url`) gets only the servers its entry names: a stdio server would run on its machine, with your inputs.
   */
  async servers(agent: AgentConfig): Promise<McpServerEntry[]> {
    const config = this.read();
    for (const p of config.problems) this.sayOnce(p);
    const only = agent.mcpServers ?? (agent.url ? [] : undefined);
    const wanted = config.servers.filter((s) => namedForAgent(s.name, only));
    if ((agent.protocol ?? 'acp') !== 'acp') return wanted; // named, never passed: nothing to ask or resolve
    const out: McpServerEntry[] = [];
    for (const s of wanted) {
      if (s.source === 'workspace') {
        if (!vscode.workspace.isTrusted) {
          this.log.info(`MCP server ${s.name} (${s.origin}) not passed: the workspace is not trusted`);
          continue;
        }
        if (!(await this.allowed(s))) continue;
      }
      try {
        out.push(await resolveMcpServer(s, this.variables(config.inputs, s)));
      } catch (error) {
        this.sayOnce(`${(error as Error).message} (${s.origin}): the server is not passed`);
      }
    }
    return out;
  }

  /** A workspace server runs only with the person's yes to its exact command line (asked again when it changes). */
  private async allowed(s: McpServerEntry): Promise<boolean> {
    const key = `${APPROVAL}:${s.origin}:${s.name}`;
    const line = mcpCommandLine(s);
    const before = this.approvals.get<string>(key);
    if (before === line) return true;
    if (before === `refused:${line}`) {
      this.log.info(`MCP server ${s.name} (${s.origin}) not passed: its command line was refused before`);
      return false;
    }
    const allow = vscode.l10n.t('Allow');
    const refuse = vscode.l10n.t("Don't Allow");
    const changed = before !== undefined;
    const pick = await vscode.window.showWarningMessage(
      changed
        ? vscode.l10n.t('The MCP server "{0}" of this workspace changed. Start it for the agent?', s.name)
        : vscode.l10n.t('This workspace configures the MCP server "{0}". Start it for the agent?', s.name),
      {
        modal: true,
        detail:
          s.type === 'stdio'
            ? vscode.l10n.t('This command runs with your permissions:\n\n{0}\n\nFrom {1}. Once allowed, you are asked again only if it changes.', line, s.origin)
            : vscode.l10n.t('The agent connects to:\n\n{0}\n\nFrom {1}. Once allowed, you are asked again only if it changes.', line, s.origin),
      },
      allow,
      refuse,
    );
    if (pick === allow) await this.approvals.update(key, line);
    else if (pick === refuse) await this.approvals.update(key, `refused:${line}`);
    this.log.info(`MCP server ${s.name} (${s.origin}) ${pick === allow ? 'allowed' : pick === refuse ? 'refused' : 'not answered (not passed this time)'}: ${line}`);
    return pick === allow;
  }

  /**
   * The variables of server `s`. An input is kept per id for the user's own servers, and per id and file for a
   * workspace's: a repository's server cannot ask for `${input:github-token}` and get what was typed for another.
   */
  private variables(inputs: McpInput[], s: McpServerEntry) {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const scope = s.source === 'workspace' ? `${s.origin}:` : '';
    return {
      env: (name: string) => process.env[name],
      userHome: os.homedir(),
      ...(folder ? { workspaceFolder: folder } : {}),
      input: (id: string) => this.input(inputs.find((i) => i.id === id) ?? { id, type: 'promptString' }, scope),
    };
  }

  /** An input's value: kept from an earlier answer, else asked (a password box for `password` inputs), then kept. */
  private async input(i: McpInput, scope: string): Promise<string | undefined> {
    const key = `${INPUT_SECRET}${scope}${i.id}`;
    const kept = await this.secrets.get(key);
    if (kept !== undefined) return kept;
    const value =
      i.type === 'pickString' && i.options?.length
        ? await vscode.window.showQuickPick(i.options, { title: vscode.l10n.t('MCP server input: {0}', i.id), ...(i.description ? { placeHolder: i.description } : {}), ignoreFocusOut: true })
        : await vscode.window.showInputBox({
            title: vscode.l10n.t('MCP server input: {0}', i.id),
            prompt: i.description ?? i.id,
            password: i.password === true,
            ignoreFocusOut: true,
            ...(i.default !== undefined ? { value: i.default } : {}),
          });
    if (value !== undefined) await this.secrets.store(key, value);
    return value;
  }

  private sayOnce(problem: string): void {
    this.log.warn(`MCP: ${problem}`);
    if (this.said.has(problem)) return;
    this.said.add(problem);
    void vscode.window.showWarningMessage(`Atrium: ${problem}`);
  }
}
