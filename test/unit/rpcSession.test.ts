/**
 * RpcSession against the fake agent (test/fixtures/rpcFakeAgent.ts): the agent's environment, turn
 * bookkeeping the real agents show only by chance — aborts before a run starts (omp drops the prompt, pi
 * starts the run anyway), slash commands handled without a run — and the typed command surface.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { startAgentSession } from '../../src/adapters/factory';
import { groupAlive } from '../../src/core/agentProcess';
import type { Logger } from '../../src/core/log';
import { RpcSession, type RpcSessionOptions } from '../../src/rpc/rpcSession';
import type { AgentConfig } from '../../src/session/agentConfig';
import { policyDecider } from '../../src/session/permissions';
import { cliPath, repoRoot, scratchDir } from '../support/paths';

const fake = path.join(repoRoot, 'out', 'test', 'fixtures', 'rpcFakeAgent.js');
const quiet: Logger = { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const live: RpcSession[] = [];
after(async () => {
  for (const s of live) await s.shutdown();
  for (const s of live) assert.equal(groupAlive(s.connection.process.pid!), false, 'fake agent left behind');
});

async function start(config: Partial<AgentConfig> = {}, options: Partial<RpcSessionOptions> = {}): Promise<RpcSession> {
  const s = await RpcSession.start(
    { name: 'fake', command: process.execPath, args: [fake, 'upstream'], protocol: 'rpc', ...config },
    { logger: quiet, cwd: repoRoot, requestTimeoutMs: 5000, ...options },
  );
  live.push(s);
  return s;
}

async function agentEnv(s: RpcSession): Promise<Record<string, string>> {
  return ((await s.raw({ type: 'env' })).data as { env: Record<string, string> }).env;
}

/** Counts the commands of one type the session sent. */
function sentCounter(): { tap: RpcSessionOptions['frameTap']; count: (type: string) => number } {
  const sent: string[] = [];
  return {
    tap: (direction, frame) => {
      if (direction === 'out') sent.push(String((frame as { type?: unknown }).type));
    },
    count: (type) => sent.filter((t) => t === type).length,
  };
}

describe('RpcSession environment', () => {
  const HOST_ONLY = 'AGENT_HOST_RPC_TEST_HOST_ONLY';
  /** A fake secret in the host's environment: it must never reach an agent that does not inherit. */
  const SECRET = 'AGENT_HOST_TEST_FAKE_API_KEY';

  it('inheritEnv false: only the configured and the options env reach the agent, the options winning', async () => {
    process.env[HOST_ONLY] = 'from the host';
    try {
      const s = await start({ env: { FROM_CONFIG: 'config', SHARED: 'config' }, inheritEnv: false }, { env: { FROM_OPTIONS: 'options', SHARED: 'options' } });
      const env = await agentEnv(s);
      assert.equal(env[HOST_ONLY], undefined, 'a host-only variable stays out');
      assert.equal(env.FROM_CONFIG, 'config');
      assert.equal(env.FROM_OPTIONS, 'options');
      assert.equal(env.SHARED, 'options');
    } finally {
      delete process.env[HOST_ONLY];
    }
  });

  /** The configured env of an agent that dumps its environment to a file; the file's variables. */
  function dumping(dir: string) {
    const file = path.join(dir, 'env.json');
    return { env: { FAKE_ENV_DUMP: file, CONFIGURED_A: 'a', CONFIGURED_B: 'b=c d' }, read: () => JSON.parse(readFileSync(file, 'utf8')) as Record<string, string> };
  }
  /** What an agent's environment holds besides what was configured: its group's marker (src/core/agentProcess.ts). */
  const MARKER = 'AGENT_HOST_GROUP';

  it('inheritEnv false through the adapter: the environment is exactly the configured one plus sign-in keys', async () => {
    process.env[SECRET] = 'sk-fake-host-secret-0123456789';
    try {
      const dump = dumping(scratchDir('rpc-env'));
      const session = await startAgentSession(
        { name: 'fake', command: process.execPath, args: [fake, 'upstream'], protocol: 'rpc', env: dump.env, inheritEnv: false },
        { logger: quiet, cwd: repoRoot, decidePermission: policyDecider('deny-all'), env: { SIGNED_IN_KEY: 'from sign-in' } },
      );
      await session.shutdown();
      const env = dump.read();
      assert.deepEqual(Object.keys(env).sort(), [...Object.keys(dump.env), 'SIGNED_IN_KEY', MARKER].sort(), 'a variable leaked in, or a configured one is missing');
      assert.deepEqual({ ...env, [MARKER]: undefined }, { ...dump.env, SIGNED_IN_KEY: 'from sign-in', [MARKER]: undefined });
    } finally {
      delete process.env[SECRET];
    }
  });

  it("inheritEnv false through the CLI (an agents file): exactly the configured environment, no secret of the CLI's", () => {
    const dir = scratchDir('rpc-env-cli');
    const dump = dumping(dir);
    const agents = path.join(dir, 'agents.json');
    writeFileSync(agents, JSON.stringify([{ name: 'fake', command: process.execPath, args: [fake, 'upstream'], protocol: 'rpc', env: dump.env, inheritEnv: false }]));
    // --sandbox off: the sandbox adds its own proxy variables (test/agents/sandbox.test.ts runs an agent in it).
    const r = spawnSync(process.execPath, [cliPath, '--config', agents, '--cwd', dir, '--state-dir', path.join(dir, 'state'), '--sandbox', 'off', 'hello'], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, [SECRET]: 'sk-fake-host-secret-0123456789' },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /answer to hello/);
    const env = dump.read();
    assert.deepEqual(Object.keys(env).sort(), [...Object.keys(dump.env), MARKER].sort());
    assert.deepEqual({ ...env, [MARKER]: undefined }, { ...dump.env, [MARKER]: undefined });
  });

  it('by default the agent inherits the host environment under the added variables', async () => {
    process.env[HOST_ONLY] = 'from the host';
    try {
      const s = await start({ env: { FROM_CONFIG: 'config' } }, { env: { FROM_OPTIONS: 'options' } });
      const env = await agentEnv(s);
      assert.equal(env[HOST_ONLY], 'from the host');
      assert.equal(env.FROM_CONFIG, 'config');
      assert.equal(env.FROM_OPTIONS, 'options');
    } finally {
      delete process.env[HOST_ONLY];
    }
  });
});

