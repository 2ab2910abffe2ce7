/**
 * The test agent service standalone, for runs of the CLI and the benchmark:
 *   node out/test/support/agentServiceServerMain.js [--port N] [--host 127.0.0.1] [--tls] [--chunks N] [--shuffle] …
 * prints one JSON line {url, port, tls[, fingerprint256, certificatePem]} on stdout once listening and stops on
 * SIGTERM, SIGINT or stdin's end (a parent that dies); --ignore-stdin keeps it running with stdin at /dev/null.
 */
import { parseArgs } from 'node:util';
import { type AgentServiceServerOptions, type AuthFailure, AgentServiceServer, defaultIdeCalls } from './agentServiceServer';

const USAGE = `usage: agentServiceServerMain [--port N] [--host 127.0.0.1|::1|localhost] [--tls] [--key-prefix P]
  [--auth-failure close|plain-close|terminate|http-401] [--max-connections N] [--models a,b]
  [--chunks N] [--delay MS] [--shuffle] [--drop-seq N] [--drop-after-frames N] [--no-stream] [--single-frame-stream-fields]
  [--workers N] [--task-ms MS] [--max-queue N] [--ide] [--ide-timeout-ms MS] [--verbose] [--ignore-stdin]`;

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    tls: { type: 'boolean' },
    'key-prefix': { type: 'string' },
    'auth-failure': { type: 'string' },
    'max-connections': { type: 'string' },
    models: { type: 'string' },
    chunks: { type: 'string' },
    delay: { type: 'string' },
    shuffle: { type: 'boolean' },
    'drop-seq': { type: 'string' },
    'drop-after-frames': { type: 'string' },
    'no-stream': { type: 'boolean' },
    'single-frame-stream-fields': { type: 'boolean' },
    workers: { type: 'string' },
    'task-ms': { type: 'string' },
    'max-queue': { type: 'string' },
    ide: { type: 'boolean' },
    'ide-timeout-ms': { type: 'string' },
    verbose: { type: 'boolean' },
    'ignore-stdin': { type: 'boolean' },
    help: { type: 'boolean' },
  },
});

if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

/** A non-negative integer option, or undefined when absent; anything else stops the runner with the usage. */
function count(name: keyof typeof values): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(n) || n < 0) {
    process.stderr.write(`--${name} wants a non-negative integer, not ${String(raw)}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}

const authFailure = values['auth-failure'];
if (authFailure !== undefined && !['close', 'plain-close', 'terminate', 'http-401'].includes(authFailure)) {
  process.stderr.write(`--auth-failure wants close, plain-close, terminate or http-401, not ${authFailure}\n${USAGE}\n`);
  process.exit(2);
}
const prefix = values['key-prefix'];
const options: AgentServiceServerOptions = {
  ...(values.host !== undefined && { host: values.host }),
  ...(values.tls && { tls: true }),
  ...(prefix !== undefined && { isValidKey: (key: string) => key.startsWith(prefix) }),
  ...(authFailure !== undefined && { authFailure: authFailure as AuthFailure }),
  ...(values.models !== undefined && { models: values.models.split(',') }),
  ...(values.shuffle && { shuffle: true }),
  ...(values['no-stream'] && { honourStream: false }),
  ...(values['single-frame-stream-fields'] && { singleFrameStreamFields: true }),
  ...(values.ide && { ideCalls: defaultIdeCalls }),
  ...(values.verbose && { log: (line: string) => process.stderr.write(`${line}\n`) }),
};
for (const [flag, key] of [
  ['port', 'port'],
  ['max-connections', 'maxConnectionsPerKey'],
  ['chunks', 'chunks'],
  ['delay', 'frameDelayMs'],
  ['drop-seq', 'dropSeq'],
  ['drop-after-frames', 'dropAfterFrames'],
  ['workers', 'workers'],
  ['task-ms', 'taskMs'],
  ['max-queue', 'maxQueue'],
  ['ide-timeout-ms', 'ideTimeoutMs'],
] as const) {
  const n = count(flag);
  if (n !== undefined) options[key] = n;
}

void (async () => {
  const server = await AgentServiceServer.start(options);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (!values['ignore-stdin']) {
    process.stdin.on('end', stop);
    process.stdin.on('close', stop);
    process.stdin.resume();
  }
  const cert = server.certificate;
  process.stdout.write(`${JSON.stringify({ url: server.url, port: server.port, tls: cert !== undefined, ...(cert && { fingerprint256: cert.fingerprint256, certificatePem: cert.pem }) })}\n`);
})().catch((error: unknown) => {
  process.stderr.write(`agent service test server: ${(error as Error).message}\n`);
  process.exit(1);
});
