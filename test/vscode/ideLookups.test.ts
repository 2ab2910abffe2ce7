/**
 * The IDE lookups answered by the real VS Code language providers, to a real agent on each protocol: opencode (ACP)
 * calls them through the MCP server the extension hosts, oh-my-pi (RPC) as host tools (`set_host_tools`). With a
 * TypeScript file open, a selection in it and a type error in it, each agent calls find_type_def_locations,
 * get_selected_range, get_visible_range and get_diagnostics; what the scripted model then sees (the tool result the
 * agent passed on) carries what VS Code's TypeScript features and editor state say. Switching the chat from one agent
 * to the other, the header's pickers are the new agent's. Then a second model picked in the header (opencode's twelve
 * by typing in the picker, which a long list allows) reaches the agent
 * (`session/set_config_option` for opencode, which offers its models as a config option, `set_model` for oh-my-pi;
 * both seen in the traffic view) and the scripted model is
 * asked by that model's name, and the header's meter shows the picked model's context window. Screenshots: test-artifacts/ide-lookups-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { startScriptedModel, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { agentById } from '../agents/catalog';
import { OMP_RPC } from '../rpc/agents';
import { scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, pick, pickerShows, send, turnIdle, waitText } from './chatUi';
import { openFile, selectLines } from './editorUi';
import { runCommand, statusBarItem, withWorkbench, type WorkbenchInfo } from './runner';
import { frameWhere } from './waits';

const SHAPES = ['export interface Point {', '  x: number;', '  y: number;', '}', 'export const origin: Point = { x: 0, y: 0 };', "export const broken: number = 'not a number';", ''].join('\n');

interface Loc {
  abspath?: string;
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
  text?: string;
  message?: string;
}

/** The tool results the model was given since request `from`, parsed (a lookup answers JSON). */
function resultsSince(model: ScriptedModel, from: number): unknown[] {
  return model.requests
    .slice(from)
    .flatMap((r) => (r.toolResult === undefined ? [] : [r.toolResult]))
    .map((text) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text; // not JSON: kept for the assertion's message
      }
    });
}

/** A second model for the agent's config file (`file`, as written by src/agents/scripted.ts): "Scripted model (large)". */
const LARGE = 'scripted-model-large';
function addLargeModel(agent: 'opencode' | 'omp', file: string): void {
  if (agent === 'opencode') {
    const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
    cfg.provider.scripted.models[LARGE] = { name: 'Scripted model (large)', tool_call: true, limit: { context: 256000, output: 8192 } };
    // And ten more: a list long enough to be searchable in the header.
    for (let i = 1; i <= 10; i++) cfg.provider.scripted.models[`scripted-model-mini-${i}`] = { name: `Scripted model (mini ${i})`, tool_call: true, limit: { context: 64000, output: 4096 } };
    fs.writeFileSync(file, JSON.stringify(cfg, null, 2));
  } else {
    const entry = [
      '      - id: scripted-model-large',
      '        name: Scripted model (large)',
      '        reasoning: false',
      '        input: [text]',
      '        contextWindow: 256000',
      '        maxTokens: 8192',
      '',
    ];
    fs.appendFileSync(file, entry.join('\n'));
  }
}

/** The pickers the chat header shows now, by their labels. */
async function pickerLabels(chat: Frame): Promise<string[]> {
  return chat.locator('vscode-single-select.picker').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
}