describe('RpcSession turns against a fake agent', () => {
  it('a prompt resolves at the end of its run, with the streamed answer', async () => {
    const s = await start();
    assert.deepEqual(await s.prompt([{ type: 'text', text: 'hello' }]), { stopReason: 'end_turn' });
    assert.equal(s.model.messages('agent')[0]?.text, 'answer to hello');
    assert.equal(s.model.turn, 'idle');
  });

  it('an abort before the run starts, and the agent drops the prompt: cancelled, one abort sent', async () => {
    const sent = sentCounter();
    const s = await start({}, { frameTap: sent.tap });
    const turn = s.prompt([{ type: 'text', text: 'drop-on-abort' }]);
    await s.cancel();
    assert.deepEqual(await turn, { stopReason: 'cancelled' });
    assert.equal(s.model.turn, 'idle');
    assert.equal(s.model.lastStopReason, 'cancelled');
    assert.equal(sent.count('abort'), 1);
    assert.deepEqual(await s.prompt([{ type: 'text', text: 'next' }]), { stopReason: 'end_turn' }, 'the next prompt is not aborted');
  });

  it('an abort the agent answered before the run started: the run is aborted when it starts', async () => {
    const sent = sentCounter();
    const s = await start({}, { frameTap: sent.tap });
    const t0 = Date.now();
    const turn = s.prompt([{ type: 'text', text: 'preflight' }]);
    await s.cancel();
    assert.deepEqual(await turn, { stopReason: 'cancelled' });
    assert.ok(Date.now() - t0 < 3000);
    assert.equal(sent.count('abort'), 2, 'sent again once the run started');
    assert.equal(s.model.turn, 'idle');
    assert.deepEqual(await s.prompt([{ type: 'text', text: 'next' }]), { stopReason: 'end_turn' });
  });

  it('a slash command the agent handles without a run ends the turn (upstream)', async () => {
    const s = await start();
    assert.deepEqual(await s.prompt([{ type: 'text', text: '/local' }]), { stopReason: 'end_turn' });
    assert.equal(s.model.turn, 'idle');
  });
});

describe('RpcSession typed commands', () => {
  it('checks arguments and results against the command map at compile time', async () => {
    const s = await start();
    const models = await s.command('get_available_models', {});
    assert.deepEqual(
      models.models?.map((m) => `${m.provider}/${m.id}`),
      ['fake/m1'],
    );
    // Never called: these lines only have to fail to compile.
    const unchecked = () => {
      // @ts-expect-error set_model needs modelId
      void s.command('set_model', { provider: 'fake' });
      // @ts-expect-error the mode is a queue mode
      void s.command('set_steering_mode', { mode: 'sometimes' });
      // @ts-expect-error not a command of the map (raw() is the way to send one)
      void s.command('frobnicate', {});
      // @ts-expect-error export_html answers a path, not a number
      void s.command('export_html', {}).then((r): number => r.path);
    };
    assert.equal(typeof unchecked, 'function');
  });
});
