// The "Machine:" line every bench writes into bench/RESULTS.md: cores and CPU model, memory, OS, Node.
import * as os from 'node:os';

/** `2 × AMD EPYC, 24 GiB, linux 6.1.0, Node v20.20.2`, then `rest` (", headless Chromium…" or "; shared…"). */
export function machine(rest = '') {
  const cpu = os.cpus();
  return `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type().toLowerCase()} ${os.release()}, Node ${process.version}${rest}`;
}

/** "load average (1, 5, 15 min) a, b, c before the run, d, e, f after" from two os.loadavg() readings. */
export function loadLine(before, after) {
  const f = (xs) => xs.map((x) => x.toFixed(2)).join(', ');
  return `load average (1, 5, 15 min) ${f(before)} before the run, ${f(after)} after`;
}
