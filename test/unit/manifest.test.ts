/**
 * package.json's settings against the code: every setting states its scope, the agents run where the files are
 * (extensionKind workspace, agents per machine), and the schema of an `agentHost.agents` entry names exactly
 * the fields parseAgentConfigs keeps — so Settings JSON completes every field and flags no valid one.
 * The walkthrough: its id is the one Get Started opens, its buttons and completion events name what exists
 * (commands, context keys, the chat view, settings) in both languages, its media are small files that ship.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseAgentConfigs } from '../../src/session/agentConfig';
import { COMMAND_IDS, CONTEXT_KEYS } from '../../src/views/commandIds';
import { WALKTHROUGH_ID, walkthroughEvents } from '../../src/views/firstSteps';
import { repoRoot } from '../support/paths';

interface Schema {
  type?: string | string[];
  scope?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  anyOf?: unknown[];
  items?: Schema;
  additionalProperties?: boolean | Schema;
}
interface Step {
  id: string;
  title: string;
  description: string;
  media: { svg?: string; image?: string; markdown?: string; altText?: string };
  completionEvents?: string[];
}
const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  extensionKind: string[];
  contributes: {
    configuration: { properties: Record<string, Schema> };
    views: Record<string, { id: string }[]>;
    walkthroughs: { id: string; title: string; description: string; steps: Step[] }[];
    menus: Record<string, { command?: string; when?: string; group?: string }[]>;
    commands: { command: string; icon?: string }[];
  };
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
    mcpServers: ['tickets'],
    sandbox: { mode: 'read-only', allowHosts: ['h'] },
  };
  const [parsed] = parseAgentConfigs([full]);
  assert.deepEqual(parsed!.mcpServers, ['tickets']);
  assert.equal(parseAgentConfigs([{ ...full, mcpServers: false }])[0]!.mcpServers, false);
  assert.throws(() => parseAgentConfigs([{ ...full, mcpServers: 'tickets' }]), /"mcpServers" must be a list of MCP server names, or false/);
  // An agent service's own fields (url, tls) are kept for its entries only; the schema names both kinds.
  const [remote] = parseAgentConfigs([{ name: 'r', protocol: 'agent-service', url: 'wss://h/ws', tls: { ca: 'ca.pem', fingerprint: 'AB' }, headers: { 'X-Org': 'acme' } }]);
  assert.deepEqual(Object.keys(item.properties!).sort(), [...new Set([...Object.keys(parsed!), ...Object.keys(remote!)])].sort());
  assert.deepEqual(Object.keys(item.properties!.tls!.properties!).sort(), Object.keys(remote!.tls!).sort());
  assert.deepEqual(Object.keys(item.properties!.defaults!.properties!).sort(), Object.keys(parsed!.defaults!).sort());
  assert.deepEqual(item.required, ['name']);
  assert.deepEqual(item.anyOf, [{ required: ['command'] }, { required: ['url'], properties: { protocol: { const: 'agent-service' } } }]);
  assert.throws(() => parseAgentConfigs([{ name: 'r', protocol: 'agent-service' }]), /url/);
  assert.throws(() => parseAgentConfigs([{ name: 'r', protocol: 'agent-service', url: 'http://h' }]), /ws:\/\//);
  assert.equal(item.additionalProperties, false);
  // What the schema requires, the parser requires too.
  assert.throws(() => parseAgentConfigs([{ name: 'a' }]), /command/);
  assert.throws(() => parseAgentConfigs([{ command: 'x' }]), /name/);
});

const nls = (file: string) => JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8')) as Record<string, string>;
/** `%key%` → its text in `strings`. */
const text = (value: string, strings: Record<string, string>) => {
  const key = /^%(.+)%$/.exec(value)?.[1];
  assert.ok(key, `${value} is not a %key% of package.nls.json`);
  assert.ok(strings[key]?.trim(), `no text for ${key}`);
  return strings[key]!;
};
/** VS Code's own commands a step may link to. */
const BUILT_IN_COMMANDS = ['workbench.action.quickOpen'];

