/**
 * The installer with real parts: archives built with the system `tar` and served by a local HTTP server on
 * 127.0.0.1, installed into a temporary storage, and the installed command run. Refusals (a wrong sha256,
 * a recorded checksum that no longer matches, a cmd leading out of the folder, a cancelled download, no
 * uvx) must leave nothing installed.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { compareVersions, install, InstallError, listInstalled, uninstall, updateAvailable, type InstallProgress } from '../../src/agents/installer';
import type { BinaryTarget, RegistryAgent } from '../../src/agents/registry';
import { scratchDir } from '../support/paths';

const PLATFORM = 'linux-x86_64' as const;
const root = scratchDir('installer');
const files = new Map<string, Buffer>();
/** Paths whose answer sends the first bytes of a long body, then stalls (for cancel). */
const stalling = new Set<string>();
const server = http.createServer((req, res) => {
  const url = req.url ?? '';
  if (url.startsWith('/moved/')) return void res.writeHead(302, { location: url.slice('/moved'.length) }).end();
  if (stalling.has(url)) {
    res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
    res.write(Buffer.alloc(64 * 1024, 1));
    return; // never ends: the client must cancel
  }
  const body = files.get(url);
  if (!body) return void res.writeHead(404).end('not found');
  res.writeHead(200, { 'content-length': String(body.length) }).end(body);
});
let base = '';

before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  fs.rmSync(root, { recursive: true, force: true });
});

/** A .tar.gz holding an executable shell script `agent` that prints `greeting` and its arguments. */
function agentArchive(greeting: string): Buffer {
  const dir = fs.mkdtempSync(path.join(root, 'pack-'));
  fs.writeFileSync(path.join(dir, 'agent'), `#!/bin/sh\necho "${greeting} $*"\n`, { mode: 0o755 });
  execFileSync('tar', ['-czf', path.join(dir, 'out.tar.gz'), '-C', dir, 'agent']);
  return fs.readFileSync(path.join(dir, 'out.tar.gz'));
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function binaryEntry(id: string, target: Omit<BinaryTarget, 'archive'> & { archive: string }, version = '1.2.3'): RegistryAgent {
  return { id, name: `Agent ${id}`, version, description: 'a test agent', distribution: { binary: { [PLATFORM]: target } } };
}

/** What is left of an agent in the storage: version folders, staging folders, downloads. */
const leftovers = (storage: string, id: string) => (fs.existsSync(path.join(storage, id)) ? fs.readdirSync(path.join(storage, id)) : []);

async function refused(p: Promise<unknown>, phase: InstallError['phase'], message: RegExp): Promise<InstallError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof InstallError, `an InstallError, got ${String(e)}`);
    assert.equal(e.phase, phase, e.message);
    assert.match(e.message, message);
    return e;
  }
  assert.fail('the install was not refused');
}

