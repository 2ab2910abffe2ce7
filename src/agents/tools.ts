/**
 * The external tools an install runs (npm, tar, unzip): started through the host's one spawning helper
 * (own process group), output read line by line, the last lines kept for the error, cancellable.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { forgetGroup, killGroup, spawnInGroup } from '../core/agentProcess';

export interface ToolResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last 40 lines of stdout and stderr. */
  tail: string;
}

/** Runs `command` to its end; rejects only when it cannot start. An abort ends its whole group (TERM, then KILL after 2 s). */
export function runTool(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; signal?: AbortSignal; onLine?: (line: string) => void }): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawnInGroup(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const take = (stream: NodeJS.ReadableStream) => {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const l of lines) line(l);
      });
      stream.on('end', () => rest && line(rest));
    };
    const line = (l: string) => {
      const text = l.replace(/\r$/, '');
      if (!text.trim()) return;
      tail.push(text);
      if (tail.length > 40) tail.shift();
      opts.onLine?.(text);
    };
    take(child.stdout!);
    take(child.stderr!);
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      if (child.pid === undefined) return;
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => child.pid !== undefined && killGroup(child.pid, 'SIGKILL'), 2000);
    };
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (child.pid !== undefined) forgetGroup(child.pid);
      reject(e);
    });
    child.on('close', (code, signal) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      // What the tool left running in its group (npm's scripts) goes with it.
      if (child.pid !== undefined) {
        killGroup(child.pid, 'SIGKILL');
        forgetGroup(child.pid);
      }
      resolve({ code, signal, tail: tail.join('\n') });
    });
  });
}

/** The first executable `name` on the PATH of `env` (with Windows' extensions), or undefined. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) return candidate;
      } catch {
        /* next */
      }
    }
  }
  return undefined;
}
