/**
 * The groups of processes the host starts (agents, the agent's terminal commands, install tools), and how
 * every member is found again to be ended, however it left: `setsid` (a new session and process group),
 * `env -i` (no marker variable), its parent's exit (re-parented to init).
 *
 * Linux, where the host may create cgroups under its own (cgroup v2: as root, in most containers, in a
 * systemd user scope): each group gets one, and the host steps into it for the spawn, so the leader is born
 * in it; the kernel keeps every descendant in it, and `cgroup.kill` ends them all at once. Besides, and
 * elsewhere alone: the process group; a marker variable every descendant inherits unless its environment is
 * wiped; a marker handle (the fd after its stdio, a deleted file named for the group) every descendant inherits unless it
 * closes it or is started by a program that passes only stdio (node does); and every child of a member
 * found. Without a cgroup, a process that wipes its environment, lacks the handle and loses its parent
 * before the stop escapes.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

interface Group {
  /** The value of MARKER_VAR the leader was given. */
  marker: string;
  /** What /proc shows for the marker handle (`<temp folder>/agent-host-group-… (deleted)`), where the leader got one. */
  handle?: string;
  /** When the leader started (clock ticks after boot): members start later, older processes are not searched. */
  start: number;
  /** The group's own cgroup (its directory), when the host may create them. */
  cgroup?: string;
}

/** The environment variable that carries a group's marker. */
const MARKER_VAR = 'AGENT_HOST_GROUP';
/** Every live group by its leader's pid, so nothing survives the host process going down. */
const groups = new Map<number, Group>();
/** Cgroups forgotten while their members were still dying: removed when they are empty. */
const emptying = new Set<string>();

interface Proc {
  pid: number;
  ppid: number;
  pgrp: number;
  state: string;
  start: number;
}

/** A process's `state`, parent, group and start from /proc (Linux); undefined when it is gone. */
function procStat(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp session tty tpgid flags … starttime(22nd)": comm may hold spaces and parentheses.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, state: f[0] ?? '', ppid: Number(f[1]), pgrp: Number(f[2]), start: Number(f[19]) };
  } catch {
    return undefined;
  }
}

/** Every running process (not zombies) but this one; undefined where /proc cannot be read. */
function processes(): Proc[] | undefined {
  if (process.platform !== 'linux') return undefined;
  let dirs: string[];
  try {
    dirs = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const out: Proc[] = [];
  for (const d of dirs) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    const p = procStat(Number(d));
    if (p && p.state !== 'Z' && p.state !== 'X') out.push(p);
  }
  return out;
}

/** Whether a process has `target` open (its descriptors' links in /proc). */
function holds(pid: number, target: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === target;
      } catch {
        return false; // closed meanwhile
      }
    });
  } catch {
    return false; // gone, or another user's
  }
}

function carriesMarker(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`${MARKER_VAR}=${marker}\0`);
  } catch {
    return false;
  }
}

/** The group's running members (never this process) by every signal above; undefined where /proc is not available. */
function members(pgid: number): number[] | undefined {
  const table = processes();
  if (!table) return undefined;
  const g = groups.get(pgid);
  const running = new Set(table.map((p) => p.pid));
  const found = new Set((g?.cgroup ? cgroupPids(g.cgroup) : []).filter((pid) => running.has(pid)));
  for (const p of table) {
    if (p.pgrp === pgid) found.add(p.pid);
    else if (g && p.start >= g.start && (carriesMarker(p.pid, g.marker) || (g.handle !== undefined && holds(p.pid, g.handle)))) found.add(p.pid);
  }
  const children = new Map<number, number[]>();
  for (const p of table) {
    const siblings = children.get(p.ppid);
    if (siblings) siblings.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  // A Set visits what is added while it is iterated: children of children too.
  for (const pid of found) for (const child of children.get(pid) ?? []) found.add(child);
  return [...found];
}

// ------------------------------------------------------------------------------------------------ cgroups

/** This process's cgroup v2 directory, where group cgroups are made; null where there is none or it is not ours. */
let cgroupHome: string | null | undefined;

function findCgroupHome(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    const own = /^0::(\/.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
    // mountinfo: "id parent dev root mountpoint options … - fstype source …"
    const mount = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .find((f) => f[f.indexOf('-') + 1] === 'cgroup2');
    const [root, point] = [mount?.[3], mount?.[4]];
    if (own === undefined || !root || !point || !own.startsWith(root)) return null;
    const home = path.join(point, own.slice(root.length));
    sweepStaleCgroups(home);
    // One probe: making a cgroup may be allowed where moving into it is not.
    const probe = path.join(home, `agent-host.${process.pid}.0`);
    mkdirSync(probe);
    const moved = enter(probe);
    const back = enter(home);
    removeCgroup(probe);
    return moved && back ? home : null;
  } catch {
    return null;
  }
}

/** Groups of an earlier host that died before it could end them (SIGKILLed, crashed): their members end now. */
function sweepStaleCgroups(home: string): void {
  for (const name of readdirSync(home)) {
    const host = Number(/^agent-host\.(\d+)\.[0-9a-f]+$/.exec(name)?.[1]);
    if (!host || host === process.pid || running(host)) continue;
    killCgroup(path.join(home, name));
    removeCgroup(path.join(home, name));
  }
}

/** A new, empty cgroup for a group about to start; undefined where the host may not make one. */
function newCgroup(): string | undefined {
  if (process.env.AGENT_HOST_CGROUP === 'off') return undefined;
  if (cgroupHome === undefined) cgroupHome = findCgroupHome();
  if (!cgroupHome) return undefined;
  for (const dir of emptying) removeCgroup(dir);
  const dir = path.join(cgroupHome, `agent-host.${process.pid}.${randomBytes(6).toString('hex')}`);
  try {
    mkdirSync(dir);
    return dir;
  } catch {
    cgroupHome = null; // no longer ours to make cgroups in: the other signals alone, from now on
    return undefined;
  }
}

/** Moves this process into the cgroup `dir`. */
function enter(dir: string): boolean {
  try {
    writeFileSync(path.join(dir, 'cgroup.procs'), String(process.pid));
    return true;
  } catch {
    return false;
  }
}

function cgroupPids(dir: string): number[] {
  try {
    return readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** SIGKILL to every process in the cgroup at once (`cgroup.kill`, Linux 5.14+); false where it cannot, or would hit this process. */
function killCgroup(dir: string): boolean {
  if (cgroupPids(dir).includes(process.pid)) return false;
  try {
    writeFileSync(path.join(dir, 'cgroup.kill'), '1');
    return true;
  } catch {
    return false;
  }
}

/** Removes the cgroup, or keeps it to remove once its members are gone. */
function removeCgroup(dir: string): void {
  try {
    rmdirSync(dir);
    emptying.delete(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') emptying.delete(dir);
    else emptying.add(dir);
  }
}

// ------------------------------------------------------------------------------------------------ groups

let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pid of groups.keys()) killGroup(pid, 'SIGKILL');
    for (const g of groups.values()) if (g.cgroup) removeCgroup(g.cgroup);
    for (const dir of emptying) removeCgroup(dir);
  });
}

