// The extension host's V8, from outside: SIGUSR1 opens Node's inspector in a running process (no launch flag, so the
// workbench runs as a user's would), its port is found among the process's own listening sockets (/proc), and the
// DevTools protocol then forces a collection, reads the heap used and writes heap snapshots.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const WebSocket = require('ws');

/** TCP ports `pid` listens on: its socket inodes matched against /proc/net/tcp{,6} rows in state LISTEN (0A). */
function listeningPorts(pid) {
  const inodes = new Set();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const row of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = row.trim().split(/\s+/);
      if (f[3] === '0A' && inodes.has(f[9])) ports.push(Number.parseInt(f[1].split(':')[1], 16));
    }
  }
  return ports;
}

/** The inspector's websocket URL of `pid`, opening the inspector first (SIGUSR1) when it is not open yet. */
async function debuggerUrl(pid, timeoutMs) {
  const before = new Set(listeningPorts(pid));
  process.kill(pid, 'SIGUSR1');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const port of new Set([...listeningPorts(pid), ...before])) {
      const list = await fetch(`http://127.0.0.1:${port}/json/list`)
        .then((r) => r.json())
        .catch(() => undefined);
      const url = Array.isArray(list) ? list.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl : undefined;
      if (url) return url;
    }
    if (Date.now() > deadline) throw new Error(`no inspector on process ${pid} within ${timeoutMs} ms of SIGUSR1 (is port 9229 taken?)`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A DevTools protocol client of process `pid`'s V8. */
export async function inspectProcess(pid, { timeoutMs = 15_000 } = {}) {
  const ws = new WebSocket(await debuggerUrl(pid, timeoutMs), { perMessageDeflate: false, maxPayload: 2 ** 31 });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let next = 1;
  const pending = new Map();
  const listeners = new Map();
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString());
    if (msg.id !== undefined) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(`${msg.error.message} (${msg.error.code})`));
      else p?.resolve(msg.result);
    } else listeners.get(msg.method)?.(msg.params);
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  return {
    send,
    /** process.memoryUsage() after a full collection, in bytes: heapUsed is the data, heapTotal what V8 keeps, external and arrayBuffers outside its heap. */
    async memoryAfterGc() {
      await send('HeapProfiler.collectGarbage');
      const { result } = await send('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
      return JSON.parse(result.value);
    },
    /** Writes a .heapsnapshot (taking one collects garbage first). */
    async snapshot(file) {
      const out = fs.openSync(file, 'w');
      listeners.set('HeapProfiler.addHeapSnapshotChunk', ({ chunk }) => fs.writeSync(out, chunk));
      try {
        await send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      } finally {
        listeners.delete('HeapProfiler.addHeapSnapshotChunk');
        fs.closeSync(out);
      }
    },
    /** Starts the sampling heap profiler, garbage included: what is allocated, not only what stays. */
    startAllocations: () => send('HeapProfiler.startSampling', { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }),
    /** The sampled allocations since startAllocations(), as a tree of call frames with selfSize in bytes. */
    stopAllocations: async () => (await send('HeapProfiler.stopSampling')).profile,
    close: () => ws.close(),
  };
}
