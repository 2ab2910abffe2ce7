/**
 * The extension as a user gets it: `npm run package` builds the .vsix (the production bundle; the script
 * checks the file list and the size), code-server installs it into a fresh extensions dir, and the INSTALLED
 * extension — no development path is loaded — runs one chat turn with the long-transcript fixture agent (an
 * external process named in settings, so nothing of out/test has to be inside the package).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot, scratchWorkspace } from '../support/paths';
import { longAgentConfig } from './chatLong';
import { openChat, send, turnIdle, waitText } from './chatUi';
import { withWorkbench } from './runner';

const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { publisher: string; name: string; version: string };

/** Runs node with `args` in the repository; a failure carries the command's output. */
function node(args: string[]): string {
  try {
    return execFileSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8', stdio: 'pipe', timeout: 120_000 });
  } catch (error) {
    const e = error as Error & { stdout?: string; stderr?: string };
    throw new Error(`node ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

test('the packaged .vsix installs into code-server and the installed extension runs a chat turn', { timeout: 180_000 }, async () => {
  const { scratch, workspace } = scratchWorkspace('vsix');
  const vsix = path.join(scratch, `${pkg.name}-${pkg.version}.vsix`);
  try {
    const t0 = Date.now();
    let report: string;
    try {
      report = node([path.join(repoRoot, 'scripts/package.mjs'), '--out', vsix]);
    } finally {
      // Packaging left the production bundle in dist/; the other tests (and a debugger) want the development one.
      node(['esbuild.mjs']);
    }
    console.log(`[vsix] ${report.trim().split('\n').at(-1)} (packaged in ${Date.now() - t0} ms)`);

    await withWorkbench(
      {
        vsix,
        workspace,
        userSettings: {
          'agentHost.agents': [longAgentConfig('long-agent')],
          'agentHost.defaultAgent': 'long-agent',
          'agentHost.sessions.stateDir': path.join(scratch, 'state'),
        },
        timeoutMs: 150_000,
      },
      async (page, info) => {
        const installed = path.join(info.scratch, 'extensions', `${pkg.publisher}.${pkg.name}-${pkg.version}`);
        assert.ok(fs.existsSync(path.join(installed, 'dist', 'extension.js')), `the vsix is installed at ${installed}`);
        // The extension's page is the short README (the rest is in docs/), with the two commands of a fresh machine.
        const readmeName = fs.readdirSync(installed).find((f) => f.toLowerCase() === 'readme.md');
        assert.ok(readmeName, `a readme in ${installed}`);
        const readme = fs.readFileSync(path.join(installed, readmeName), 'utf8');
        const readmeLines = readme.trimEnd().split('\n').length;
        assert.ok(readmeLines <= 200, `the installed readme has ${readmeLines} lines, over 200`);
        assert.match(readme, /^npm start /m, 'the installed readme shows npm start');
        assert.match(readme, /^npm test /m, 'the installed readme shows npm test');
        assert.match(readme, /\]\([^)]*docs\/security\.md\)/, 'the installed readme links to docs/security.md');

        const chat = await openChat(page);
        await chat.locator('.conn-ready').waitFor({ timeout: 60_000 });
        await send(chat, 'LONG 2 0');
        await waitText(chat, '.msg.agent', 'LONG-END 2 messages, 0 tool calls.', 30_000);
        // The agent's markdown went through the bundled renderer: its code block is there.
        await waitText(chat, '.msg.agent pre code', 'export function part1', 10_000);
        await turnIdle(chat, 30_000);

        // The page was served from the installed copy, not from the repository.
        const scripts = await chat.evaluate(() => [...document.scripts].map((s) => decodeURIComponent(s.src)).filter(Boolean));
        const expected = path.join(installed, 'dist', 'webview', 'chat.js');
        assert.ok(
          scripts.some((s) => s.includes(expected)),
          `the chat page's script is ${expected}; the page loaded ${scripts.join(', ')}`,
        );
        assert.ok(!scripts.some((s) => s.includes(path.join(repoRoot, 'dist'))), 'the chat page loaded a script from the repository');
        await info.screenshot('vsix-chat');
      },
    );
    console.log(`[vsix] whole test ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
