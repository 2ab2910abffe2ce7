/**
 * Throughput of one prompt turn that streams N `session/update` chunks, through:
 *   ours — Agent Host's AcpClient (vscode-jsonrpc + our NDJSON reader) applying updates to the SessionModel;
 *   sdk  — the official @agentclientprotocol/sdk client (`client().connectWith(ndJsonStream(…))`),
 *          applying the same updates to the same SessionModel.
 * The agent is test/fixtures/hostileAgent.js in `flood` mode. Prints one JSON line:
 *   {"impl","chunks","ms","rssMiB","chars"}
 * Usage: node out/bench/flood.js ours|sdk [chunks]
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { AcpClient } from '../src/acp/acpClient';
import { applyAcpUpdate } from '../src/acp/applyUpdate';
import type { SessionNotification } from '../src/acp/types';
import { silentLogger } from '../src/core/log';
import { SessionModel } from '../src/session/sessionModel';

const impl = process.argv[2] ?? 'ours';
const chunks = Number(process.argv[3] ?? 100_000);
const agentJs = path.resolve(__dirname, '..', 'test', 'fixtures', 'hostileAgent.js');

async function ours(model: SessionModel): Promise<void> {
  const client = AcpClient.spawn(
    { command: process.execPath, args: [agentJs, 'flood', String(chunks)], cwd: process.cwd() },
    { logger: silentLogger, handlers: { requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }) } },
  );
  client.onSessionUpdate((n) => applyAcpUpdate(model, n.update));
  await client.initialize({});
  const s = await client.newSession(process.cwd());
  await client.prompt(s.sessionId, [{ type: 'text', text: 'go' }]);
  await client.shutdown();
}

async function sdk(model: SessionModel): Promise<void> {
  const acp = await import('@agentclientprotocol/sdk');
  const child = spawn(process.execPath, [agentJs, 'flood', String(chunks)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
  );
  await acp
    .client()
    .onNotification('session/update', (cx: { params: SessionNotification }) => applyAcpUpdate(model, cx.params.update))
    .connectWith(stream, async (cx) => {
      await cx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const s = await cx.request('session/new', { cwd: process.cwd(), mcpServers: [] });
      await cx.request('session/prompt', { sessionId: s.sessionId, prompt: [{ type: 'text', text: 'go' }] });
    });
  child.stdin.end();
  await new Promise((r) => child.once('exit', r));
}

async function main(): Promise<void> {
  const model = new SessionModel('bench');
  const t0 = process.hrtime.bigint();
  if (impl === 'ours') await ours(model);
  else if (impl === 'sdk') await sdk(model);
  else throw new Error(`unknown impl ${impl}`);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const chars = model.messages('agent').reduce((n, m) => n + m.text.length, 0);
  process.stdout.write(`${JSON.stringify({ impl, chunks, ms: Math.round(ms), rssMiB: Math.round(process.resourceUsage().maxRSS / 1024), chars })}\n`);
}

void main();
