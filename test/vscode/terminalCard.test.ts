/**
 * A command the agent runs shows in its tool card, in a real VS Code (code-server + Chromium): claude-agent on the
 * scripted model runs a shell command itself and reports it in `_meta.terminal_*`; the card shows the command,
 * its coloured output and its exit code without being expanded, and "Show in Terminal" opens a VS Code terminal
 * with the same output (none is opened before). Then Follow Agent: turned on from the chat's title bar, the file the
 * agent writes opens in an editor; a file and a folder dropped on the composer reach the model, and so does each
 * `@` kind (a folder, the terminal, the git changes, a link, a TypeScript workspace symbol, the selection, the
 * problems). Screenshots:
 * test-artifacts/terminal-card-*.png, follow-agent.png, dropped-chips.png, mention-*.png.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentById } from '../agents/catalog';
import { startScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { scratchWorkspace } from '../support/paths';
import { until } from '../support/wait';
import { openChat, send, turnIdle } from './chatUi';
import { openFile, selectLines } from './editorUi';
import { answerModal, runCommand, withWorkbench } from './runner';

test("a shell command's output, colours and exit code in its tool card; Show in Terminal opens it in VS Code (claude)", { timeout: 600_000 }, async () => {
  const claude = agentById('claude')!;
  assert.ok(claude.installed(), 'claude is not installed: run scripts/setup-agents.sh');
  const model = await startScriptedModel();
  const { scratch, workspace } = scratchWorkspace('terminal-card');
  try {
    const spec = await claude.prepare({ scratch: path.join(scratch, 'claude'), modelUrl: model.url, workspace });
    // A git repository with one committed file: the `@` git changes show its edit.
    fs.writeFileSync(path.join(workspace, 'tracked.txt'), 'committed\n');
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: workspace, stdio: 'ignore' });
    // A TypeScript file: the `@` workspace symbols come from its language server.
    // Its fourth line is a type error: the `@` problems carry TypeScript's message.
    fs.writeFileSync(
      path.join(workspace, 'shapes.ts'),
      "export function computeTriangleArea(base: number, height: number): number {\n  return (base * height) / 2; // AREA-LINE\n}\nexport const sides: number = 'three'; // SELECTED-LINE\n",
    );
    // Three files for the `@` search: one it offers, one .gitignore leaves out, one files.exclude leaves out.
    for (const name of ['zz-kept.md', 'zz-ignored.md', 'zz-excluded.md']) fs.writeFileSync(path.join(workspace, name), `${name}\n`);
    fs.writeFileSync(path.join(workspace, '.gitignore'), 'zz-ignored.md\n');
    git('init', '-q');
    git('add', 'tracked.txt');
    git('commit', '-qm', 'base');
    await withWorkbench(
      {
        workspace,
        userSettings: {
          'agentHost.agents': [{ name: 'claude', command: spec.command, args: spec.args, env: spec.env, inheritEnv: false }],
          'agentHost.defaultAgent': 'claude',
          'workbench.colorTheme': 'Default Dark Modern',
          'git.enabled': true, // (off in the tests' defaults) the `@` git changes read it
          'files.exclude': { '**/.git': true, '**/zz-excluded.md': true },
        },
        timeoutMs: 540_000,
        viewport: { width: 1280, height: 860 },
      },
      async (page, info) => {
        const frame = await openChat(page);
        await frame.locator('.conn-ready').waitFor({ timeout: 90_000 });
        const command = "printf '\\033[31mred alert\\033[0m\\n'; echo second line";
        await send(frame, `Run the check.\nSCENARIO: shell ${JSON.stringify({ command })}`);
        // (A line with a backslash in quotes cannot become a rule: the dialog offers only "Allow once".)
        const asked = await answerModal(page, 'Allow once — “Allow”');
        assert.match(asked, /red alert|printf/, `the permission dialog: ${asked}`);
        const block = frame.locator('.entry.tool .terminal-block').first();
        await block.locator('.term-status', { hasText: 'Exit code 0' }).waitFor({ timeout: 90_000 });
        await turnIdle(frame);
        const out = (await block.locator('.term-out').textContent()) ?? '';
        assert.match(out, /red alert\nsecond line/, `the card's output: ${JSON.stringify(out)}`);
        assert.equal(await block.locator('.term-out .ansi-red-fg').first().textContent(), 'red alert', 'red, in the terminal theme colour');
        assert.ok(!(await frame.locator('.entry.tool .tool-body').first().isVisible()), 'shown without expanding the card');
        assert.match((await block.locator('.term-cmd').textContent()) ?? '', /printf/);
        await info.screenshot('terminal-card-output');
        const terminalsBefore = await page.locator('.terminal-tabs-entry, .single-terminal-tab').count();
        assert.equal(terminalsBefore, 0, 'no VS Code terminal before Show in Terminal');
        await block.locator('[data-action="show-terminal"]').click();
        await page.locator('.xterm-rows, .xterm-screen').first().waitFor({ timeout: 30_000 });
        await page.locator('.terminal-tabs-entry, .single-terminal-tab', { hasText: 'Agent:' }).first().waitFor({ timeout: 30_000 });
        await info.screenshot('terminal-card-in-terminal');
        const body = model.requests.map((r) => JSON.stringify(r.body ?? null)).join('\n');
        assert.match(body, /second line/, 'the model saw the output too');

        // Follow Agent (the eye in the chat's title bar): the file the agent writes opens in an editor as it works
        // (its tool call names it before it exists: opened once it does), without taking the focus.
        await page.getByRole('button', { name: /^Follow Agent/ }).click();
        await page.getByRole('button', { name: /^Stop Following the Agent/ }).waitFor({ timeout: 15_000 });
        assert.equal(await page.locator('.monaco-workbench .tab', { hasText: 'followed.txt' }).count(), 0);
        await send(frame, `Write the notes.\nSCENARIO: write ${JSON.stringify({ path: 'followed.txt', content: 'followed by the editor\n' })}`);
        await answerModal(page, 'Allow once.*');
        await page.locator('.monaco-workbench .tab.active', { hasText: 'followed.txt' }).waitFor({ timeout: 60_000 });
        await page.locator('.monaco-editor .view-line', { hasText: 'followed by the editor' }).first().waitFor({ timeout: 30_000 });
        await turnIdle(frame);
        await info.screenshot('follow-agent');
        assert.equal(await page.locator('.editor-instance .monaco-editor.focused').count(), 0, 'the opened editor did not take the focus');

        // Files and folders dropped on the composer, as VS Code hands an Explorer drag to a webview (its URI list):
        // chips (a file with its size) that reach the model as links; a file outside the workspace is named, not added.
        fs.mkdirSync(path.join(workspace, 'notes'));
        fs.writeFileSync(path.join(workspace, 'notes', 'plan.md'), `${'# Plan\n'.repeat(299)}## Milestones\n`);
        const uris = [path.join(workspace, 'notes', 'plan.md'), path.join(workspace, 'notes'), '/etc/hostname'].map((p) => `file://${p}`);
        const dropped = await frame.evaluateHandle((list) => {
          const d = new DataTransfer();
          d.setData('application/vnd.code.uri-list', list);
          return d;
        }, uris.join('\r\n'));
        await frame.locator('.composer').dispatchEvent('drop', { dataTransfer: dropped });
        await frame.locator('[data-testid="chip"]', { hasText: 'notes/plan.md · 2.1 KB' }).waitFor({ timeout: 15_000 });
        await frame.locator('[data-testid="chip"].chip-folder', { hasText: 'notes/' }).waitFor({ timeout: 15_000 });
        assert.match((await frame.locator('.composer-warn').textContent()) ?? '', /Not added.*hostname/);
        await info.screenshot('dropped-chips');
        const seen = model.requests.length;
        await send(frame, 'Look at the dropped notes.');
        const later = () =>
          model.requests
            .slice(seen)
            .map((r) => JSON.stringify(r.body ?? null))
            .join('\n');
        await until(() => /Look at the dropped notes/.test(later()), { what: "the drop's prompt at the model", timeoutMs: 90_000 });
        await turnIdle(frame);
        assert.match(later(), /notes\/plan\.md/, 'the dropped file reached the model');
        assert.match(later(), /notes\/?["\\ )]/, 'the dropped folder reached the model');
        assert.doesNotMatch(later(), /hostname/, 'the file outside the workspace did not');

        // `@` offers more than files: a folder, the active terminal's output (shell integration), the git changes (the
        // Git extension) and a link; each reaches the model.
        await runCommand(page, 'Terminal: Create New Terminal');
        await page.locator('.xterm-helper-textarea:focus').waitFor({ state: 'attached', timeout: 30_000 });
        await page.keyboard.type('echo TERM-$((6*7))');
        await page.keyboard.press('Enter');
        // The command ended as shell integration saw it: its success mark in the gutter (the terminal draws its text
        // on a canvas: the text is checked at the model).
        await page.locator('.terminal-command-decoration.default-color, .terminal-command-decoration.success').first().waitFor({ timeout: 30_000 });
        await info.screenshot('mention-terminal');
        fs.appendFileSync(path.join(workspace, 'tracked.txt'), 'GIT-CHANGED line\n');
        const input = frame.locator('.composer textarea');
        const mention = async (query: string, item: string | RegExp, chip: string | RegExp) => {
          await input.click();
          await input.pressSequentially(`@${query}`);
          await frame.locator('.menu:not([hidden]) .menu-item', { hasText: item }).first().waitFor({ timeout: 30_000 });
          await frame.locator('.menu .menu-item', { hasText: item }).first().dispatchEvent('mousedown');
          await frame.locator('.composer [data-testid="chip"]', { hasText: chip }).waitFor({ timeout: 15_000 });
        };
        await mention('note', 'notes/', 'notes/');
        await mention('termin', "The active terminal's recent output", 'Terminal:');
        await mention('git', 'Git changes', 'Git changes');
        await mention('https://example.com/spec', 'Link: https://example.com/spec', 'https://example.com/spec');
        // The file search leaves out what .gitignore and files.exclude leave out.
        await input.click();
        await input.pressSequentially('@zz-');
        await frame.locator('.menu:not([hidden]) .menu-item', { hasText: 'zz-kept.md' }).first().waitFor({ timeout: 30_000 });
        const offered = await frame.locator('.menu:not([hidden]) .menu-item').allTextContents();
        assert.ok(!offered.some((t) => /zz-ignored|zz-excluded/.test(t)), `the @ search offered: ${offered.join(' | ')}`);
        await input.fill('');
        // A workspace symbol: TypeScript's server answers once it has loaded the file's project (opened here), so
        // the query is typed again until the symbol is offered.
        await openFile(page, 'shapes.ts');
        const symbolItem = frame.locator('.menu:not([hidden]) .menu-item', { hasText: 'computeTriangleArea' }).first();
        await until(
          async () => {
            await input.click();
            await input.pressSequentially('@computeTriangle');
            if (
              await symbolItem.waitFor({ timeout: 10_000 }).then(
                () => true,
                () => false,
              )
            )
              return true;
            await input.fill('');
            return false;
          },
          { what: 'TypeScript to offer the symbol computeTriangleArea', timeoutMs: 90_000 },
        );
        await symbolItem.dispatchEvent('mousedown');
        const symbolChip = frame.locator('.composer [data-testid="chip"]', { hasText: /computeTriangleArea/ });
        await symbolChip.waitFor({ timeout: 15_000 });
        // The whole declaration (lines 1-3), not only the line of its name.
        assert.match((await symbolChip.textContent()) ?? '', /computeTriangleArea(\(\))? \(shapes\.ts:1-3\)/);
        // The editor's selection (line 4), and the problems once TypeScript has reported line 4's error.
        await selectLines(page, 4, 1);
        await mention('', 'Current selection', 'shapes.ts:4-4');
        await until(async () => /^\s*1\b/.test((await page.locator('[id="status.problems"]').textContent()) ?? ''), { what: "TypeScript's error in the status bar", timeoutMs: 60_000 });
        await mention('', 'Problems', 'Problems (1)');
        await info.screenshot('mention-kinds');
        const mentioned = model.requests.length;
        await input.pressSequentially('Use the context.');
        await input.press('Enter');
        const sent = () =>
          model.requests
            .slice(mentioned)
            .map((r) => JSON.stringify(r.body ?? null))
            .join('\n');
        await until(() => /Use the context/.test(sent()), { what: 'the mentions at the model', timeoutMs: 90_000 });
        await turnIdle(frame);
        for (const [what, seen] of [
          ['the folder', /notes/],
          // (Its command line; the output's stream from shell integration stayed empty in code-server 4.139.)
          ['the terminal command', /echo TERM-\$\(\(6\*7\)\)/],
          ['the git changes', /\+GIT-CHANGED line/],
          ['the link', /https:\/\/example\.com\/spec/],
          ["the symbol's lines", /AREA-LINE/],
          ['the selection', /SELECTED-LINE/],
          ['the problems', /shapes\.ts:4: error: Type 'string' is not assignable to type 'number'/],
        ] as const) {
          assert.match(sent(), seen, `${what} reached the model`);
        }

        // The header's model picker (claude offers it as its "model" config option): Haiku picked, the agent's next
        // request for the prompt names a Haiku model (the one before named Sonnet); the meter shows claude's usage.
        const modelOf = (marker: string) =>
          model.requests
            .map((r) => r.body as { model?: string } | undefined)
            .filter((b) => JSON.stringify(b ?? null).includes(marker))
            .map((b) => b?.model ?? '')
            .at(-1);
        assert.match(modelOf('Use the context') ?? '', /sonnet/, 'the default model');
        const picker = frame.locator('[data-testid="config-model"]');
        await picker.evaluate((el) => {
          (el as HTMLElement & { value: string }).value = 'haiku';
          el.dispatchEvent(new Event('change', { bubbles: true }));
        });
        await until(() => picker.evaluate((el) => (el as HTMLElement).dataset.current === 'haiku'), { what: 'the agent to take Haiku', timeoutMs: 30_000 });
        await send(frame, 'MODEL-SWITCH which model?\nSCENARIO: answer {"text": "Answered by the picked model."}');
        await frame.locator('.msg.agent', { hasText: 'Answered by the picked model.' }).waitFor({ timeout: 90_000 });
        await turnIdle(frame);
        assert.match(modelOf('MODEL-SWITCH') ?? '', /haiku/, 'the picked model did not reach the model server');
        const meter = frame.locator('[data-testid="usage"] [role="meter"]');
        assert.equal(await meter.getAttribute('aria-valuemax'), '200000', "the meter's context size");
        assert.ok(Number(await meter.getAttribute('aria-valuenow')) > 0, "the meter's figure");
        await info.screenshot('model-picked');
      },
    );
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
