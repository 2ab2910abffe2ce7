/**
 * Process bookkeeping for the code-server runner (Linux /proc): find every process a run started, including
 * agents that the extension spawned into process groups of their own, and end them all.
 */
import * as fs from 'node:fs';

interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
}

function readStat(pid: number): ProcInfo | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp …" — comm may contain spaces and parentheses: split after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(rest[1]), pgid: Number(rest[2]) };
  } catch {
    return undefined;
  }
}

function allProcs(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const info = readStat(Number(name));
    if (info) out.push(info);
  }
  return out;
}

/** `root` and every process below it (by parent pid), plus every member of their process groups. */
export function processTree(root: number): number[] {
  const procs = allProcs();
  const byParent = new Map<number, number[]>();
  for (const p of procs) {
    const list = byParent.get(p.ppid) ?? [];
    list.push(p.pid);
    byParent.set(p.ppid, list);
  }
  const found = new Set<number>();
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    if (found.has(pid)) continue;
    found.add(pid);
    stack.push(...(byParent.get(pid) ?? []));
  }
  const groups = new Set(procs.filter((p) => found.has(p.pid)).map((p) => p.pgid));
  groups.add(root);
  groups.delete(readStat(process.pid)?.pgid ?? -1); // never the runner's own group
  for (const p of procs) if (groups.has(p.pgid)) found.add(p.pid);
  return [...found].filter((pid) => pid > 1 && pid !== process.pid);
}

/** Pids whose command line contains `needle` (e.g. a run's unique browser profile folder). */
export function pidsWithArg(needle: string): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmdline.includes(needle)) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out.filter((pid) => pid !== process.pid);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signal(pids: Iterable<number>, sig: NodeJS.Signals): void {
  for (const pid of pids) {
    const info = readStat(pid);
    try {
      // The whole group when the process leads one (code-server, chromium, agents), else the process.
      if (info && info.pgid === pid) process.kill(-pid, sig);
      else process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM every process in the trees of `roots`, then SIGKILL what is left after `graceMs`. */
export async function killTrees(roots: number[], graceMs = 3000): Promise<void> {
  const pids = new Set<number>();
  for (const root of roots) if (isAlive(root)) for (const pid of processTree(root)) pids.add(pid);
  if (pids.size === 0) return;
  signal(pids, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && [...pids].some(isAlive)) await new Promise((r) => setTimeout(r, 100));
  // Children may have appeared (or been re-parented) meanwhile: take the trees again.
  for (const root of roots) if (isAlive(root)) for (const pid of processTree(root)) pids.add(pid);
  signal([...pids].filter(isAlive), 'SIGKILL');
}

/** Synchronous last resort for exit handlers: SIGKILL the trees now. */
export function killTreesNow(roots: number[]): void {
  const pids = new Set<number>();
  for (const root of roots) if (isAlive(root)) for (const pid of processTree(root)) pids.add(pid);
  signal(pids, 'SIGKILL');
}
