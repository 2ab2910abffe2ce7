/**
 * Throughput of one prompt turn that streams N `session/update` chunks, through:
 *   ours — Atrium's AcpClient (vscode-jsonrpc + our NDJSON reader) applying updates to the SessionModel;
 *   sdk  — the official @agentclientprotocol/sdk client (`client().connectWith(ndJsonStream(…))`),
 *          applying the same updates to the same SessionModel.
 *   client — AcpClient alone (updates received, not applied: what the client itself costs);
 *   raw  — the floor: a line split on the agent's stdout and `JSON.parse` per line, answering the three
 *          requests by hand, applying nothing.
 * The agent is test/fixtures/hostileAgent.js in `flood` mode. Prints one JSON line:
 *   {"impl","chunks","ms","rssMiB","chars"}
 * Usage: node out/bench/flood.js ours|client|sdk|raw [chunks]
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

async function clientOnly(): Promise<number> {
  let chars = 0;
  const client = AcpClient.spawn(
    { command: process.execPath, args: [agentJs, 'flood', String(chunks)], cwd: process.cwd() },
    { logger: silentLogger, handlers: { requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }) } },
  );
  client.onSessionUpdate((n) => {
    const u = n.update as { content?: { text?: string } };
    chars += u.content?.text?.length ?? 0;
  });
  await client.initialize({});
  const s = await client.newSession(process.cwd());
  await client.prompt(s.sessionId, [{ type: 'text', text: 'go' }]);
  await client.shutdown();
  return chars;
}

/** The floor: split lines, JSON.parse each, answer by hand. */
function raw(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [agentJs, 'flood', String(chunks)], { stdio: ['pipe', 'pipe', 'inherit'] });
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    let chars = 0;
    let rest = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (data: string) => {
      const lines = (rest + data).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        if (!line) continue;
        const m = JSON.parse(line) as { id?: number; method?: string; result?: { sessionId?: string; stopReason?: string }; params?: { update?: { content?: { text?: string } } } };
        if (m.method === 'session/update') chars += m.params?.update?.content?.text?.length ?? 0;
        else if (m.id === 1) send({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: process.cwd(), mcpServers: [] } });
        else if (m.id === 2) send({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId: m.result!.sessionId, prompt: [{ type: 'text', text: 'go' }] } });
        else if (m.id === 3) child.stdin.end();
      }
    });
    child.once('exit', () => resolve(chars));
    child.once('error', reject);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } });
  });
}

async function sdk(model: SessionModel): Promise<void> {
  const acp = await import('@agentclientprotocol/sdk');
  const child = spawn(process.execPath, [agentJs, 'flood', String(chunks)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>);
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
  let counted: number | undefined;
  if (impl === 'ours') await ours(model);
  else if (impl === 'sdk') await sdk(model);
  else if (impl === 'client') counted = await clientOnly();
  else if (impl === 'raw') counted = await raw();
  else throw new Error(`unknown impl ${impl}`);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const chars = counted ?? model.messages('agent').reduce((n, m) => n + m.text.length, 0);
  process.stdout.write(`${JSON.stringify({ impl, chunks, ms: Math.round(ms), rssMiB: Math.round(process.resourceUsage().maxRSS / 1024), chars })}\n`);
}

void main();