describe('installer: binary entries', () => {
  test('a .tar.gz through a redirect: installed, recorded, the command runs; installing again is a no-op', async () => {
    const archive = agentArchive('hello from the agent');
    files.set('/v1/agent.tar.gz', archive);
    const storage = path.join(root, 'ok');
    const progress: InstallProgress[] = [];
    const entry = binaryEntry('shell-agent', { archive: `${base}/moved/v1/agent.tar.gz`, cmd: './agent', args: ['--acp'], env: { A: '1' } });
    const { installed, already } = await install(entry, { storage, platform: PLATFORM, onProgress: (p) => progress.push(p) });
    assert.equal(already, false);
    const dir = path.join(storage, 'shell-agent', '1.2.3');
    assert.equal(installed.dir, dir);
    assert.equal(installed.command, path.join(dir, 'agent'));
    assert.deepEqual(installed.args, ['--acp']);
    assert.deepEqual(installed.env, { A: '1' });
    assert.equal(installed.sha256s.archive, sha(archive));
    assert.equal(execFileSync(installed.command, installed.args, { encoding: 'utf8' }), 'hello from the agent --acp\n');
    assert.equal((fs.statSync(installed.command).mode & 0o777).toString(8), '755');
    const record = JSON.parse(fs.readFileSync(path.join(dir, 'install.json'), 'utf8')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(record).sort(), ['args', 'command', 'env', 'id', 'installedAt', 'kind', 'name', 'sha256s', 'version']);
    assert.equal(record.kind, 'binary');
    assert.deepEqual(leftovers(storage, 'shell-agent'), ['1.2.3'], 'no staging folder or download left');
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(storage, 'checksums.json'), 'utf8')), { [`shell-agent@1.2.3/${PLATFORM}`]: sha(archive) });
    assert.ok(progress.some((p) => p.phase === 'download' && p.received === archive.length && p.total === archive.length));
    assert.ok(progress.some((p) => p.phase === 'extract'));

    files.delete('/v1/agent.tar.gz'); // a second install must not even download
    const again = await install(entry, { storage, platform: PLATFORM });
    assert.equal(again.already, true);
    assert.equal(again.installed.installedAt, installed.installedAt);
  });

  test('an archive that does not match the entry’s sha256 is refused and nothing is installed', async () => {
    const archive = agentArchive('tampered');
    files.set('/v2/agent.tar.gz', archive);
    const storage = path.join(root, 'badsha');
    const wrong = 'f'.repeat(64);
    const entry = binaryEntry('checked', { archive: `${base}/v2/agent.tar.gz`, cmd: './agent', sha256: wrong });
    await refused(install(entry, { storage, platform: PLATFORM }), 'verify', new RegExp(`sha256 ${sha(archive)} does not match ${wrong}, which the registry entry gives`));
    assert.deepEqual(leftovers(storage, 'checked'), []);
    assert.deepEqual(listInstalled(storage), []);
    assert.equal(fs.existsSync(path.join(storage, 'checksums.json')), false, 'a refused archive is not recorded');
    // The right checksum installs.
    const ok = await install(binaryEntry('checked', { archive: `${base}/v2/agent.tar.gz`, cmd: './agent', sha256: sha(archive) }), { storage, platform: PLATFORM });
    assert.equal(execFileSync(ok.installed.command, { encoding: 'utf8' }), 'tampered \n');
  });

  test('on re-install, the checksum recorded at the first install must match', async () => {
    const storage = path.join(root, 'recorded');
    const first = agentArchive('first build');
    files.set('/v3/agent.tar.gz', first);
    const entry = binaryEntry('pinned', { archive: `${base}/v3/agent.tar.gz`, cmd: './agent' });
    await install(entry, { storage, platform: PLATFORM });
    assert.deepEqual(uninstall(storage, 'pinned'), ['1.2.3']);
    // The same bytes again: fine.
    assert.equal((await install(entry, { storage, platform: PLATFORM })).already, false);
    assert.deepEqual(uninstall(storage, 'pinned', '1.2.3'), ['1.2.3']);
    // Different bytes under the same id and version: refused, nothing left.
    files.set('/v3/agent.tar.gz', agentArchive('swapped build'));
    await refused(install(entry, { storage, platform: PLATFORM }), 'verify', /does not match [0-9a-f]{64}, which was recorded at the first install of pinned@1\.2\.3\/linux-x86_64/);
    assert.deepEqual(leftovers(storage, 'pinned'), []);
    assert.equal(JSON.parse(fs.readFileSync(path.join(storage, 'checksums.json'), 'utf8'))[`pinned@1.2.3/${PLATFORM}`], sha(first));
  });

  test('a cmd leading out of the install folder is refused', async () => {
    files.set('/v4/agent.tar.gz', agentArchive('escape'));
    const storage = path.join(root, 'escape');
    await refused(install(binaryEntry('escaper', { archive: `${base}/v4/agent.tar.gz`, cmd: '../x' }), { storage, platform: PLATFORM }), 'resolve', /cmd "\.\.\/x" points outside the install folder/);
    await refused(install(binaryEntry('escaper', { archive: `${base}/v4/agent.tar.gz`, cmd: '/bin/sh' }), { storage, platform: PLATFORM }), 'resolve', /points outside/);
    await refused(install(binaryEntry('escaper', { archive: `${base}/v4/agent.tar.gz`, cmd: './missing' }), { storage, platform: PLATFORM }), 'resolve', /"\.\/missing" does not exist/);
    // A raw binary is copied as its cmd, which must stay inside too.
    files.set('/raw/agent', Buffer.from('#!/bin/sh\necho raw "$@"\n'));
    await refused(install(binaryEntry('escaper', { archive: `${base}/raw/agent`, cmd: '../../agent' }), { storage, platform: PLATFORM }), 'resolve', /points outside/);
    assert.deepEqual(leftovers(storage, 'escaper'), []);
    const raw = await install(binaryEntry('raw', { archive: `${base}/raw/agent`, cmd: './bin/agent' }), { storage, platform: PLATFORM });
    assert.equal(execFileSync(raw.installed.command, ['x'], { encoding: 'utf8' }), 'raw x\n');
  });

  test('cancelling mid-download leaves nothing installed', async () => {
    stalling.add('/slow/agent.tar.gz');
    const storage = path.join(root, 'cancel');
    const abort = new AbortController();
    let received = 0;
    const error = await refused(
      install(binaryEntry('slow', { archive: `${base}/slow/agent.tar.gz`, cmd: './agent' }), {
        storage,
        platform: PLATFORM,
        signal: abort.signal,
        onProgress: (p) => {
          if (p.received === undefined) return;
          received = p.received;
          abort.abort();
        },
      }),
      'download',
      /cancelled/,
    );
    assert.equal(error.cancelled, true);
    assert.ok(received > 0, 'the download had started');
    assert.deepEqual(leftovers(storage, 'slow'), []);
    assert.deepEqual(listInstalled(storage), []);
  });

  test('a .zip without unzip on PATH says so; an HTTP 404 is a download error', async () => {
    const storage = path.join(root, 'zip');
    files.set('/z/agent.zip', Buffer.from('PK not really'));
    const empty = fs.mkdtempSync(path.join(root, 'emptypath-'));
    await refused(
      install(binaryEntry('zipped', { archive: `${base}/z/agent.zip`, cmd: './agent' }), { storage, platform: PLATFORM, env: { PATH: empty } }),
      'extract',
      new RegExp(`"unzip" was not found on PATH \\(${empty}\\)`),
    );
    await refused(install(binaryEntry('gone', { archive: `${base}/nothing.tar.gz`, cmd: './agent' }), { storage, platform: PLATFORM }), 'download', /answered HTTP 404/);
    assert.deepEqual([...leftovers(storage, 'zipped'), ...leftovers(storage, 'gone')], []);
  });
});

