/**
 * The ACP registry: the bundled snapshot parses whole, bad entries are reported and skipped, the
 * distribution picked per platform, search, and loading through a real HTTP server on 127.0.0.1 with the
 * ETag cache (200 → network, 304 → cache, server down → cache, no cache → the bundled snapshot).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { bundledRegistryPath, distributionFor, loadRegistry, parseRegistry, platformKey, searchRegistry, type RegistryAgent } from '../../src/agents/registry';
import { repoRoot, scratchDir } from '../support/paths';

const SNAPSHOT = path.join(repoRoot, 'resources', 'acp-registry', 'registry.json');
/** The folder the snapshot was built from, when a developer points at it (scripts/build-registry-snapshot.mjs). */
const SOURCE = process.env.ACP_REGISTRY_SOURCE;
const SNAPSHOT_IDS = ['agentao', 'auggie', 'claude-acp', 'claude-code-acp', 'codex-acp', 'factory-droid', 'gemini', 'github-copilot', 'kimi', 'mistral-vibe', 'opencode', 'qoder', 'qwen-code'];

const snapshot = () => parseRegistry(fs.readFileSync(SNAPSHOT, 'utf8'));
const agent = (id: string): RegistryAgent => snapshot().registry.agents.find((a) => a.id === id)!;
const scratch: string[] = [];
after(() => {
  for (const d of scratch) fs.rmSync(d, { recursive: true, force: true });
});

describe('registry: parsing', () => {
  test('the bundled snapshot holds every agent entry, each valid', () => {
    const { registry, problems } = snapshot();
    assert.deepEqual(problems, []);
    assert.deepEqual(
      registry.agents.map((a) => a.id),
      SNAPSHOT_IDS,
    );
    assert.equal(bundledRegistryPath(), SNAPSHOT, 'found from out/src/agents the way dist/ finds it');
    // With the source folder at hand (ACP_REGISTRY_SOURCE), the snapshot must be an exact copy of it.
    if (SOURCE) {
      const raw = JSON.parse(fs.readFileSync(SNAPSHOT, 'utf8')) as { agents: { id: string }[] };
      const files = fs.readdirSync(SOURCE).filter((f) => f.endsWith('.json') && !f.startsWith('_'));
      assert.equal(files.length, raw.agents.length);
      for (const f of files) {
        const entry = JSON.parse(fs.readFileSync(path.join(SOURCE, f), 'utf8')) as { id: string };
        assert.deepEqual(
          raw.agents.find((a) => a.id === entry.id),
          entry,
          f,
        );
      }
    }
    const claude = registry.agents.find((a) => a.id === 'claude-acp')!;
    assert.equal(claude.preview?.version, '0.85.2-preview.22');
    assert.deepEqual(registry.agents.find((a) => a.id === 'factory-droid')!.distribution.binary?.['linux-x86_64']?.args, ['exec', '--output-format', 'acp']);
  });

  test('malformed entries are reported and skipped; the good ones stay', () => {
    const good = { id: 'good', name: 'Good', version: '1.0.0', description: 'fine', distribution: { npx: { package: 'good@1.0.0' } } };
    const { registry, problems } = parseRegistry(
      JSON.stringify({
        version: '1.0.0',
        agents: [
          good,
          { id: 'noname', version: '1.0.0', description: 'x', distribution: { npx: { package: 'x' } } },
          { ...good, id: 'badplatform', distribution: { binary: { 'plan9-mips': { archive: 'https://x/a.tgz', cmd: './a' } } } },
          { ...good, id: 'nocmd', distribution: { binary: { 'linux-x86_64': { archive: 'https://x/a.tgz' } } } },
          { ...good, id: 'Bad_Id' },
          { ...good, id: 'kind', distribution: { docker: { image: 'x' } } },
          { ...good, id: 'badsha', distribution: { binary: { 'linux-x86_64': { archive: 'https://x/a.tgz', cmd: './a', sha256: 'abc' } } } },
          good,
          'not an object',
        ],
        extensions: [],
      }),
    );
    assert.deepEqual(
      registry.agents.map((a) => a.id),
      ['good'],
    );
    assert.equal(problems.length, 8, problems.join('\n'));
    assert.match(problems[0]!, /agents\[1\] "noname": "name" must be a non-empty string/);
    assert.match(problems[1]!, /unknown platform "plan9-mips"/);
    assert.match(problems[2]!, /linux-x86_64\.cmd must be a non-empty string/);
    assert.match(problems[3]!, /"id" must be lowercase/);
    assert.match(problems[4]!, /unknown kind "docker"/);
    assert.match(problems[5]!, /sha256 must be 64 hex digits/);
    assert.match(problems[6]!, /duplicate id/);
    assert.match(problems[7]!, /agents\[8\]: expected an object/);
    assert.throws(() => parseRegistry('{"version": "1.0.0"'), /not JSON/);
    assert.throws(() => parseRegistry({ version: '1.0.0' }), /no "agents" list/);
  });
});

