/**
 * Host services as a person sees them (Playwright in code-server's workbench): the permission modal with a
 * button per option labelled by its kind (a trap option named against its kind flagged) and "Show Diff" as
 * the default (the request carries a diff: it opens the diff beside, then the dialog asks again with "Allow
 * once" as the default; the diff closes once answered), Cancel explained and the diff's hunks without headers, then — with `agentHost.files.reviewWrites` on — the agent's write shown in the diff
 * editor with Accept / Reject; then a command's "Always allow `npm test`" (the rule it makes, word for word),
 * the same line answered by the rule, a longer one asked again; "Always…" keeping `npm run lint` in this workspace,
 * the two rules approving `npm test && npm run lint` (the card names both and where they are kept), `npm test | sh`
 * asked; the Permission Rules view listing them, its inline Revoke making `npm test` ask again, a card's "Revoke
 * rule" emptying it, Add Permission Rule… (a compound line refused; `npm test` kept for this session, then
 * answering), Filter…. Screenshots: test-artifacts/host-permission-modal.png, host-show-diff.png, host-diff-review.png,
 * host-rule-dialog.png, host-rule-asks-again.png, host-rejected-card.png, host-rule-where.png, host-rule-card.png,
 * host-rules-view.png.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { until } from '../support/wait';
import { askAgent, runCommand, statusBarItem, withWorkbench, type WorkbenchOptions } from './runner';
import { openChat } from './chatUi';
import { diffShown, settled } from './waits';

export async function runHostUiCheck(opts: WorkbenchOptions & { file?: string }): Promise<string[]> {
  const shots: string[] = [];
  const file = opts.file ?? 'reviewed.txt';
  const runLog = path.join(path.dirname(opts.workspace), 'run.log');
  const runs = () => (fs.existsSync(runLog) ? fs.readFileSync(runLog, 'utf8').trim().split('\n') : []);
  // The fixture agent with SMOKE_DIFF=1 sends its edit as a diff with the permission request.
  // It logs the commands it ran beside the workspace: that folder is allowed by name in its sandbox.
  const agents = ((opts.userSettings?.['agentHost.agents'] as { env?: Record<string, string> }[] | undefined) ?? []).map((a) => ({
    ...a,
    env: { ...(a.env ?? {}), SMOKE_DIFF: '1', SMOKE_TRAP: '1', SMOKE_RUN_LOG: runLog },
    sandbox: { allowWrite: [path.dirname(runLog)] },
  }));
  const settings = { ...opts.userSettings, 'agentHost.agents': agents, 'agentHost.files.reviewWrites': true };
  await withWorkbench({ ...opts, userSettings: settings }, async (page, info) => {
    await statusBarItem(page, 'agentHost.status', 60_000);
    await askAgent(page, `Create ${file} please`);

    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 90_000 });
    await settled(dialog, 'the permission dialog');
    shots.push(await info.screenshot('host-permission-modal'));
    const buttons = dialog.locator('.dialog-buttons .monaco-button');
    const labels = (await buttons.allTextContents()).map((l) => l.trim());
    // The default button: styled primary (not secondary) and focused, so Enter presses it.
    const primary = async (scope: typeof dialog) =>
      (
        await scope
          .locator('.dialog-buttons .monaco-button')
          .evaluateAll((els) => els.filter((e) => !e.classList.contains('secondary') && e === document.activeElement).map((e) => e.textContent?.trim()))
      )[0];
    const firstDefault = await primary(dialog);
    const message = (await dialog.locator('.dialog-message-text').first().textContent())?.trim();
    const detail = (
      await dialog
        .locator('.dialog-message-detail')
        .first()
        .textContent()
        .catch(() => '')
    )?.trim();
    console.log(`[host-ui] modal "${message}" detail "${detail}" buttons [${labels.join(' | ')}]`);
    // Buttons say what each option does (its kind); the agent's "Reject" that is really an "always allow"
    // is shown as such, flagged, and explained in the detail.
    if (!labels.includes('Allow once') || !labels.includes('Reject')) throw new Error(`modal buttons are not the agent's options: [${labels.join(' | ')}]`);
    if (!labels.includes(`⚠ Always allow \`${file}\` — “Reject”`)) throw new Error(`the trap option is not shown for what it does: [${labels.join(' | ')}]`);
    if (!/named against what it does/.test(detail ?? '')) throw new Error(`the detail does not explain the flagged option: "${detail}"`);
    if (!/Kind: edit/.test(detail ?? '')) throw new Error(`modal detail lacks the tool kind: "${detail}"`);
    // The file is named relative to the workspace, not by its absolute path.
    if (detail?.includes(opts.workspace) || !detail?.includes(file)) throw new Error(`the modal's file is not workspace-relative: "${detail}"`);
    // The default button (first: Enter) is Show Diff while the diff has not been opened; the detail says what
    // Cancel does and shows the hunks, not the patch's headers.
    if (firstDefault !== 'Show Diff') throw new Error(`"Show Diff" is not the default button of a request with a diff (default "${firstDefault}"): [${labels.join(' | ')}]`);
    if (!/Cancel \(Escape\) stops the turn/.test(detail ?? '')) throw new Error(`the detail does not explain Cancel: "${detail}"`);
    if (!/\+hello from the smoke agent/.test(detail ?? '') || /Index:|====/.test(detail ?? '')) throw new Error(`the detail's diff is not clean: "${detail}"`);

    // Show Diff: the diff editor opens with the proposed text, and the same question comes back.
    await buttons.nth(labels.indexOf('Show Diff')).click();
    await diffShown(page);
    await settled(dialog, 'the permission dialog, asked again');
    shots.push(await info.screenshot('host-show-diff'));
    const proposedTabs = page.locator('.tabs-container .tab', { hasText: 'proposed edit' });
    const tab =
      (
        await proposedTabs
          .first()
          .textContent()
          .catch(() => '')
      )?.trim() ?? '';
    const groups = await page.locator('.editor-group-container').count();
    const again = (await dialog.locator('.dialog-buttons .monaco-button').allTextContents()).map((l) => l.trim());
    console.log(`[host-ui] after Show Diff: tab "${tab}" (${groups} editor groups), dialog again [${again.join(' | ')}]`);
    if (!/proposed edit/.test(tab)) throw new Error(`the diff editor did not open on the proposed edit (tab "${tab}")`);
    if (groups < 2) throw new Error(`the diff did not open beside the editor (${groups} editor group)`);
    // Asked again exactly as before: the same buttons in the same order, Show Diff still the default.
    const againDefault = await primary(dialog);
    if (againDefault !== 'Show Diff' || again.join('|') !== labels.join('|')) {
      throw new Error(`the dialog came back changed (default "${againDefault}"): [${again.join(' | ')}] instead of [${labels.join(' | ')}]`);
    }
    if (fs.existsSync(path.join(opts.workspace, file))) throw new Error(`${file} was written before anyone allowed it`);
    await dialog.locator('.dialog-buttons .monaco-button').nth(again.indexOf('Allow once')).click();

    // The write is reviewed: a diff editor with the proposed text and an Accept / Reject notification.
    const accept = page.locator('.monaco-dialog-box .dialog-buttons .monaco-button', { hasText: /^Accept$/ }).first();
    await accept.waitFor({ state: 'visible', timeout: 60_000 }).catch(async (error: Error) => {
      await info.screenshot('host-no-review').catch(() => undefined);
      throw error;
    });
    await diffShown(page);
    await settled(dialog, 'the review dialog');
    shots.push(await info.screenshot('host-diff-review'));
    const target = path.join(opts.workspace, file);
    if (fs.existsSync(target)) throw new Error(`${file} was written before the review was accepted`);
    await accept.click();
    await until(() => fs.existsSync(target), { what: `${file} written after Accept`, timeoutMs: 30_000, intervalMs: 250 });
    console.log(`[host-ui] ${file} written after Accept: ${JSON.stringify(fs.readFileSync(target, 'utf8'))}`);
    // Answered: the diffs the request opened are closed again.
    await until(async () => (await proposedTabs.count()) === 0, { what: 'the proposed-edit diff tabs closed after the answer', timeoutMs: 15_000, intervalMs: 250 });

    // "Always allow" says word for word the rule it makes, and the rule answers that line only.
    await askAgent(page, 'run: npm test');
    await dialog.waitFor({ state: 'visible', timeout: 90_000 });
    await settled(dialog, 'the permission dialog of a command');
    shots.push(await info.screenshot('host-rule-dialog'));
    const runLabels = (await buttons.allTextContents()).map((l) => l.trim());
    const runDetail = (await dialog.locator('.dialog-message-detail').first().textContent())?.trim() ?? '';
    console.log(`[host-ui] command modal: buttons [${runLabels.join(' | ')}] detail "${runDetail}"`);
    for (const want of ['Always allow `npm test`', 'Always allow commands starting with `npm test …`']) {
      if (!runLabels.includes(want)) throw new Error(`the dialog does not offer "${want}": [${runLabels.join(' | ')}]`);
    }
    if (!/exactly `npm test`/.test(runDetail)) throw new Error(`the detail does not say what the rule covers: "${runDetail}"`);
    // Enter never approves a command: the default button is Reject.
    const runDefault = await primary(dialog);
    if (runDefault !== 'Reject') throw new Error(`the default button of a command's dialog is "${runDefault}", not Reject`);
    await buttons.nth(runLabels.indexOf('Always allow `npm test`')).click();
    await until(() => runs().length === 1, { what: 'the agent answered for `npm test`', timeoutMs: 30_000, intervalMs: 250 });
    await askAgent(page, 'run: npm test');
    await until(() => runs().length === 2, { what: 'the rule answered the same line', timeoutMs: 30_000, intervalMs: 250 });
    if (await dialog.isVisible()) throw new Error('the same line asked again despite the rule');
    // The agent heard "once" both times: our exact rule answers, the agent never makes a broader one of its own.
    if (runs().join('\n') !== 'allow-once npm test\nallow-once npm test') throw new Error(`unexpected answers: ${runs().join(' / ')}`);
    await askAgent(page, 'run: npm test --script-shell=./evil.sh');
    await dialog.waitFor({ state: 'visible', timeout: 60_000 });
    await settled(dialog, 'the dialog of a longer line');
    shots.push(await info.screenshot('host-rule-asks-again'));
    const evilLabels = (await buttons.allTextContents()).map((l) => l.trim());
    await buttons.nth(evilLabels.indexOf('Reject')).click();
    await until(() => runs().length === 3, { what: 'the agent answered for the longer line', timeoutMs: 30_000, intervalMs: 250 });
    if (runs()[2] !== 'reject-once npm test --script-shell=./evil.sh') throw new Error(`the longer line was not asked and rejected: ${runs()[2]}`);
    // In the chat, the rejected call's card says "rejected", not "failed".
    const chat = await openChat(page);
    const rejected = chat.locator('.entry.tool', { hasText: 'evil.sh' }).locator('.status.rejected');
    await rejected.waitFor({ timeout: 30_000 });
    if ((await rejected.textContent())?.trim() !== 'rejected') throw new Error(`the rejected call's card says "${await rejected.textContent()}"`);
    shots.push(await info.screenshot('host-rejected-card'));
    // "Always…" keeps a rule where the person picks: `npm run lint` in this workspace, through the follow-up quick pick.
    await askAgent(page, 'run: npm run lint');
    await dialog.waitFor({ state: 'visible', timeout: 60_000 });
    await settled(dialog, 'the dialog of `npm run lint`');
    await buttons.nth((await buttons.allTextContents()).map((l) => l.trim()).indexOf('Always…')).click();
    const whereRow = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Always allow `npm run lint`' }).filter({ hasText: 'this workspace' });
    await whereRow.waitFor({ state: 'visible', timeout: 30_000 });
    const whereRows = (await page.locator('.quick-input-widget .monaco-list-row').allTextContents()).map((t) => t.trim());
    console.log(`[host-ui] "Always…" choices: ${whereRows.join(' / ')}`);
    for (const where of ['this session', 'everywhere']) if (!whereRows.some((r) => r.includes(where))) throw new Error(`"Always…" does not offer "${where}": ${whereRows.join(' / ')}`);
    shots.push(await info.screenshot('host-rule-where'));
    await whereRow.first().click();
    await until(() => runs().length === 4, { what: 'the agent answered for `npm run lint`', timeoutMs: 30_000, intervalMs: 250 });
    if (runs()[3] !== 'allow-once npm run lint') throw new Error(`\`npm run lint\` was not allowed: ${runs()[3]}`);
    // Workspace rules for `npm test` and `npm run lint` approve `npm test && npm run lint` with no dialog.
    await askAgent(page, 'run: npm test && npm run lint');
    await until(() => runs().length === 5, { what: 'the rules answered `npm test && npm run lint`', timeoutMs: 30_000, intervalMs: 250 });
    if (runs()[4] !== 'allow-once npm test && npm run lint' || (await dialog.isVisible())) throw new Error(`a line of approved commands asked: ${runs()[4]}`);
    // A line with a command no rule approves asks, in the real dialog (the other lines of the issue: test/unit/shellLines.test.ts).
    await askAgent(page, 'run: npm test | sh');
    await dialog.waitFor({ state: 'visible', timeout: 60_000 });
    await settled(dialog, 'the dialog of `npm test | sh`');
    const pipeDetail = (await dialog.locator('.dialog-message-detail').first().textContent())?.trim() ?? '';
    if (!/cannot become a rule \(`sh` runs code/.test(pipeDetail)) throw new Error(`the dialog of \`npm test | sh\` does not say why no rule answers: "${pipeDetail}"`);
    await buttons.nth((await buttons.allTextContents()).map((l) => l.trim()).indexOf('Reject')).click();
    await until(() => runs().length === 6, { what: 'the agent answered for `npm test | sh`', timeoutMs: 30_000, intervalMs: 250 });
    if (runs()[5] !== 'reject-once npm test | sh') throw new Error(`\`npm test | sh\` was not asked: ${runs()[5]}`);
    // The calls rules answered name each rule and where it is kept, with the way to revoke it.
    const byRule = chat.locator('.entry.tool .tool-rule');
    await until(async () => (await byRule.count()) === 2, { what: 'two cards answered by rules', timeoutMs: 30_000, intervalMs: 250 });
    const testRule = 'always allow execute `npm test` (smoke-agent, this workspace)';
    const cards = (await byRule.allTextContents()).map((t) => t.trim());
    if (cards[0] !== `Allowed by a rule: ${testRule} Revoke rule`) throw new Error(`the \`npm test\` card says "${cards[0]}"`);
    if (cards[1] !== `Allowed by a rule: ${testRule} + always allow execute \`npm run lint\` (smoke-agent, this workspace) Revoke rule`) throw new Error(`the compound card says "${cards[1]}"`);
    await byRule.nth(1).scrollIntoViewIfNeeded();
    shots.push(await info.screenshot('host-rule-card'));
    // The rules view lists both under "this workspace"; its inline Revoke on `npm test` takes it away.
    // (Hidden until asked for: the chat view's "…" menu, or the palette.)
    await runCommand(page, 'Atrium: Show Permission Rules');
    const rulesHeader = page.locator('.pane-header', { hasText: 'Permission Rules' });
    if ((await rulesHeader.getAttribute('aria-expanded')) !== 'true') await rulesHeader.click();
    const rulesPane = page.locator('.pane', { has: rulesHeader });
    const ruleRow = (text: string) => rulesPane.locator('.monaco-list-row', { hasText: text });
    await ruleRow('Always allow `npm run lint`').waitFor({ state: 'visible', timeout: 30_000 });
    const listed = (await rulesPane.locator('.monaco-list-row').allTextContents()).map((t) => t.trim());
    console.log(`[host-ui] rules view: ${listed.join(' / ')}`);
    if (!listed.some((t) => t.startsWith('This workspace') && t.includes('2 rule(s)'))) throw new Error(`the rules view does not list two workspace rules: ${listed.join(' / ')}`);
    shots.push(await info.screenshot('host-rules-view'));
    await ruleRow('Always allow `npm test`').hover();
    await ruleRow('Always allow `npm test`').locator('.action-label[aria-label="Revoke Permission Rule"]').click();
    await until(async () => (await ruleRow('Always allow `npm test`').count()) === 0, { what: 'the revoked rule gone from the view', timeoutMs: 15_000, intervalMs: 250 });
    // Revoked: `npm test` asks again (the real dialog), and `npm test && npm run lint` no longer is approved.
    await askAgent(page, 'run: npm test');
    await dialog.waitFor({ state: 'visible', timeout: 60_000 });
    await settled(dialog, 'the dialog after the rule was revoked');
    await buttons.nth((await buttons.allTextContents()).map((l) => l.trim()).indexOf('Reject')).click();
    await until(() => runs().length === 7, { what: 'the agent answered for `npm test` after the revoke', timeoutMs: 30_000, intervalMs: 250 });
    if (runs()[6] !== 'reject-once npm test') throw new Error(`after the revoke, \`npm test\` was not asked: ${runs()[6]}`);
    // The card's "Revoke rule" still revokes: `npm run lint`, answered by its rule, then revoked from its card, leaves the view.
    await askAgent(page, 'run: npm run lint');
    await until(() => runs().length === 8, { what: 'the rule answered `npm run lint`', timeoutMs: 30_000, intervalMs: 250 });
    if (runs()[7] !== 'allow-once npm run lint' || (await dialog.isVisible())) throw new Error(`\`npm run lint\` asked despite its rule: ${runs()[7]}`);
    await until(async () => (await byRule.count()) === 3, { what: 'the `npm run lint` card answered by its rule', timeoutMs: 30_000, intervalMs: 250 });
    await byRule.nth(2).locator('[data-action="revoke-rule"]').click();
    await until(async () => (await ruleRow('Always allow').count()) === 0, { what: 'the rule revoked from its card gone from the view', timeoutMs: 15_000, intervalMs: 250 });
    // Add Rule… in the view's title: the command is read by the rule parser (a compound line is refused, said why), kept for this session.
    await rulesHeader.hover();
    await rulesHeader.locator('.action-label[aria-label="Add Permission Rule…"]').click();
    const quick = page.locator('.quick-input-widget');
    await quick.locator('.monaco-list-row', { hasText: 'Always allow' }).first().click();
    await quick
      .locator('.monaco-list-row', { hasText: /^execute$/ })
      .first()
      .click();
    await quick.locator('input').fill('npm test && rm -rf x');
    await quick.locator('.quick-input-message', { hasText: 'This cannot be a rule: several commands' }).waitFor({ timeout: 15_000 });
    await quick.locator('input').fill('npm test');
    const quickMessage = async () => ((await quick.locator('.quick-input-message').textContent()) ?? '').trim();
    await until(async () => !(await quickMessage()).includes('This cannot be a rule'), { what: 'the plain command accepted', timeoutMs: 15_000, intervalMs: 100 });
    await page.keyboard.press('Enter');
    await quick.locator('.monaco-list-row', { hasText: 'this session' }).first().click();
    const sessionRule = rulesPane.locator('.monaco-list-row', { hasText: 'Always allow `npm test`' });
    await sessionRule.waitFor({ state: 'visible', timeout: 15_000 });
    const afterAdd = (await rulesPane.locator('.monaco-list-row').allTextContents()).map((t) => t.trim());
    if (!afterAdd.some((t) => t.startsWith('This session') && t.includes('1 rule(s)'))) throw new Error(`the added rule is not listed under This session: ${afterAdd.join(' / ')}`);
    await askAgent(page, 'run: npm test');
    await until(() => runs().length === 9, { what: 'the added rule answered `npm test`', timeoutMs: 30_000, intervalMs: 250 });
    if (runs()[8] !== 'allow-once npm test' || (await dialog.isVisible())) throw new Error(`the rule added by hand did not answer: ${runs()[8]}`);
    // Filter… keeps the rules whose text has the words: `lint` hides the session's `npm test`, and the view says it filters.
    await rulesHeader.hover();
    await rulesHeader.locator('.action-label[aria-label="Filter Permission Rules…"]').click();
    await quick.locator('input').fill('lint');
    await page.keyboard.press('Enter');
    await until(async () => (await sessionRule.count()) === 0, { what: 'the filter hiding `npm test`', timeoutMs: 15_000, intervalMs: 250 });
    const filtered = ((await rulesHeader.textContent()) ?? '').trim();
    if (!filtered.includes('filter: lint')) throw new Error(`the rules view does not say it filters: "${filtered}"`);
  });
  return shots;
}