/**
 * A fake `npm` (the only one on PATH) that records its argv, one JSON line per run, and installs a package
 * of each spec's name with a JavaScript bin: what the installer does with npm's answer is real.
 */
function fakeNpm(): { bin: string; runs: () => string[][] } {
  const bin = fs.mkdtempSync(path.join(root, 'npmbin-'));
  const log = path.join(bin, 'argv.ndjson');
  const script = `#!${process.execPath}
const fs = require('node:fs'), path = require('node:path');
const argv = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(argv) + '\\n');
for (const spec of argv.slice(argv.indexOf('--') + 1)) {
  const name = spec.slice(0, spec.lastIndexOf('@'));
  const dir = path.join(argv[argv.indexOf('--prefix') + 1], 'node_modules', ...name.split('/'));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, bin: 'cli.js' }));
  fs.writeFileSync(path.join(dir, 'cli.js'), '#!/usr/bin/env node\\n');
}
`;
  fs.writeFileSync(path.join(bin, 'npm'), script, { mode: 0o755 });
  const runs = () =>
    fs.existsSync(log)
      ? fs
          .readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as string[])
      : [];
  return { bin, runs };
}

describe('installer: npm entries', () => {
  const npxEntry = (id: string, pkg: string): RegistryAgent => ({ id, name: `Agent ${id}`, version: '1.0.0', description: 'npm', distribution: { npx: { package: pkg } } });

  test('a package that is not a name with a version (an option, a URL, a path, a git spec) is refused before npm runs', async () => {
    const storage = path.join(root, 'npm-bad');
    const npm = fakeNpm();
    const hostile = [
      '--foo=bar@1.0.0',
      '-g',
      '--global',
      'https://evil.example/x.tgz',
      '../x',
      './x@1.0.0',
      'x@github:evil/x',
      'x@file:../y',
      'x@npm:other@1',
      'x@https://evil.example/x.tgz',
      '@scope/../x@1',
      'x@',
    ];
    for (const pkg of hostile) {
      const id = `bad-${hostile.indexOf(pkg)}`;
      const quoted = pkg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      await refused(
        install(npxEntry(id, pkg), { storage, env: { PATH: npm.bin } }),
        'resolve',
        new RegExp(`^the npm package "${quoted}" is refused: .*\\(expected name@1\\.2\\.3, @scope/name@\\^1; no options, URLs, paths or git specs\\); nothing was run$`),
      );
      assert.deepEqual(leftovers(storage, id), []);
    }
    assert.deepEqual(npm.runs(), [], 'npm ran');
    // uvx's package is checked the same way (uv would read an option too).
    fs.writeFileSync(path.join(npm.bin, 'uvx'), '#!/bin/sh\n', { mode: 0o755 });
    const uvxEntry: RegistryAgent = { id: 'bad-uv', name: 'uv', version: '1.0.0', description: 'uv', distribution: { uvx: { package: '--with=evil@1.0.0' } } };
    await refused(install(uvxEntry, { storage, env: { PATH: npm.bin } }), 'resolve', /^the PyPI package "--with=evil@1\.0\.0" is refused: "--with=evil" is not a valid PyPI package name/);
    assert.deepEqual(listInstalled(storage), []);
  });

  test('a name with a version, a range or none reaches npm after "--", pinned to the entry version when it names none', async () => {
    const storage = path.join(root, 'npm-good');
    const npm = fakeNpm();
    const good = ['@agentclientprotocol/claude-agent-acp@0.85.1', 'opencode-ai@^1.2', 'plain', 'ranged@>=1.2 <2', 'tagged@latest'];
    for (const pkg of good) await install(npxEntry(`good-${good.indexOf(pkg)}`, pkg), { storage, env: { PATH: npm.bin } });
    assert.deepEqual(
      npm.runs().map((argv) => [argv.slice(0, 1), argv.slice(3)]),
      ['@agentclientprotocol/claude-agent-acp@0.85.1', 'opencode-ai@^1.2', 'plain@1.0.0', 'ranged@>=1.2 <2', 'tagged@latest'].map((spec) => [['install'], ['--no-audit', '--no-fund', '--', spec]]),
    );
    assert.equal(listInstalled(storage).length, good.length);
  });
});