/** A handle for the group's marker: an fd on a new file, deleted at once (its name stays in /proc), or undefined. */
function markerHandle(marker: string): { fd: number; target: string } | undefined {
  const file = path.join(os.tmpdir(), `agent-host-group-${marker}`);
  try {
    const fd = openSync(file, 'wx', 0o600);
    unlinkSync(file);
    return { fd, target: `${file} (deleted)` };
  } catch {
    return undefined;
  }
}

/**
 * The one way to start a child the host owns (agents, the agent's terminal commands): without a shell of the
 * agent's, in its own process group (and cgroup where the host may), with the markers above, known to the
 * exit hook so the group is SIGKILLed if the host goes down first.
 */
export function spawnInGroup(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; stdio: StdioOptions }): ChildProcess {
  installExitHook();
  const linux = process.platform === 'linux';
  const marker = randomBytes(9).toString('base64url');
  const env = { ...options.env, [MARKER_VAR]: marker };
  const handle = linux && Array.isArray(options.stdio) && options.stdio.length >= 3 ? markerHandle(marker) : undefined;
  const stdio = handle ? [...(options.stdio as unknown[]), handle.fd] : options.stdio;
  let cgroup = linux ? newCgroup() : undefined;
  const home = cgroupHome;
  let child: ChildProcess;
  try {
    // The host steps into the group's cgroup for the spawn alone: one synchronous call, no other spawn of this
    // thread between (a worker thread's spawn in that instant would land there too).
    if (cgroup && !enter(cgroup)) {
      removeCgroup(cgroup);
      cgroup = undefined;
    }
    child = spawn(command, args, { cwd: options.cwd, env, stdio: stdio as StdioOptions, detached: true, shell: false, windowsHide: true });
  } catch (error) {
    if (cgroup && home) enter(home);
    if (cgroup) removeCgroup(cgroup);
    cgroup = undefined;
    throw error;
  } finally {
    // Stuck in the group's cgroup, the host would share its members' end: no more cgroups (and killCgroup spares it).
    if (cgroup && home && !enter(home)) cgroupHome = null;
    if (handle) closeSync(handle.fd);
  }
  const pid = child.pid;
  if (pid !== undefined) {
    groups.set(pid, { marker, start: procStat(pid)?.start ?? 0, ...(handle ? { handle: handle.target } : {}), ...(cgroup ? { cgroup } : {}) });
  } else if (cgroup) removeCgroup(cgroup);
  return child;
}

/** The group's cgroup (its directory), or undefined when its members are found by the other signals alone. */
export function groupCgroup(pid: number): string | undefined {
  return groups.get(pid)?.cgroup;
}

/** The group is done with (killed and reaped by its owner): the exit hook no longer needs to know it. */
export function forgetGroup(pid: number): void {
  const g = groups.get(pid);
  groups.delete(pid);
  if (g?.cgroup) removeCgroup(g.cgroup);
}

/** Signals the group and every member that left it (see the top of this file). */
export function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  let any = false;
  try {
    process.kill(-pid, signal);
    any = true;
  } catch {
    /* the group is empty */
  }
  const cgroup = groups.get(pid)?.cgroup;
  if (signal === 'SIGKILL' && cgroup && cgroupPids(cgroup).length && killCgroup(cgroup)) any = true;
  for (const member of members(pid) ?? []) {
    try {
      process.kill(member, signal);
      any = true;
    } catch {
      /* gone meanwhile */
    }
  }
  return any;
}

/**
 * Whether any member is still running. Zombies count as gone: in containers whose init never reaps,
 * orphans stay zombies forever but no longer run.
 */
export function groupAlive(pgid: number): boolean {
  const found = members(pgid);
  if (found) return found.length > 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether a process exists (another user's too). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a process exists and is not a zombie. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const st = process.platform === 'linux' ? procStat(pid) : { state: 'R' };
  return st !== undefined && st.state !== 'Z' && st.state !== 'X';
}
