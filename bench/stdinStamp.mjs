#!/usr/bin/env node
// Runs an agent (argv after the first: the stamp file) with stdin, stdout and stderr passed through, and
// appends `<Date.now()> <method>` to the stamp file for every JSON-RPC request line that reaches the
// agent's stdin: when the host WROTE it, give or take a pipe hop. Used by bench/warmStart.mjs.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';

const [stampFile, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'inherit', 'inherit'] });
let buffered = '';
process.stdin.on('data', (chunk) => {
  const now = Date.now();
  child.stdin.write(chunk);
  buffered += chunk.toString('utf8');
  for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    const m = line.match(/"method"\s*:\s*"([^"]+)"/);
    if (m) fs.appendFileSync(stampFile, `${now} ${m[1]}\n`);
  }
});
process.stdin.on('end', () => child.stdin.end());
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
