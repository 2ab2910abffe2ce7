/**
 * package.json's settings against the code: every setting states its scope, the agents run where the files are
 * (extensionKind workspace, agents per machine), and the schema of an `agentHost.agents` entry names exactly
 * the fields parseAgentConfigs keeps — so Settings JSON completes every field and flags no valid one.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseAgentConfigs } from '../../src/session/agentConfig';
import { repoRoot } from '../support/paths';

interface Schema {
  type?: string | string[];
  scope?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: boolean | Schema;
}
const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  extensionKind: string[];
  contributes: { configuration: { properties: Record<string, Schema> } };
};
const settings = pkg.contributes.configuration.properties;

test('every setting has a scope; agents and paths are per machine', () => {
  const scopes = ['application', 'machine', 'machine-overridable', 'window', 'resource', 'language-overridable'];
  for (const [key, s] of Object.entries(settings)) assert.ok(s.scope && scopes.includes(s.scope), `${key} has no valid scope (${s.scope})`);
  assert.equal(settings['agentHost.agents']!.scope, 'machine-overridable');
  assert.equal(settings['agentHost.defaultAgent']!.scope, 'machine-overridable');
  // Where a workspace must not reach: what agents may inject into terminals, where agents come from and go.
  for (const key of ['agentHost.terminals.allowedEnv', 'agentHost.registry.url', 'agentHost.install.storageDir', 'agentHost.sessions.stateDir']) {
    assert.equal(settings[key]!.scope, 'machine', key);
  }
  assert.deepEqual(pkg.extensionKind, ['workspace']);
});

test('the schema of an agentHost.agents entry names exactly the fields the parser keeps', () => {
  const item = settings['agentHost.agents']!.items!;
  const full = {
    name: 'a',
    command: 'x',
    args: ['y'],
    env: { K: 'v' },
    protocol: 'rpc',
    cwd: '/w',
    inheritEnv: false,
    preset: 'p',
    defaults: { mode: 'm', model: 'n', config: { o: true } },
  };
  const [parsed] = parseAgentConfigs([full]);
  assert.deepEqual(Object.keys(item.properties!).sort(), Object.keys(parsed!).sort());
  assert.deepEqual(Object.keys(item.properties!.defaults!.properties!).sort(), Object.keys(parsed!.defaults!).sort());
  assert.deepEqual(item.required, ['name', 'command']);
  assert.equal(item.additionalProperties, false);
  // What the schema requires, the parser requires too.
  assert.throws(() => parseAgentConfigs([{ name: 'a' }]), /command/);
  assert.throws(() => parseAgentConfigs([{ command: 'x' }]), /name/);
});
