/**
 * The vscode-test launcher (test/vscode/launcher.ts) takes the desktop `code` arguments exactly as
 * @vscode/test-electron's runTests passes them; and the code-server installs it chooses from.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { codeServerInstall, CODE_SERVERS } from '../vscode/codeServers';
import { parseDesktopArgs } from '../vscode/launcher';

test('parses the arguments runTests passes: launchArgs first (the folder), then its own flags', () => {
  const a = parseDesktopArgs([
    '/ws/folder',
    '--user-data-dir=/ud',
    '--extensions-dir=/ext',
    '--no-sandbox',
    '--disable-gpu-sandbox',
    '--disable-updates',
    '--skip-welcome',
    '--skip-release-notes',
    '--disable-workspace-trust',
    '--extensionTestsPath=/repo/node_modules/@vscode/test-cli/out/runner.cjs',
    '--extensionDevelopmentPath=/repo',
  ]);
  assert.deepEqual(a, {
    developmentPaths: ['/repo'],
    testsPath: '/repo/node_modules/@vscode/test-cli/out/runner.cjs',
    userDataDir: '/ud',
    extensionsDir: '/ext',
    folder: '/ws/folder',
    disableWorkspaceTrust: true,
    version: false,
    ignored: ['--no-sandbox', '--disable-gpu-sandbox', '--disable-updates', '--skip-welcome', '--skip-release-notes'],
  });
});

test('takes `--flag value` as well, several development paths, relative paths against the cwd', () => {
  const a = parseDesktopArgs(['--extensionDevelopmentPath', 'a', '--extensionDevelopmentPath=/b', '--extensionTestsPath', 't.js', 'ws', 'extra']);
  assert.deepEqual(a.developmentPaths, [path.resolve('a'), '/b']);
  assert.equal(a.testsPath, path.resolve('t.js'));
  assert.equal(a.folder, path.resolve('ws'));
  assert.deepEqual(a.ignored, ['extra']);
  assert.equal(a.disableWorkspaceTrust, false);
  assert.throws(() => parseDesktopArgs(['--extensionTestsPath']), /needs a value/);
  assert.equal(parseDesktopArgs(['--version']).version, true);
});

test('the code-server installs: current and min under .tools, each on the Node of its engines', () => {
  assert.deepEqual(Object.keys(CODE_SERVERS), ['current', 'min']);
  const min = codeServerInstall('min');
  assert.match(min.entry, /\.tools\/code-server-min\/node_modules\/code-server\/out\/node\/entry\.js$/);
  const current = codeServerInstall('current');
  assert.match(current.entry, /\.tools\/code-server\/node_modules\/code-server\/out\/node\/entry\.js$/);
});