describe('installer: an npm agent with the program it starts (pi-acp with pi)', () => {
  const piAcp: RegistryAgent = { id: 'pi-acp', name: 'pi (ACP)', version: '0.0.24', description: 'npm', distribution: { npx: { package: 'pi-acp@0.0.24' } } };
  const pi = { package: '@mariozechner/pi-coding-agent', version: '0.73.1', bin: 'pi', env: 'PI_ACP_PI_COMMAND' };

  test('both are installed pinned in one npm run, and the agent is told where its program is', async () => {
    const storage = path.join(root, 'companion');
    const npm = fakeNpm();
    const { installed, already } = await install(piAcp, { storage, env: { PATH: npm.bin }, with: [pi] });
    assert.equal(already, false);
    assert.deepEqual(npm.runs()[0]!.slice(-3), ['--', 'pi-acp@0.0.24', '@mariozechner/pi-coding-agent@0.73.1']);
    const piFile = path.join(storage, 'pi-acp', '0.0.24', 'node_modules', '@mariozechner', 'pi-coding-agent', 'cli.js');
    assert.deepEqual(installed.env, { PI_ACP_PI_COMMAND: piFile });
    fs.accessSync(piFile, fs.constants.X_OK);
    assert.deepEqual(Object.keys(installed.sha256s).sort(), ['node_modules/@mariozechner/pi-coding-agent/cli.js', 'node_modules/pi-acp/cli.js']);
    assert.deepEqual(listInstalled(storage)[0]!.env, installed.env, 'install.json does not keep where pi is');
  });

  test('an earlier install of that version without the program is replaced; a complete one is kept', async () => {
    const storage = path.join(root, 'companion-old');
    const npm = fakeNpm();
    await install(piAcp, { storage, env: { PATH: npm.bin } });
    const again = await install(piAcp, { storage, env: { PATH: npm.bin }, with: [pi] });
    assert.equal(again.already, false, 'the install without pi was reused');
    assert.match(again.installed.env.PI_ACP_PI_COMMAND ?? '', /pi-coding-agent\/cli\.js$/);
    assert.deepEqual(leftovers(storage, 'pi-acp'), ['0.0.24'], 'the replaced install or the staging folder is left');
    assert.equal((await install(piAcp, { storage, env: { PATH: npm.bin }, with: [pi] })).already, true);
    assert.equal(npm.runs().length, 2);
  });
});

