/**
 * The registry verbs through the built CLI (dist/cli.js): list and search a registry file, install a
 * binary agent served from 127.0.0.1 (the config on stdout is what `agentHost.agents` takes), the errors a
 * person meets (an unknown id, a version the registry does not pin, a missing argument).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { platformKey } from '../../src/agents/registry';
import { runCli } from '../support/cli';
import { scratchDir } from '../support/paths';

const root = scratchDir('agents-cli');
const registryFile = path.join(root, 'registry.json');
const storage = path.join(root, 'storage');
let archive = Buffer.alloc(0);
const server = http.createServer((req, res) => {
  if (req.url === '/tiny.tar.gz') res.writeHead(200, { 'content-length': String(archive.length) }).end(archive);
  else res.writeHead(404).end();
});

before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pack = path.join(root, 'pack');
  fs.mkdirSync(pack);
  fs.writeFileSync(path.join(pack, 'tiny'), '#!/bin/sh\necho "tiny agent $*"\n', { mode: 0o755 });
  execFileSync('tar', ['-czf', path.join(root, 'tiny.tar.gz'), '-C', pack, 'tiny']);
  archive = fs.readFileSync(path.join(root, 'tiny.tar.gz'));
  const here = platformKey() ?? 'linux-x86_64';
  fs.writeFileSync(
    registryFile,
    JSON.stringify({
      version: '1.0.0',
      agents: [
        { id: 'tiny', name: 'Tiny', version: '2.0.0', description: 'A tiny shell agent', distribution: { binary: { [here]: { archive: `${base}/tiny.tar.gz`, cmd: './tiny', args: ['acp'] } } } },
        { id: 'other', name: 'Other', version: '1.0.0', description: 'Not tiny at all', distribution: { npx: { package: 'other@1.0.0' } } },
        { id: 'broken', version: '1.0.0' },
      ],
      extensions: [],
    }),
  );
});
after(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  fs.rmSync(root, { recursive: true, force: true });
});

describe('CLI: registry, install, installed, uninstall', () => {
  test('registry list and search (text and JSON); a bad entry is reported on stderr', async () => {
    const list = await runCli(['registry', 'list', '--registry', registryFile, '--storage', storage], root);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^tiny {2}2\.0\.0 {2}\[binary\] {2}Tiny: A tiny shell agent\n/m);
    assert.match(list.stdout, /^other {2}1\.0\.0 {2}\[npx\]/m);
    assert.match(list.stderr, /registry: skipped agents\[2\] "broken": "name" must be a non-empty string/);
    const search = await runCli(['registry', 'search', 'TINY', '--registry', registryFile, '--format', 'json'], root);
    assert.equal(search.code, 0, search.stderr);
    const found = JSON.parse(search.stdout) as { source: string; agents: { id: string }[] };
    assert.equal(found.source, 'file');
    assert.deepEqual(
      found.agents.map((a) => a.id),
      ['tiny', 'other'],
      'name hit first, then the description hit',
    );
    assert.equal((await runCli(['registry', 'search', '--registry', registryFile], root)).code, 2);
  });

  test('install prints the agent config; it runs; installed lists it, list marks it; uninstall removes it', async () => {
    const r = await runCli(['install', 'tiny', '--registry', registryFile, '--storage', storage], root);
    assert.equal(r.code, 0, r.stderr);
    const dir = path.join(storage, 'tiny', '2.0.0');
    assert.deepEqual(JSON.parse(r.stdout), { name: 'Tiny', command: path.join(dir, 'tiny'), args: ['acp'], env: {} });
    assert.match(r.stderr, /\[download\] \d+ of \d+ bytes/);
    assert.match(r.stderr, /Installed: tiny 2\.0\.0 \(binary\) in /);
    assert.equal(execFileSync(path.join(dir, 'tiny'), ['acp'], { encoding: 'utf8' }), 'tiny agent acp\n');
    const installed = await runCli(['installed', '--storage', storage], root);
    assert.match(installed.stdout, new RegExp(`^tiny {2}2\\.0\\.0 {2}\\(binary, [^)]+\\) {2}${dir}/tiny acp$`, 'm'));
    const list = await runCli(['registry', 'list', '--registry', registryFile, '--storage', storage, '--format', 'json'], root);
    const tiny = (JSON.parse(list.stdout) as { agents: { id: string; installed: string[] }[] }).agents.find((a) => a.id === 'tiny');
    assert.deepEqual(tiny?.installed, ['2.0.0']);
    const removed = await runCli(['uninstall', 'tiny', '--storage', storage], root);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.stdout, 'Removed tiny 2.0.0.\n');
    assert.equal(fs.existsSync(dir), false);
  });

  test('an unknown id suggests near ones; a version the registry does not pin is refused; usage errors exit 2', async () => {
    const unknown = await runCli(['install', 'tin', '--registry', registryFile, '--storage', storage], root);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no agent "tin" in the registry \(.*\); did you mean tiny\?/);
    const version = await runCli(['install', 'tiny', '--version', '1.0.0', '--registry', registryFile, '--storage', storage], root);
    assert.equal(version.code, 1);
    assert.match(version.stderr, /the registry offers tiny 2\.0\.0, not 1\.0\.0/);
    assert.equal((await runCli(['install', '--storage', storage], root)).code, 2);
    assert.equal((await runCli(['registry', 'show'], root)).code, 2);
    assert.equal((await runCli(['installed', '--format', 'yaml'], root)).code, 2);
    assert.equal(fs.existsSync(path.join(storage, 'tiny')), false);
  });
});