describe('registry: platforms and distributions', () => {
  test('platformKey maps Node names onto the registry keys', () => {
    assert.equal(platformKey('linux', 'x64'), 'linux-x86_64');
    assert.equal(platformKey('darwin', 'arm64'), 'darwin-aarch64');
    assert.equal(platformKey('win32', 'x64'), 'windows-x86_64');
    assert.equal(platformKey('linux', 'arm64'), 'linux-aarch64');
    assert.equal(platformKey('freebsd', 'x64'), undefined);
    assert.equal(platformKey('linux', 'ia32'), undefined);
  });

  test('distributionFor: npx, this platform’s binary, uvx; preview only on request', () => {
    const codex = distributionFor(agent('codex-acp'), 'linux-x86_64');
    assert.equal(codex.kind, 'binary');
    assert.equal(codex.kind === 'binary' && codex.binary.archive, 'https://github.com/zed-industries/codex-acp/releases/download/v0.9.2/codex-acp-0.9.2-x86_64-unknown-linux-gnu.tar.gz');
    const win = distributionFor(agent('codex-acp'), 'windows-x86_64');
    assert.equal(win.kind === 'binary' && win.binary.cmd, './codex-acp.exe');
    assert.throws(() => distributionFor(agent('kimi'), 'darwin-x86_64'), /kimi 1\.9\.0 has no build for darwin-x86_64 \(binaries for: darwin-aarch64, linux-aarch64, linux-x86_64, windows-x86_64\)/);
    const claude = distributionFor(agent('claude-acp'), 'linux-x86_64');
    assert.deepEqual(claude, { kind: 'npx', version: '0.85.1', npx: { package: '@agentclientprotocol/claude-agent-acp@0.85.1' } });
    const preview = distributionFor(agent('claude-acp'), 'linux-x86_64', { preview: true });
    assert.equal(preview.version, '0.85.2-preview.22');
    assert.equal(preview.kind === 'npx' && preview.npx.package, '@agentclientprotocol/claude-agent-acp@0.85.2-preview.22');
    assert.throws(() => distributionFor(agent('gemini'), 'linux-x86_64', { preview: true }), /gemini has no preview version/);
    assert.deepEqual(distributionFor(agent('agentao'), undefined), { kind: 'uvx', version: '0.5.10', uvx: { package: 'agentao@0.5.10', args: ['--acp'] } });
    // Both offered: npx wins over a binary.
    const both: RegistryAgent = { ...agent('gemini'), distribution: { ...agent('gemini').distribution, binary: agent('codex-acp').distribution.binary! } };
    assert.equal(distributionFor(both, 'linux-x86_64').kind, 'npx');
  });

  test('search matches every word over id, name and description; id/name hits first', () => {
    const agents = snapshot().registry.agents;
    assert.deepEqual(
      searchRegistry(agents, 'claude').map((a) => a.id),
      ['claude-acp', 'claude-code-acp'],
    );
    assert.deepEqual(
      searchRegistry(agents, 'coding assistant').map((a) => a.id),
      ['codex-acp', 'kimi', 'mistral-vibe', 'qoder', 'qwen-code'],
    );
    // "open" is in opencode's id (rank 2) and in codex-acp's description ("OpenAI", rank 1).
    assert.deepEqual(
      searchRegistry(agents, 'open')
        .map((a) => a.id)
        .slice(0, 2),
      ['opencode', 'codex-acp'],
    );
    assert.deepEqual(searchRegistry(agents, 'nothing-like-this'), []);
    assert.equal(searchRegistry(agents, '  ').length, agents.length);
  });
});

