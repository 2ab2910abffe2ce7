/**
 * One prompt turn streaming N `agent_message_chunk` updates through our AcpClient applying them to a
 * SessionModel, over the transport named: `stdio` spawns test/fixtures/hostileAgent.js flood itself; a
 * `ws://` or `http://` URL reaches the same agent behind the SDK's reference server (bench/remoteStream.mjs
 * runs it), with the token in BENCH_TOKEN. Prints one JSON line: {"transport","chunks","ms","rssMiB","cpuMs","chars"}.
 * Usage: node out/bench/remoteFlood.js stdio|URL [chunks]
 */
import * as path from 'node:path';
import { AcpClient, type AcpClientOptions } from '../src/acp/acpClient';
import { applyAcpUpdate } from '../src/acp/applyUpdate';
import { connectRemote } from '../src/acp/remoteAcp';
import { silentLogger } from '../src/core/log';
import { SessionModel } from '../src/session/sessionModel';

const target = process.argv[2] ?? 'stdio';
const chunks = Number(process.argv[3] ?? 100_000);
const agentJs = path.resolve(__dirname, '..', 'test', 'fixtures', 'hostileAgent.js');

async function main(): Promise<void> {
  const model = new SessionModel('bench');
  const options: AcpClientOptions = { logger: silentLogger, handlers: { requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }) } };
  const t0 = process.hrtime.bigint();
  const client =
    target === 'stdio'
      ? AcpClient.spawn({ command: process.execPath, args: [agentJs, 'flood', String(chunks)], cwd: process.cwd() }, options)
      : new AcpClient(await connectRemote({ name: 'bench', command: target, url: target }, { logger: silentLogger, cwd: process.cwd(), apiKey: process.env.BENCH_TOKEN ?? '' }), options);
  client.onSessionUpdate((n) => applyAcpUpdate(model, n.update));
  await client.initialize({});
  const s = await client.newSession(process.cwd());
  await client.prompt(s.sessionId, [{ type: 'text', text: 'go' }]);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await client.shutdown();
  const chars = model.messages('agent').reduce((n, m) => n + m.text.length, 0);
  const transport = target === 'stdio' ? 'stdio' : new URL(target).protocol.replace(':', '');
  process.stdout.write(
    `${JSON.stringify({ transport, chunks, ms: Math.round(ms), rssMiB: Math.round(process.resourceUsage().maxRSS / 1024), cpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000), chars })}\n`,
  );
}

void main();
