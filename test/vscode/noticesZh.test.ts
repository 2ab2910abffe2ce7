/**
 * Notices in the person's language, in a real VS Code (code-server + Chromium) shown in Chinese (`--locale zh-cn`
 * with the test language pack): opencode on the scripted model answers a turn, "Restart Agent" reattaches its
 * session, and the notice the ACP adapter builds (src/acp, which knows no `vscode`) reads in Chinese, title and
 * detail; the next turn's request carries the first. Then opencode is killed: the exit notice and how it ended read
 * in Chinese too. Screenshots: test-artifacts/notices-zh-resumed.png, notices-zh-exited.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { SessionStore } from '../../src/session/sessionStore';
import { scratchWorkspace } from '../support/paths';
import { openChat, send, turnIdle, waitText } from './chatUi';
import { runCommand, withWorkbench } from './runner';

const answer = (marker: string, text: string) => `${marker}\nSCENARIO: answer ${JSON.stringify({ text })}`;

const readProc = (pid: number, file: string) => {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return ''; // gone
  }
};
const readCmdline = (pid: number) => readProc(pid, 'cmdline');
const parentOf = (pid: number) => Number(readProc(pid, 'stat').split(') ')[1]?.split(' ')[1]);

/** Pids whose environment holds `entry` (the agent's own HOME: its sandbox under this run's scratch). */
function pidsWithEnv(entry: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => readProc(pid, 'environ').split('\0').includes(entry));
}

test('notices in Chinese: a resumed opencode session and its killed agent are said in the chat in Chinese', { timeout: 400_000 }, async () => {
  const opencode = agentById('opencode')!;
  assert.ok(opencode.installed(), 'opencode must be installed: scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('notices-zh');
  const stateDir = path.join(scratch, 'state');
  try {
    const oc = await opencode.prepare({ scratch: path.join(scratch, 'opencode'), modelUrl: model.url, workspace });
    const agents = [{ name: 'opencode', command: oc.command, args: oc.args, env: oc.env, inheritEnv: false }];
    await withWorkbench(
      {
        workspace,
        locale: 'zh-cn',
        userSettings: { 'agentHost.agents': agents, 'agentHost.defaultAgent': 'opencode', 'agentHost.sessions.stateDir': stateDir, 'workbench.colorTheme': 'Default Light Modern' },
        timeoutMs: 360_000,
        viewport: { width: 1280, height: 860 },
      },
      async (page, info) => {
        const frame = await openChat(page);
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        await send(frame, answer('ZH-ONE: the word is HERON-31', 'Noted.'));
        await waitText(frame, '.msg.agent', 'Noted.');
        await turnIdle(frame);
        const sessionId = new SessionStore(stateDir).list()[0]?.sessionId;
        assert.ok(sessionId, 'the session was not recorded');

        // The same session reattached: opencode resumes it; the adapter's notice is worded by the editor.
        await runCommand(page, '重启智能体');
        const notice = frame.locator('.entry.notice', { hasText: '会话已恢复' });
        await notice.waitFor({ timeout: 90_000 });
        assert.equal((await notice.locator('.notice-detail').textContent())?.trim(), `会话 ${sessionId}：智能体保留其上下文，但不重放历史；上方内容是 Atrium 保存的副本。`);
        assert.equal(await frame.locator('.entry.notice', { hasText: 'Session resumed' }).count(), 0, 'an English notice is shown');
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        const before = model.requests.length;
        await send(frame, answer('ZH-TWO: which word?', 'HERON-31.'));
        await waitText(frame, '.msg.agent', 'HERON-31.');
        await turnIdle(frame);
        const bodies = model.requests.slice(before).map((r) => JSON.stringify(r.body ?? null));
        assert.ok(
          bodies.some((b) => b.includes('HERON-31') && b.includes('ZH-TWO')),
          'the model did not see the resumed session',
        );
        await notice.scrollIntoViewIfNeeded();
        await info.screenshot('notices-zh-resumed');

        // The agent killed: the adapter's exit notice, and how it went, in Chinese.
        const agentPids = pidsWithEnv(`HOME=${oc.env.HOME}`).filter((pid) => readCmdline(pid).includes('opencode'));
        const root = agentPids.find((pid) => !agentPids.includes(parentOf(pid)));
        assert.ok(root, 'the opencode process was not found');
        process.kill(root, 'SIGKILL');
        const exited = frame.locator('.entry.notice.error', { hasText: '智能体已退出' });
        await exited.waitFor({ timeout: 60_000 });
        assert.match((await exited.locator('.notice-detail').textContent()) ?? '', /^智能体被 SIGKILL 终止/);
        assert.equal(await frame.locator('.entry.notice', { hasText: 'Agent exited' }).count(), 0, 'an English notice is shown');
        await exited.scrollIntoViewIfNeeded();
        await info.screenshot('notices-zh-exited');
      },
    );
  } finally {
    await model.close();
  }
});
