/**
 * The agents of `npm start`, printed as one JSON list for scripts/lib/demo-agent.sh: the default first, then
 * every other agent setup installed, each against the same scripted demo model ("<id> (demo model)").
 * - With ANTHROPIC_API_KEY in the environment: Claude Code (claude-agent-acp) against the real model.
 * - Otherwise: opencode against the scripted demo model, started here in the background on 127.0.0.1
 *   (its pid is appended to $DEMO_SCRATCH/pids so start.sh stops it), clearly labelled "demo model"; its
 *   greeting's example writes into $DEMO_WORKSPACE.
 * Usage: node out/test/agents/demoAgent.js   (env: DEMO_SCRATCH, DEMO_WORKSPACE)
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENTS, type AgentFixture, agentById } from './catalog';

const scratch = process.env.DEMO_SCRATCH;
const workspace = process.env.DEMO_WORKSPACE;

function fail(message: string): never {
  process.stderr.write(`demo-agent: ${message}\n`);
  process.exit(1);
}

/** Starts the scripted model detached (it outlives this script) and returns its URL. */
async function startModel(dir: string): Promise<string> {
  const log = path.join(dir, 'model-server.log');
  const out = fs.openSync(log, 'w');
  // The workspace: the model's greeting shows a write there, ready to send.
  const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'src', 'scriptedModel', 'main.js'), '--port', '0', '--workspace', workspace!], {
    detached: true,
    stdio: ['ignore', out, out],
  });
  fs.appendFileSync(path.join(dir, 'pids'), `${child.pid}\n`);
  child.unref();
  for (let i = 0; i < 100; i++) {
    const m = /\{"url":"([^"]+)"\}/.exec(fs.readFileSync(log, 'utf8'));
    if (m?.[1]) return m[1];
    await new Promise((r) => setTimeout(r, 50));
  }
  fail(`the scripted model did not start (see ${log})`);
}

/** An installed catalog agent against the demo's scripted model, as a settings entry "<id> (demo model)". */
async function demoEntry(agent: AgentFixture, url: string): Promise<object> {
  const spec = await agent.prepare({ scratch: path.join(scratch!, agent.id), modelUrl: url, workspace: workspace! });
  return { name: `${agent.id} (demo model)`, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false, protocol: 'acp' };
}

/** Every other installed agent of the catalog: ready presets in the picker. */
async function others(url: string, except: string): Promise<object[]> {
  const list: object[] = [];
  for (const agent of AGENTS) if (agent.id !== except && agent.installed()) list.push(await demoEntry(agent, url));
  return list;
}

async function main(): Promise<void> {
  if (!scratch || !workspace) fail('DEMO_SCRATCH and DEMO_WORKSPACE must be set');
  fs.mkdirSync(scratch, { recursive: true });
  const url = await startModel(scratch);
  if (process.env.ANTHROPIC_API_KEY) {
    const claude = path.join(path.dirname(__dirname), '..', '..', '.tools', 'agents', 'claude', 'node_modules', '.bin', 'claude-agent-acp');
    const first = { name: 'Claude Code', command: claude, args: [], env: {}, protocol: 'acp' };
    process.stdout.write(`${JSON.stringify([first, ...(await others(url, 'claude'))])}\n`);
    return;
  }
  const agent = agentById('opencode');
  if (!agent?.installed()) fail('opencode is not installed: run scripts/setup-agents.sh opencode');
  process.stdout.write(`${JSON.stringify([await demoEntry(agent, url), ...(await others(url, 'opencode'))])}\n`);
}

void main();