describe('installer: uvx, listing, updates', () => {
  const agentao: RegistryAgent = { id: 'agentao', name: 'Agentao', version: '0.5.10', description: 'uv', distribution: { uvx: { package: 'agentao@0.5.10', args: ['--acp'] } } };

  test('uvx missing → an error that says to install uv and names the PATH searched; present → run by uvx', async () => {
    const storage = path.join(root, 'uvx');
    const empty = fs.mkdtempSync(path.join(root, 'nouv-'));
    await refused(install(agentao, { storage, env: { PATH: empty } }), 'resolve', new RegExp(`uvx, which was not found on PATH \\(${empty}\\); install uv \\(https://docs\\.astral\\.sh/uv/\\)`));
    assert.deepEqual(leftovers(storage, 'agentao'), []);
    const bin = fs.mkdtempSync(path.join(root, 'uvbin-'));
    fs.writeFileSync(path.join(bin, 'uvx'), '#!/bin/sh\necho uvx "$@"\n', { mode: 0o755 });
    const { installed } = await install(agentao, { storage, env: { PATH: `${empty}${path.delimiter}${bin}` } });
    assert.equal(installed.command, path.join(bin, 'uvx'));
    assert.deepEqual(installed.args, ['agentao@0.5.10', '--acp']);
    assert.equal(execFileSync(installed.command, installed.args, { encoding: 'utf8' }), 'uvx agentao@0.5.10 --acp\n');
    assert.deepEqual(
      listInstalled(storage).map((i) => [i.id, i.version, i.kind]),
      [['agentao', '0.5.10', 'uvx']],
    );
  });

  test('listInstalled, uninstall and updateAvailable', async () => {
    const storage = path.join(root, 'list');
    const bin = fs.mkdtempSync(path.join(root, 'uvbin-'));
    fs.writeFileSync(path.join(bin, 'uvx'), '#!/bin/sh\n', { mode: 0o755 });
    const env = { PATH: bin };
    const at = (version: string): RegistryAgent => ({ ...agentao, version, distribution: { uvx: { package: 'agentao' } } });
    await install(at('0.5.9'), { storage, env });
    await install(at('0.5.10'), { storage, env });
    const all = listInstalled(storage);
    assert.deepEqual(
      all.map((i) => i.version),
      ['0.5.10', '0.5.9'],
      'newest first (numerically)',
    );
    assert.deepEqual(all[0]!.args, ['agentao@0.5.10'], 'the version is pinned when the package names none');
    assert.equal(updateAvailable(all, at('0.5.10')), undefined);
    assert.equal(updateAvailable(all, at('0.6.0')), '0.6.0');
    assert.equal(updateAvailable(all, at('0.5.9')), undefined);
    assert.equal(updateAvailable([], at('9.9.9')), undefined, 'nothing installed: no update');
    assert.deepEqual(uninstall(storage, 'agentao', '0.5.9'), ['0.5.9']);
    assert.deepEqual(uninstall(storage, 'agentao', '0.5.9'), []);
    assert.deepEqual(uninstall(storage, 'agentao'), ['0.5.10']);
    assert.equal(fs.existsSync(path.join(storage, 'agentao')), false);
    assert.equal(compareVersions('1.10.0', '1.9.9'), 1);
    assert.equal(compareVersions('0.85.2-preview.22', '0.85.2'), -1);
    assert.equal(compareVersions('0.85.2-preview.22', '0.85.1'), 1);
    assert.equal(compareVersions('0.85.2-preview.10', '0.85.2-preview.9'), 1);
  });

  test('a version that cannot name a folder is refused', async () => {
    await refused(install({ ...agentao, version: '1.0.0/../../etc' }, { storage: path.join(root, 'v') }), 'resolve', /cannot name a folder/);
  });
});
