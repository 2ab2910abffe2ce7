/**
 * What pi-family agents do on their own, shown in the real chat: upstream pi retrying a transient model error (the
 * scripted model answers 503 four times: pi's client retries twice, then pi's auto-retry) — a "Retrying" notice, the
 * answer, "Retry succeeded", never "The turn failed" — and compacting its context (a model of 17,000 tokens, past
 * pi's reserve) between turns sent back to back; then oh-my-pi keeping todos with its own `todo` tool, which the
 * pinned plan panel shows by phase and follows as tasks are done; and claude-agent (ACP) writing todos with its
 * TodoWrite tool, which it reports as an ACP `plan`: the same panel, updated as the plan changes. pi's session also
 * says it takes none of the user's MCP servers (`agentHost.mcpServers` has one).
 * Screenshots: test-artifacts/rpc-events-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { agentById } from '../agents/catalog';
import { OMP_RPC, PI_RPC } from '../rpc/agents';
import { repoRoot, scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, pick, send, turnIdle, waitText } from './chatUi';
import { withWorkbench, type WorkbenchInfo } from './runner';

/** The transcript's notices: their titles, in order. */
async function noticeTitles(chat: Frame): Promise<string[]> {
  return chat.locator('.entry.notice .notice-title').evaluateAll((els) => els.map((e) => e.textContent?.replace(/\s+/g, ' ').trim() ?? ''));
}

/** The pinned plan panel: its count and rows (phases as `# name`, tasks as `<status> <text>`). */
async function planPanel(chat: Frame): Promise<{ count: string; rows: string[] }> {
  return chat.locator('details.plan').evaluate((el) => ({
    count: el.querySelector('.plan-count')?.textContent ?? '',
    rows: [...el.querySelectorAll('li')].map((li) =>
      li.classList.contains('plan-phase') ? `# ${li.textContent?.trim()}` : `${[...li.classList].find((c) => c !== 'plan-entry')} ${li.textContent?.trim()}`,
    ),
  }));
}

