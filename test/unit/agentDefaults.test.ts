import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentDefaults } from '../../src/manager/agentDefaults';
import { parseAgentConfigs } from '../../src/session/agentConfig';
import { presetConfig, presetFor, PRESETS } from '../../src/agents/presets';
import { hasScriptedSetup } from '../../src/agents/scripted';

/** Global state as VS Code keeps it: a key-value store (values cloned through JSON like the real one). */
function memento() {
  const data = new Map<string, string>();
  return {
    keys: () => [...data.keys()],
    get: <T>(key: string, fallback?: T): T => (data.has(key) ? (JSON.parse(data.get(key)!) as T) : (fallback as T)),
    update: async (key: string, value: unknown) => void data.set(key, JSON.stringify(value)),
  };
}

test('per-agent defaults: the configured ones, with choices remembered on top option by option', async () => {
  const [agent] = parseAgentConfigs([{ name: 'a', command: 'x', defaults: { mode: 'ask', config: { effort: 'low', fast: true } } }]);
  const d = new AgentDefaults(memento());
  assert.deepEqual(d.choices(agent!), { modeId: 'ask', config: { effort: 'low', fast: true } });
  await d.remember('a', { modeId: 'plan' });
  await d.remember('a', { config: { effort: 'high' } });
  await d.remember('b', { modelId: 'other' });
  assert.deepEqual(d.choices(agent!), { modeId: 'plan', config: { effort: 'high', fast: true } });
  assert.deepEqual(d.choices({ name: 'b' }), { modelId: 'other' });
});

test('defaults are validated in the agent config', () => {
  assert.throws(() => parseAgentConfigs([{ name: 'a', command: 'x', defaults: { mode: 3 } }]), /defaults.mode/);
  assert.throws(() => parseAgentConfigs([{ name: 'a', command: 'x', defaults: { config: { k: [1] } } }]), /defaults.config/);
  assert.throws(() => parseAgentConfigs([{ name: 'a', command: 'x', defaults: 'plan' }]), /"defaults"/);
});

test('the cached offer shows the remembered choices as current, and is written only when it changed', async () => {
  const m = memento();
  let writes = 0;
  const counting = {
    ...m,
    update: async (k: string, v: unknown) => {
      writes++;
      await m.update(k, v);
    },
  };
  const d = new AgentDefaults(counting);
  const offer = {
    modes: {
      currentModeId: 'build',
      availableModes: [
        { id: 'build', name: 'Build' },
        { id: 'plan', name: 'Plan' },
      ],
    },
    configOptions: [
      {
        id: 'effort',
        name: 'Effort',
        type: 'select',
        currentValue: 'low',
        options: [
          { value: 'low', name: 'Low' },
          { value: 'high', name: 'High' },
        ],
      },
    ],
    commands: [{ name: 'init', description: 'Create AGENTS.md' }],
  };
  d.keepOffer('a', offer);
  d.keepOffer('a', JSON.parse(JSON.stringify(offer)));
  assert.equal(writes, 1);
  await d.remember('a', { modeId: 'plan', config: { effort: 'high' } });
  const shown = d.offerWithChoices({ name: 'a' })!;
  assert.equal(shown.modes!.currentModeId, 'plan');
  assert.equal((shown.configOptions[0] as { currentValue: string }).currentValue, 'high');
  assert.equal(shown.commands[0]!.name, 'init');
  assert.equal(d.offerWithChoices({ name: 'never-seen' }), undefined);
});

test('presets: the 8 tested agents and agentao, each found again from its command, each with a scripted setup but agentao', () => {
  const ids = PRESETS.map((p) => p.id);
  assert.deepEqual(ids, ['opencode', 'codex-acp', 'claude-agent-acp', 'gemini', 'qwen', 'pi-acp', 'pi', 'omp', 'agentao']);
  for (const p of PRESETS) {
    const { preset: _, ...config } = presetConfig(p, { command: `/opt/agents/bin/${p.command}` });
    assert.equal(presetFor(config)?.id, p.id, `${p.id} from its command`);
    assert.equal(hasScriptedSetup(p.id), p.scripted, `${p.id}: scripted setup`);
    assert.ok(p.permission.length > 10, `${p.id}: says what makes it ask`);
  }
  // What makes each ask is part of the preset as shipped.
  assert.match(presetConfig(PRESETS[0]!).env!.OPENCODE_PERMISSION!, /"edit":"ask"/);
  assert.deepEqual(presetConfig(PRESETS[1]!).args, ['-c', 'approval_policy="untrusted"']);
  assert.deepEqual(parseAgentConfigs([presetConfig(PRESETS[4]!)])[0]!.args, ['--acp', '--approval-mode', 'default']);
});
