/**
 * Fast checks of the real-agent catalog (test/agents/catalog.ts): prepare() keeps everything under the
 * scratch folder, never passes the caller's credentials through, and configures each agent to ask before
 * writes and shell commands. Needs no installed agent.
 */
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AGENTS, agentsRoot } from '../agents/catalog';

const MODEL_URL = 'http://127.0.0.1:45678';
const STATE_VARS = ['HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME', 'XDG_RUNTIME_DIR', 'TMPDIR', 'CODEX_HOME', 'CLAUDE_CONFIG_DIR', 'PI_CODING_AGENT_DIR'];
const SECRETS = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'OPENAI_BASE_URL', 'CODEX_HOME'];

describe('agent catalog', () => {
  let root: string;
  const saved: Record<string, string | undefined> = {};

  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'agents-catalog-'));
    for (const k of SECRETS) {
      saved[k] = process.env[k];
      process.env[k] = `REAL-${k}`;
    }
  });
  after(() => {
    for (const k of SECRETS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('ids are unique and the expected agents are listed', () => {
    const ids = AGENTS.map((a) => a.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ['opencode', 'codex', 'claude', 'gemini', 'qwen', 'pi-acp']) assert.ok(ids.includes(id), id);
    assert.ok(path.isAbsolute(agentsRoot()));
    assert.ok(agentsRoot().endsWith(path.join('.tools', 'agents')));
  });

  for (const agent of AGENTS) {
    test(`${agent.id}: prepare() stays inside scratch and leaks no credentials`, async () => {
      const scratch = path.join(root, agent.id);
      const workspace = path.join(scratch, 'ws');
      fs.mkdirSync(workspace, { recursive: true });
      const spec = await agent.prepare({ scratch, modelUrl: MODEL_URL, workspace });

      assert.equal(agent.protocol, 'acp');
      assert.ok(path.isAbsolute(spec.command), spec.command);
      for (const a of spec.args) if (a.includes('/')) assert.ok(path.isAbsolute(a), a);
      if (agent.installed()) assert.ok(fs.existsSync(spec.command), spec.command);

      for (const k of STATE_VARS) {
        const v = spec.env[k];
        if (v === undefined) continue;
        assert.ok(v === scratch || v.startsWith(scratch + path.sep), `${k}=${v} is outside scratch`);
      }
      assert.ok(spec.env.HOME?.startsWith(scratch), 'HOME must be in scratch');
      assert.ok(spec.env.TMPDIR?.startsWith(scratch), 'TMPDIR must be in scratch');
      for (const [k, v] of Object.entries(spec.env)) {
        assert.ok(!v.startsWith('REAL-'), `${k} leaked from the caller's environment`);
      }
      // Whatever the agent points at the model, it is our server.
      const urls = Object.entries(spec.env).filter(([k]) => /BASE_URL$/.test(k));
      for (const [k, v] of urls) assert.ok(v.startsWith(MODEL_URL), `${k}=${v}`);
    });
  }

  test('each agent is configured to ask before writes and shell commands', async () => {
    const prep = async (id: string) => {
      const agent = AGENTS.find((a) => a.id === id)!;
      const scratch = path.join(root, `perm-${id}`);
      fs.mkdirSync(path.join(scratch, 'ws'), { recursive: true });
      return { scratch, spec: await agent.prepare({ scratch, modelUrl: MODEL_URL, workspace: path.join(scratch, 'ws') }) };
    };

    const oc = await prep('opencode');
    const ocConfig = JSON.parse(fs.readFileSync(path.join(oc.spec.env.XDG_CONFIG_HOME!, 'opencode', 'opencode.json'), 'utf8'));
    // What makes each agent ask is the preset's own args/env (src/agents/presets.ts), launched as shipped.
    const ocPermission = JSON.parse(oc.spec.env.OPENCODE_PERMISSION!);
    assert.equal(ocPermission.edit, 'ask');
    assert.equal(ocPermission.bash, 'ask');
    assert.equal(ocConfig.permission, undefined, 'the permission config belongs to the preset, not to the scripted setup');
    assert.equal(ocConfig.provider.scripted.options.baseURL, `${MODEL_URL}/v1`);

    const cx = await prep('codex');
    const toml = fs.readFileSync(path.join(cx.spec.env.CODEX_HOME!, 'config.toml'), 'utf8');
    assert.deepEqual(cx.spec.args.slice(-2), ['-c', 'approval_policy="untrusted"']);
    assert.doesNotMatch(toml, /approval_policy/);
    assert.match(toml, /^wire_api = "responses"$/m);
    assert.match(toml, new RegExp(`^base_url = "${MODEL_URL}/v1"$`, 'm'));

    const cl = await prep('claude');
    assert.equal(cl.spec.env.ANTHROPIC_BASE_URL, MODEL_URL);
    assert.ok(cl.spec.env.IS_SANDBOX === undefined || cl.spec.env.IS_SANDBOX === '1');
    const clSettings = JSON.parse(fs.readFileSync(path.join(cl.spec.env.CLAUDE_CONFIG_DIR!, 'settings.json'), 'utf8'));
    assert.equal(clSettings.permissions.defaultMode, 'default');

    const gm = await prep('gemini');
    const gmSettings = JSON.parse(fs.readFileSync(path.join(gm.spec.env.HOME!, '.gemini', 'settings.json'), 'utf8'));
    assert.equal(gmSettings.security.auth.selectedType, 'gemini-api-key');
    assert.deepEqual(gm.spec.args.slice(-3), ['--acp', '--approval-mode', 'default']);

    const qw = await prep('qwen');
    const qwSettings = JSON.parse(fs.readFileSync(path.join(qw.spec.env.HOME!, '.qwen', 'settings.json'), 'utf8'));
    assert.equal(qwSettings.tools?.approvalMode, undefined);
    assert.deepEqual(qw.spec.args.slice(-3), ['--acp', '--approval-mode', 'default']);
    assert.equal(qw.spec.env.OPENAI_BASE_URL, `${MODEL_URL}/v1`);

    const pi = await prep('pi-acp');
    const models = JSON.parse(fs.readFileSync(path.join(pi.spec.env.PI_CODING_AGENT_DIR!, 'models.json'), 'utf8'));
    assert.equal(models.providers.scripted.baseUrl, `${MODEL_URL}/v1`);
    assert.ok(AGENTS.find((a) => a.id === 'pi-acp')!.quirks.noPermissionRequests);
  });
});