test("pi's retries and compaction, omp's todos and claude's plan, shown in the chat", { timeout: 360_000 }, async () => {
  const claude = agentById('claude')!;
  assert.ok(PI_RPC.installed() && OMP_RPC.installed() && claude.installed(), 'pi, oh-my-pi and claude-agent must be installed: scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('rpc-events');
  try {
    const pi = PI_RPC.prepare({ scratch: path.join(scratch, 'pi'), modelUrl: model.url, workspace, args: ['--no-session'] });
    const models = path.join(pi.env!.PI_CODING_AGENT_DIR!, 'models.json');
    const cfg = JSON.parse(fs.readFileSync(models, 'utf8'));
    cfg.providers.scripted.models[0].contextWindow = 17_000;
    fs.writeFileSync(models, JSON.stringify(cfg));
    const omp = OMP_RPC.prepare({ scratch: path.join(scratch, 'omp'), modelUrl: model.url, workspace, args: ['--no-session'] });
    const cl = await claude.prepare({ scratch: path.join(scratch, 'claude'), modelUrl: model.url, workspace });
    const agents = [
      { name: 'pi', command: pi.command, args: pi.args, env: pi.env, protocol: 'rpc', inheritEnv: false },
      { name: 'omp', command: omp.command, args: omp.args, env: omp.env, protocol: 'rpc', inheritEnv: false },
      { name: 'claude', command: cl.command, args: cl.args, env: cl.env, inheritEnv: false },
    ];
    // A user's MCP server: pi in RPC mode takes none, and the chat says so.
    const mcpServers = { tickets: { command: process.execPath, args: [path.join(repoRoot, 'out', 'test', 'fixtures', 'ticketMcpServer.js')] } };
    await withWorkbench(
      { workspace, userSettings: { 'agentHost.agents': agents, 'agentHost.defaultAgent': 'pi', 'agentHost.mcpServers': mcpServers }, timeoutMs: 320_000, failureShot: 'rpc-events-failure' },
      (page, info) => steps(page, info),
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }

  async function steps(_page: Page, info: WorkbenchInfo): Promise<void> {
    const chat = await openChat(_page);
    await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
    await chat.locator('.entry.notice', { hasText: 'tickets: this agent takes no MCP servers from Atrium' }).waitFor({ timeout: 15_000 });

    // 1. A transient error, retried by pi: the turn goes on to the answer.
    await send(chat, 'SCENARIO: flaky {"fail": 4, "status": 503, "text": "Answered after a retry."}');
    await waitText(chat, '.msg.agent', 'Answered after a retry.', 60_000);
    await turnIdle(chat);
    await until(async () => ((await noticeTitles(chat)).some((t) => /^Retry succeeded/.test(t)) ? true : undefined), { what: 'the retry succeeded notice', timeoutMs: 10_000 });
    const afterRetry = await noticeTitles(chat);
    assert.ok(
      afterRetry.some((t) => /^Retrying after an error \(attempt 1\/3, in 2 s\)/.test(t)),
      afterRetry.join('\n'),
    );
    assert.ok(!afterRetry.some((t) => /The turn failed/.test(t)), `a retried turn said it failed: ${afterRetry.join('\n')}`);
    await info.screenshot('rpc-events-retry');

    // 2. Turns back to back: pi compacts between them (each next prompt waits for it), said in the chat.
    for (const n of [1, 2]) {
      await send(chat, `SCENARIO: answer {"text": "Short answer ${n}."}`);
      await waitText(chat, '.msg.agent', `Short answer ${n}.`, 60_000);
      await turnIdle(chat);
    }
    await until(async () => ((await noticeTitles(chat)).includes('Context compacted') ? true : undefined), { what: 'the compaction notice', timeoutMs: 15_000 });
    const afterCompaction = await noticeTitles(chat);
    assert.ok(!afterCompaction.some((t) => /Compaction failed/.test(t)), afterCompaction.join('\n'));
    await info.screenshot('rpc-events-compaction');

    // 3. oh-my-pi's todo tool: the plan panel shows the phases and tasks, then follows a task done.
    await pick(chat, 'agent', 'omp');
    await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
    const init = {
      op: 'init',
      list: [
        { phase: 'Parser', items: ['Write the tokenizer', 'Parse expressions'] },
        { phase: 'Checks', items: ['Add parser tests'] },
      ],
    };
    await send(chat, `SCENARIO: tool ${JSON.stringify({ name: 'todo', args: init })}`);
    await turnIdle(chat, 60_000);
    // turnIdle right after send can see the idle before the turn starts: the panel itself is waited for, as long as a
    // loaded machine takes for omp's turn.
    const planned = await until(async () => ((await planPanel(chat)).rows.length === 5 ? planPanel(chat) : undefined), { what: 'the plan panel with five rows', timeoutMs: 90_000 });
    assert.deepEqual(planned, {
      count: '0/3',
      rows: ['# Parser', 'in_progress Write the tokenizer', 'pending Parse expressions', '# Checks', 'pending Add parser tests'],
    });
    await info.screenshot('rpc-events-todos');
    await send(chat, `SCENARIO: tool ${JSON.stringify({ name: 'todo', args: { op: 'done', task: 'Write the tokenizer' } })}`);
    await turnIdle(chat, 60_000);
    const done = await until(async () => ((await planPanel(chat)).count === '1/3' ? planPanel(chat) : undefined), { what: 'the plan panel at 1/3', timeoutMs: 90_000 });
    assert.deepEqual(done.rows, ['# Parser', 'completed Write the tokenizer', 'in_progress Parse expressions', '# Checks', 'pending Add parser tests']);
    await info.screenshot('rpc-events-todos-done');

    // 4. claude-agent's TodoWrite, reported as an ACP plan: the panel shows it (no phases) and follows the next one.
    await pick(chat, 'agent', 'claude');
    await chat.locator('.conn-ready').waitFor({ timeout: 90_000 });
    const todos = (first: string, second: string) => ({
      todos: [
        { content: 'Read the failing test', status: first, activeForm: 'Reading the failing test' },
        { content: 'Fix the off-by-one', status: second, activeForm: 'Fixing the off-by-one' },
      ],
    });
    await send(chat, `SCENARIO: tool ${JSON.stringify({ name: 'TodoWrite', args: todos('in_progress', 'pending') })}`);
    await turnIdle(chat, 90_000);
    const acpPlan = await until(async () => ((await planPanel(chat)).rows.join('|') === 'in_progress Read the failing test|pending Fix the off-by-one' ? planPanel(chat) : undefined), {
      what: "claude's plan in the panel",
      timeoutMs: 15_000,
    });
    assert.equal(acpPlan.count, '0/2');
    await send(chat, `SCENARIO: tool ${JSON.stringify({ name: 'TodoWrite', args: todos('completed', 'in_progress') })}`);
    await turnIdle(chat, 90_000);
    const acpDone = await until(async () => ((await planPanel(chat)).count === '1/2' ? planPanel(chat) : undefined), { what: "claude's plan at 1/2", timeoutMs: 15_000 });
    assert.deepEqual(acpDone.rows, ['completed Read the failing test', 'in_progress Fix the off-by-one']);
    await info.screenshot('rpc-events-acp-plan');
  }
});