test('IDE lookups from the real language providers reach opencode over MCP and oh-my-pi as host tools', { timeout: 420_000 }, async () => {
  const opencode = agentById('opencode')!;
  assert.ok(opencode?.installed(), 'opencode is not installed: run scripts/setup-agents.sh');
  assert.ok(OMP_RPC.installed(), 'oh-my-pi is not installed: run scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('ide-lookups');
  const shapes = path.join(workspace, 'src', 'shapes.ts');
  fs.writeFileSync(shapes, SHAPES);
  try {
    const oc = await opencode.prepare({ scratch: path.join(scratch, 'opencode'), modelUrl: model.url, workspace });
    const omp = OMP_RPC.prepare({ scratch: path.join(scratch, 'omp'), modelUrl: model.url, workspace, args: ['--no-session'] });
    addLargeModel('opencode', path.join(oc.env.XDG_CONFIG_HOME!, 'opencode', 'opencode.json'));
    addLargeModel('omp', path.join(omp.env!.HOME!, '.omp', 'agent', 'models.yml'));
    const agents = [
      { name: 'opencode', command: oc.command, args: oc.args, env: oc.env, inheritEnv: false },
      { name: 'omp', command: omp.command, args: omp.args, env: omp.env, protocol: 'rpc', inheritEnv: false },
    ];
    await withWorkbench(
      { workspace, userSettings: { 'agentHost.agents': agents, 'agentHost.defaultAgent': 'opencode', 'editor.minimap.enabled': false }, timeoutMs: 380_000, failureShot: 'ide-lookups-failure' },
      (page, info) => steps(page, info),
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }

  async function steps(page: Page, info: WorkbenchInfo): Promise<void> {
    await statusBarItem(page, 'agentHost.status', 60_000);
    // shapes.ts open, TypeScript's error on line 6 shown, line 5 (`origin`) selected.
    await openFile(page, 'src/shapes.ts');
    await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 90_000 });
    await selectLines(page, 5, 1);
    const chat = await openChat(page);

    /** One turn in which the agent calls `tool`; returns the JSON values the model saw after it. */
    const call = async (agent: string, tool: string, args: Record<string, unknown>): Promise<unknown[]> => {
      const from = model.requests.length;
      await send(chat, `SCENARIO: tool ${JSON.stringify({ name: tool, args })}`);
      await until(() => model.requests.slice(from).some((r) => r.toolResult !== undefined) || undefined, { what: `${agent}: the request after ${tool}`, timeoutMs: 90_000 });
      await turnIdle(chat);
      return resultsSince(model, from);
    };

    for (const agent of ['opencode', 'omp']) {
      if (agent !== 'opencode') await pick(chat, 'agent', agent);
      await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
      // The header's pickers are this agent's alone: opencode's session mode, omp's interrupt mode (a fork setting).
      const [mine, theirs] = agent === 'omp' ? ['Interrupt', 'Session Mode'] : ['Session Mode', 'Interrupt'];
      const pickers = await until(
        async () => {
          const labels = await pickerLabels(chat);
          return labels.includes(mine) && !labels.includes(theirs) ? labels : undefined;
        },
        { what: `${agent}'s pickers (with ${mine}, without ${theirs}) in the header`, timeoutMs: 30_000 },
      );
      console.log(`${agent}'s pickers: ${pickers.join(', ')}`);
      await info.screenshot(`ide-lookups-${agent}-header`);

      // The type of `origin` (line 5, 0-based 4, column 13) is defined on line 1: TypeScript's answer.
      const typeDefs = (await call(agent, 'find_type_def_locations', { abspath: shapes, line: 4, character: 13 })) as Loc[][];
      assert.ok(
        typeDefs.some((v) => Array.isArray(v) && v.some((l) => l.abspath === shapes && l.range?.start.line === 0)),
        `${agent}: the type definition did not reach the model: ${JSON.stringify(typeDefs).slice(0, 400)}`,
      );

      // The selection: line 5, whole.
      const selected = (await call(agent, 'get_selected_range', {})) as Loc[];
      assert.ok(
        selected.some((v) => v.abspath === shapes && v.range?.start.line === 4 && v.text?.startsWith('export const origin: Point')),
        `${agent}: the selection did not reach the model: ${JSON.stringify(selected).slice(0, 400)}`,
      );

      // What the editor shows: the whole short file.
      const visible = (await call(agent, 'get_visible_range', {})) as Loc[];
      assert.ok(
        visible.some((v) => v.abspath === shapes && v.range?.start.line === 0 && v.text?.includes('export interface Point') && v.text.includes("'not a number'")),
        `${agent}: the visible code did not reach the model: ${JSON.stringify(visible).slice(0, 400)}`,
      );

      // TypeScript's error on line 6.
      const diagnostics = (await call(agent, 'get_diagnostics', { abspath: shapes })) as Loc[][];
      assert.ok(
        diagnostics.some((v) => Array.isArray(v) && v.some((d) => d.abspath === shapes && d.range?.start.line === 5 && /not assignable to type 'number'/.test(d.message ?? ''))),
        `${agent}: the diagnostics did not reach the model: ${JSON.stringify(diagnostics).slice(0, 400)}`,
      );
      await info.screenshot(`ide-lookups-${agent}-chat`);

      // The second model picked in the header: the agent is told (the traffic view shows the frame) and the model
      // server is asked by that model's name.
      // (opencode offers its models as a config option, omp as a model list: the picker labelled "Model" either way.)
      const picker = chat.locator('vscode-single-select.picker[aria-label="Model"]');
      const testid = (await picker.getAttribute('data-testid')) ?? '';
      const large = await picker.locator('vscode-option').evaluateAll((els) => els.find((e) => /large/i.test(e.textContent ?? ''))?.getAttribute('value') ?? '');
      assert.ok(large, `${agent}: the header offers no second model`);
      // opencode's twelve models are searchable: typing "large" leaves one choice, clicked; omp's two are a plain list.
      const searchable = await picker.evaluate((el) => (el as HTMLElement & { combobox: boolean }).combobox);
      assert.equal(searchable, agent === 'opencode', `${agent}: searchable ${searchable}`);
      if (searchable) {
        await picker.locator('.combobox-input').click();
        await picker.locator('.combobox-input').fill('large');
        const rows = picker.locator('li.option');
        await until(async () => (await rows.count()) === 1 || undefined, { what: 'one model left after typing "large"', timeoutMs: 10_000 });
        await info.screenshot(`ide-lookups-${agent}-model-search`);
        await rows.first().click();
        await pickerShows(chat, testid, large);
      } else await pick(chat, testid, large);
      const asked = model.requests.length;
      await send(chat, `MODEL-PICKED ${agent}\nSCENARIO: answer ${JSON.stringify({ text: `Answered by the large model for ${agent}.` })}`);
      await waitText(chat, '.msg.agent', `Answered by the large model for ${agent}.`);
      await turnIdle(chat);
      const names = model.requests.slice(asked).map((r) => (r.body as { model?: string } | undefined)?.model);
      assert.ok(names.length > 0 && names.every((n) => n === LARGE), `${agent}: the model server was asked for ${names.join(', ')}`);
      // The meter: the tokens of the conversation out of the picked model's window (256k; the first model's is 128k),
      // from opencode's usage_update (ACP) and from pi's session stats (RPC).
      const meter = chat.locator('[data-testid="usage"]');
      await meter
        .filter({ hasText: /^[1-9][\d.]*k \/ 256k/ })
        .waitFor({ timeout: 30_000 })
        .catch(async () => assert.fail(`${agent}: the meter shows "${await meter.textContent()}"`));
      await runCommand(page, 'Atrium: Show Agent Traffic');
      const traffic = await frameWhere(page, () => !!document.getElementById('rows') && !!document.getElementById('counters'), 'the traffic view');
      const method = agent === 'omp' ? 'set_model' : testid.startsWith('config-') ? 'session/set_config_option' : 'session/set_model';
      await traffic.locator('#filter').fill(method);
      const sent = await until(
        async () => {
          const rows = await traffic.locator('#rows tr:not([hidden])').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
          return rows.find((r) => r[1] === '→' && r[4] === method && r[7]?.includes(LARGE));
        },
        { what: `${method} with ${LARGE} in the traffic view`, timeoutMs: 15_000 },
      );
      assert.ok(sent);
      await info.screenshot(`ide-lookups-${agent}-traffic`);
      // shapes.ts the active editor again, line 5 selected, for the next agent.
      await openFile(page, 'src/shapes.ts');
      await selectLines(page, 5, 1);
    }
  }
});