test('the walkthrough: the one Get Started opens, four steps whose buttons run existing commands in both languages', () => {
  const [walkthrough, ...others] = pkg.contributes.walkthroughs;
  assert.equal(others.length, 0);
  assert.equal(walkthrough!.id, WALKTHROUGH_ID);
  assert.deepEqual(
    walkthrough!.steps.map((s) => s.id),
    ['chooseAgent', 'signIn', 'ask', 'selection'],
  );
  const en = nls('package.nls.json');
  const zh = nls('package.nls.zh-cn.json');
  text(walkthrough!.title, en);
  text(walkthrough!.description, en);
  const links = (markdown: string) => [...markdown.matchAll(/\]\(command:([\w.]+)[^)]*\)/g)].map((m) => m[1]!);
  for (const step of walkthrough!.steps) {
    text(step.title, en);
    const buttons = links(text(step.description, en));
    assert.ok(buttons.length > 0, `step ${step.id} has no button`);
    for (const c of buttons) assert.ok(COMMAND_IDS.includes(c as never) || BUILT_IN_COMMANDS.includes(c), `step ${step.id} links to ${c}, which is not a contributed command`);
    assert.deepEqual(links(text(step.description, zh)), buttons, `the Chinese step ${step.id} has other buttons`);
    // Buttons are links on a line of their own.
    for (const line of text(step.description, en)
      .split('\n')
      .filter((l) => l.includes('(command:')))
      assert.match(line, /^\[[^\]]+\]\(command:[\w.]+\)$/, `step ${step.id}: "${line}" is not a button`);
  }
});

test('the walkthrough: completion events name real commands, context keys, views and settings; media ship and stay small', () => {
  const views = Object.values(pkg.contributes.views)
    .flat()
    .map((v) => v.id);
  const en = nls('package.nls.json');
  for (const step of pkg.contributes.walkthroughs[0]!.steps) {
    assert.ok(step.completionEvents?.length, `step ${step.id} never completes`);
    for (const event of step.completionEvents!) {
      const [kind, arg] = [event.slice(0, event.indexOf(':')), event.slice(event.indexOf(':') + 1)];
      if (kind === 'onCommand') assert.ok(COMMAND_IDS.includes(arg as never), event);
      else if (kind === 'onContext') assert.ok(CONTEXT_KEYS.includes(arg as never), event);
      else if (kind === 'onView') assert.ok(views.includes(arg), event);
      else if (kind === 'onSettingChanged') assert.ok(arg in settings, event);
      else assert.fail(`step ${step.id}: unexpected completion event ${event}`);
    }
    // The extension ticks the step on these same events while the page is closed (src/views/walkthroughProgress.ts).
    for (const event of step.completionEvents!) assert.ok(walkthroughEvents(pkg).get(event)?.includes(step.id), `${event} does not tick ${step.id}`);
    const media = step.media.svg ?? step.media.image ?? step.media.markdown;
    assert.ok(media && existsSync(path.join(repoRoot, media)), `step ${step.id}: media ${media} missing`);
    assert.ok(media.startsWith('media/'), `step ${step.id}: ${media} is outside media/ (not packaged)`);
    assert.ok(statSync(path.join(repoRoot, media)).size < 4096, `step ${step.id}: ${media} is over 4 KB`);
    if (step.media.svg || step.media.image) text(step.media.altText ?? '', en);
  }
});

test('the chat view\'s title: one "+" (New Chat Tab); Get Started only in its "…" menu and the palette', () => {
  const title = pkg.contributes.menus['view/title']!.filter((m) => m.when?.includes('view == agentHost.chat'));
  const icons = Object.fromEntries(pkg.contributes.commands.map((c) => [c.command, c.icon]));
  const inline = title.filter((m) => m.group?.startsWith('navigation'));
  assert.deepEqual(
    inline.filter((m) => icons[m.command!] === '$(add)').map((m) => m.command),
    ['agentHost.newChatTab'],
  );
  const getStarted = title.find((m) => m.command === 'agentHost.getStarted');
  assert.ok(getStarted && !getStarted.group?.startsWith('navigation'), 'Get Started is not in the overflow menu');
  assert.ok(!pkg.contributes.menus.commandPalette?.some((m) => m.command === 'agentHost.getStarted'), 'Get Started is hidden from the palette');
});