describe('registry: loading with the ETag cache', () => {
  const body = (version: string) =>
    JSON.stringify({ version: '1.0.0', agents: [{ id: 'served', name: 'Served', version, description: 'from the server', distribution: { npx: { package: `served@${version}` } } }], extensions: [] });
  const seen: { ifNoneMatch: string | undefined }[] = [];
  let current = { etag: '"v1"', body: body('1.0.0') };
  let status = 0;
  const server = http.createServer((req, res) => {
    seen.push({ ifNoneMatch: req.headers['if-none-match'] });
    if (status) {
      res.writeHead(status).end('broken');
    } else if (req.headers['if-none-match'] === current.etag) {
      res.writeHead(304, { etag: current.etag }).end();
    } else {
      res.writeHead(200, { 'content-type': 'application/json', etag: current.etag }).end(current.body);
    }
  });

  test('200 → network (and cached); 304 → cache; new ETag → network; an HTTP error or the server down → cache; no cache → bundled', async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/registry.json`;
    const cacheDir = scratchDir('registry-cache');
    scratch.push(cacheDir);

    const first = await loadRegistry({ url, cacheDir });
    assert.equal(first.source, 'network');
    assert.deepEqual(
      first.registry.agents.map((a) => [a.id, a.version]),
      [['served', '1.0.0']],
    );
    assert.equal(seen.at(-1)!.ifNoneMatch, undefined);

    const second = await loadRegistry({ url, cacheDir });
    assert.equal(seen.at(-1)!.ifNoneMatch, '"v1"', 'the cached ETag was sent');
    assert.equal(second.source, 'cache');
    assert.equal(second.fallbackReason, undefined, 'a 304 is no fallback');
    assert.deepEqual(
      second.registry.agents.map((a) => a.version),
      ['1.0.0'],
    );

    current = { etag: '"v2"', body: body('2.0.0') };
    const third = await loadRegistry({ url, cacheDir });
    assert.equal(third.source, 'network');
    assert.deepEqual(
      third.registry.agents.map((a) => a.version),
      ['2.0.0'],
    );

    status = 500;
    const broken = await loadRegistry({ url, cacheDir });
    assert.equal(broken.source, 'cache');
    assert.match(broken.fallbackReason!, /answered HTTP 500/);
    assert.deepEqual(
      broken.registry.agents.map((a) => a.version),
      ['2.0.0'],
      'the newest cached copy',
    );

    status = 200; // answers 200 with a body that is no registry: not cached over the good copy
    const garbage = await loadRegistry({ url, cacheDir });
    assert.equal(garbage.source, 'cache');
    assert.match(garbage.fallbackReason!, /not JSON/);
    status = 0;

    await new Promise<void>((r) => server.close(() => r()));
    const down = await loadRegistry({ url, cacheDir });
    assert.equal(down.source, 'cache');
    assert.match(down.fallbackReason!, /ECONNREFUSED|fetch failed/);
    assert.deepEqual(
      down.registry.agents.map((a) => a.version),
      ['2.0.0'],
    );

    const emptyCache = scratchDir('registry-nocache');
    scratch.push(emptyCache);
    const bundled = await loadRegistry({ url, cacheDir: emptyCache });
    assert.equal(bundled.source, 'bundled');
    assert.equal(bundled.from, SNAPSHOT);
    assert.deepEqual(
      bundled.registry.agents.map((a) => a.id),
      SNAPSHOT_IDS,
    );
  });

  test('a file path is read as is (no cache involved)', async () => {
    const dir = scratchDir('registry-file');
    scratch.push(dir);
    const file = path.join(dir, 'mine.json');
    fs.writeFileSync(file, body('3.1.4'));
    const loaded = await loadRegistry({ url: file, cacheDir: path.join(dir, 'cache') });
    assert.equal(loaded.source, 'file');
    assert.deepEqual(
      loaded.registry.agents.map((a) => a.version),
      ['3.1.4'],
    );
    assert.equal(fs.existsSync(path.join(dir, 'cache')), false);
    await assert.rejects(loadRegistry({ url: path.join(dir, 'missing.json'), cacheDir: dir }), /ENOENT/);
  });
});
