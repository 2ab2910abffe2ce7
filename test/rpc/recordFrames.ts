/**
 * Records the frames one real turn produces (a file write through a tool call) from pi 0.73.1 and
 * omp 18.2.3 against the scripted model, as the NDJSON fixtures the frame mapper's unit test replays
 * (test/fixtures/rpc-frames/). Machine paths become placeholders and long strings are trimmed.
 * Run: npx tsc -p . && node out/test/rpc/recordFrames.js
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RpcSession } from '../../src/rpc/rpcSession';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { repoRoot } from '../support/paths';
import { memoryLogger, OMP_RPC, PI_RPC, scratchDirs, type RpcAgentFixture } from './agents';

const OUT_DIR = path.join(repoRoot, 'test', 'fixtures', 'rpc-frames');
const MAX_STRING = 400;

/** Replaces machine paths with placeholders and trims long strings, recursively. */
function sanitize(value: unknown, paths: [string, string][]): unknown {
  if (typeof value === 'string') {
    let s = value;
    for (const [from, to] of paths) s = s.split(from).join(to);
    return s.length > MAX_STRING ? `${s.slice(0, MAX_STRING)}…` : s;
  }
  if (Array.isArray(value)) return value.map((v) => sanitize(v, paths));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, sanitize(v, paths)]));
  }
  return value;
}

async function record(agent: RpcAgentFixture): Promise<void> {
  if (!agent.installed()) throw new Error(`${agent.label} is not installed`);
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchDirs(`rpc-record-${agent.id}`);
  const base = path.dirname(workspace);
  const frames: Record<string, unknown>[] = [];
  let recording = false;
  const config = agent.prepare({ scratch, modelUrl: model.url, workspace, args: ['--no-session'] });
  const session = await RpcSession.start(config, {
    logger: memoryLogger(),
    cwd: workspace,
    requestTimeoutMs: 30_000,
    frameTap: (direction, frame) => {
      const f = frame as Record<string, unknown>;
      // Events only: responses belong to the transport, sub-protocol frames to their own handlers.
      if (recording && direction === 'in' && f.type !== 'response' && f.type !== 'extension_ui_request') frames.push(f);
    },
  });
  try {
    recording = true;
    // A relative path: streamed argument deltas split it anywhere, where no placeholder could find it.
    const result = await session.prompt([{ type: 'text', text: `Write it.\nSCENARIO: write {"path":"note.txt","content":"hello from ${agent.id}"}` }]);
    recording = false;
    if (result.stopReason !== 'end_turn') throw new Error(`${agent.id}: the turn ended ${result.stopReason}`);
  } finally {
    await session.shutdown();
    await model.close();
  }
  const paths: [string, string][] = [
    [workspace, '<workspace>'],
    [base, '<scratch>'],
    [model.url, '<model-url>'],
  ];
  const lines = frames.map((f) => JSON.stringify(sanitize(f, paths)));
  const leak = lines.find((l) => l.includes(path.basename(base)) || l.includes(repoRoot));
  if (leak) throw new Error(`${agent.id}: a machine path survived sanitizing: ${leak.slice(0, 300)}`);
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const out = path.join(OUT_DIR, `${agent.id}-write-turn.ndjson`);
  fs.writeFileSync(out, `${lines.join('\n')}\n`);
  fs.rmSync(base, { recursive: true, force: true });
  process.stdout.write(`${out}: ${lines.length} frames\n`);
}

async function main(): Promise<void> {
  for (const agent of [PI_RPC, OMP_RPC]) await record(agent);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
