/**
 * The workspace boundary (src/host/workspacePaths.ts) against symlink and `..` tricks, directly, through the
 * FileService, and end to end through the headless CLI with the hostile ACP agent writing to a dangling link.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { FileService } from '../../src/host/fileService';
import { isInsideWin32, OutsideWorkspaceError, resolveInWorkspace, resolvePhysical, windowsPathProblem } from '../../src/host/workspacePaths';
import { cliPath, hostileAgent, scratchDir } from '../support/paths';

/** A scratch folder with `ws/` (the workspace) and `outside/` next to it, both resolved (no symlinked tmp). */
function layout() {
  const base = fs.realpathSync(scratchDir('paths'));
  const ws = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
  fs.mkdirSync(path.join(outside, 'dir'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'src', 'a.ts'), 'a\n');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret\n');
  return { base, ws, outside, cleanup: () => fs.rmSync(base, { recursive: true, force: true }) };
}

/** Joins without normalizing (path.join would resolve `..` lexically before the code under test sees it). */
const raw = (...parts: string[]) => parts.join(path.sep);

const refused = (fn: () => unknown) => assert.throws(fn, (e: unknown) => e instanceof OutsideWorkspaceError);

describe('workspace boundary: symlinks and ..', () => {
  it('plain paths: inside allowed (absolute and relative), .. out of the root refused', () => {
    const { ws, outside, cleanup } = layout();
    try {
      assert.equal(resolveInWorkspace(path.join(ws, 'src', 'a.ts'), [ws]), path.join(ws, 'src', 'a.ts'));
      assert.equal(resolveInWorkspace('src/new.ts', [ws]), path.join(ws, 'src', 'new.ts'));
      assert.equal(resolveInWorkspace(raw(ws, 'src', '..', 'b.ts'), [ws]), path.join(ws, 'b.ts'));
      assert.equal(resolveInWorkspace(path.join(ws, '..foo'), [ws]), path.join(ws, '..foo'), 'a name starting with .. is a name');
      refused(() => resolveInWorkspace(raw(ws, '..', 'outside', 'secret.txt'), [ws]));
      refused(() => resolveInWorkspace('src/../../outside/x.txt', [ws]));
      refused(() => resolveInWorkspace(path.join(outside, 'secret.txt'), [ws]));
      refused(() => resolveInWorkspace('x.txt', []));
    } finally {
      cleanup();
    }
  });

  it('a dangling link to a file outside is refused; to a file inside it resolves to the target', () => {
    const { ws, outside, cleanup } = layout();
    try {
      fs.symlinkSync(path.join(outside, 'pwned.txt'), path.join(ws, 'notes.txt'));
      refused(() => resolveInWorkspace(path.join(ws, 'notes.txt'), [ws]));
      refused(() => resolveInWorkspace('notes.txt', [ws]));
      // Relative target, dangling, climbing out.
      fs.symlinkSync('../../outside/rel-pwned.txt', path.join(ws, 'src', 'rel.txt'));
      refused(() => resolveInWorkspace(path.join(ws, 'src', 'rel.txt'), [ws]));
      // A chain of links whose last hop dangles outside.
      fs.symlinkSync(path.join(ws, 'notes.txt'), path.join(ws, 'chain.txt'));
      refused(() => resolveInWorkspace(path.join(ws, 'chain.txt'), [ws]));
      // Dangling to inside: allowed, and the answer is the target (the write goes there, not through the link).
      fs.symlinkSync('src/later.ts', path.join(ws, 'later-link.ts'));
      assert.equal(resolveInWorkspace(path.join(ws, 'later-link.ts'), [ws]), path.join(ws, 'src', 'later.ts'));
      assert.equal(fs.existsSync(path.join(outside, 'pwned.txt')), false);
    } finally {
      cleanup();
    }
  });

  it('an existing link to outside, a symlinked parent folder and .. after a link are refused', () => {
    const { ws, outside, cleanup } = layout();
    try {
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'secret-link.txt'));
      refused(() => resolveInWorkspace(path.join(ws, 'secret-link.txt'), [ws]));
      fs.symlinkSync(outside, path.join(ws, 'out'));
      refused(() => resolveInWorkspace(path.join(ws, 'out', 'new.txt'), [ws]));
      refused(() => resolveInWorkspace(path.join(ws, 'out', 'dir', 'deeper', 'new.txt'), [ws]));
      // ws/dirlink/../x: lexically ws/x, but the kernel climbs from outside/dir to outside/x.
      fs.symlinkSync(path.join(outside, 'dir'), path.join(ws, 'dirlink'));
      refused(() => resolveInWorkspace(raw(ws, 'dirlink', '..', 'secret.txt'), [ws]));
      refused(() => resolveInWorkspace('dirlink/../x.txt', [ws]));
      assert.equal(resolvePhysical(raw(ws, 'dirlink', '..', 'secret.txt')), path.join(outside, 'secret.txt'));
      // A link inside that points inside stays usable, also with .. after it.
      fs.symlinkSync(path.join(ws, 'src'), path.join(ws, 'srclink'));
      assert.equal(resolveInWorkspace(path.join(ws, 'srclink', 'a.ts'), [ws]), path.join(ws, 'src', 'a.ts'));
      assert.equal(resolveInWorkspace(raw(ws, 'srclink', '..', 'top.txt'), [ws]), path.join(ws, 'top.txt'));
    } finally {
      cleanup();
    }
  });

  it('a symlink loop is refused, and a workspace root that is itself a link keeps working', () => {
    const { base, ws, cleanup } = layout();
    try {
      fs.symlinkSync(path.join(ws, 'loop-b'), path.join(ws, 'loop-a'));
      fs.symlinkSync(path.join(ws, 'loop-a'), path.join(ws, 'loop-b'));
      assert.throws(() => resolveInWorkspace(path.join(ws, 'loop-a'), [ws]), /too many symbolic links/);
      const rootLink = path.join(base, 'ws-link');
      fs.symlinkSync(ws, rootLink);
      // Answered under the root as configured (what the editor's URIs use), resolved below it.
      assert.equal(resolveInWorkspace(path.join(rootLink, 'src', 'a.ts'), [rootLink]), path.join(rootLink, 'src', 'a.ts'));
      assert.equal(resolveInWorkspace(path.join(ws, 'src', 'a.ts'), [rootLink]), path.join(rootLink, 'src', 'a.ts'));
    } finally {
      cleanup();
    }
  });

  it('FileService: a write to a dangling link outside fails and creates nothing; inside it writes the target', async () => {
    const { ws, outside, cleanup } = layout();
    try {
      const files = new FileService(() => [ws]);
      fs.symlinkSync(path.join(outside, 'pwned.txt'), path.join(ws, 'notes.txt'));
      await assert.rejects(files.writeTextFile({ path: path.join(ws, 'notes.txt'), content: 'pwned' }), /outside the workspace/);
      assert.equal(fs.existsSync(path.join(outside, 'pwned.txt')), false, 'the write landed outside the workspace');
      fs.symlinkSync(outside, path.join(ws, 'out'));
      await assert.rejects(files.writeTextFile({ path: path.join(ws, 'out', 'x', 'pwned.txt'), content: 'pwned' }), /outside the workspace/);
      assert.equal(fs.existsSync(path.join(outside, 'x')), false);
      fs.symlinkSync(path.join(ws, 'src', 'target.txt'), path.join(ws, 'inside-link.txt'));
      await files.writeTextFile({ path: path.join(ws, 'inside-link.txt'), content: 'fine\n' });
      assert.equal(fs.readFileSync(path.join(ws, 'src', 'target.txt'), 'utf8'), 'fine\n');
      assert.ok(fs.lstatSync(path.join(ws, 'inside-link.txt')).isSymbolicLink(), 'the link itself stays a link');
    } finally {
      cleanup();
    }
  });
});

describe('Windows-style paths (checked on Windows; the rules are tested here)', () => {
  it('device and verbatim namespaces, alternate streams, device names and trailing dots or spaces are refused', () => {
    const refused: [string, RegExp][] = [
      ['\\\\?\\C:\\ws\\..\\secret.txt', /verbatim namespace/],
      ['\\\\.\\pipe\\agent', /verbatim namespace/],
      ['//?/C:/ws/a.txt', /verbatim namespace/],
      ['\\??\\C:\\ws\\a.txt', /verbatim namespace/],
      ['C:\\ws\\a.txt:hidden', /alternate data stream/],
      ['C:\\ws\\a.txt::$DATA', /alternate data stream/],
      ['C:\\ws\\NUL.txt', /device/],
      ['C:\\ws\\src\\com1', /device/],
      ['C:\\ws\\LPT9.log', /device/],
      ['C:\\ws\\secret.', /dot or space/],
      ['C:\\ws\\.. \\outside.txt', /dot or space/],
      ['C:\\ws\\src \\a.ts', /dot or space/],
    ];
    for (const [p, why] of refused) assert.match(windowsPathProblem(p) ?? '(accepted)', why, p);
    for (const p of ['C:\\ws\\src\\a.ts', 'C:/ws/src/a.ts', 'src\\a..b.ts', '.\\x.ts', '..\\ws\\x.ts', '\\\\server\\share\\x.txt', 'C:\\ws\\console.log.ts']) {
      assert.equal(windowsPathProblem(p), undefined, p);
    }
  });

  it('inside by Windows rules: case-insensitive, either slash; UNC, other drives and prefixes of the name are outside', () => {
    assert.equal(isInsideWin32('c:\\WS\\Src\\a.ts', 'C:\\ws'), true);
    assert.equal(isInsideWin32('C:/ws/src/a.ts', 'C:\\ws'), true);
    assert.equal(isInsideWin32('C:\\ws', 'C:\\ws'), true);
    assert.equal(isInsideWin32('C:/ws/../other/a.ts', 'C:\\ws'), false);
    assert.equal(isInsideWin32('C:\\wsx\\a.ts', 'C:\\ws'), false);
    assert.equal(isInsideWin32('D:\\ws\\a.ts', 'C:\\ws'), false);
    assert.equal(isInsideWin32('\\\\server\\share\\ws\\a.ts', 'C:\\ws'), false);
    assert.equal(isInsideWin32('\\\\server\\share\\ws\\a.ts', '\\\\SERVER\\Share\\ws'), true);
  });
});

describe('a parent folder turned into a link mid-turn', () => {
  it('each request resolves afresh: after the folder becomes a link to outside, the next write is refused', async () => {
    const { ws, outside, cleanup } = layout();
    try {
      const files = new FileService(() => [ws]);
      fs.mkdirSync(path.join(ws, 'gen'));
      await files.writeTextFile({ path: path.join(ws, 'gen', 'a.txt'), content: 'first\n' });
      assert.equal(fs.readFileSync(path.join(ws, 'gen', 'a.txt'), 'utf8'), 'first\n');
      // Between two requests of one turn, the folder is swapped for a link to outside.
      fs.rmSync(path.join(ws, 'gen'), { recursive: true });
      fs.symlinkSync(outside, path.join(ws, 'gen'));
      await assert.rejects(files.writeTextFile({ path: path.join(ws, 'gen', 'b.txt'), content: 'pwned' }), /outside the workspace/);
      await assert.rejects(files.readTextFile({ path: path.join(ws, 'gen', 'secret.txt') }), /outside the workspace/);
      assert.equal(fs.existsSync(path.join(outside, 'b.txt')), false, 'the write landed outside the workspace');
    } finally {
      cleanup();
    }
  });
});

describe('workspace boundary through the headless CLI', () => {
  it('the hostile agent writing to a dangling link gets an error and nothing is created outside', { timeout: 60_000 }, async () => {
    assert.ok(fs.existsSync(cliPath), 'dist/cli.js is missing: npm run build');
    const { base, ws, outside, cleanup } = layout();
    try {
      const link = path.join(ws, 'notes.txt');
      const escaped = path.join(outside, 'pwned.txt');
      fs.symlinkSync(escaped, link);
      const frames = path.join(base, 'frames.ndjson');
      const args = ['--command', process.execPath, '--arg', hostileAgent, '--arg', 'normal', '--env', `HOSTILE_LOG=${frames}`];
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [cliPath, ...args, '--cwd', ws, '--approve-all', '--format', 'json', `please write ${link}`], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      assert.equal(run.code, 0, `cli: ${run.stderr}`);
      assert.equal(fs.existsSync(escaped), false, 'the write landed outside the workspace');
      assert.deepEqual(fs.readdirSync(outside).sort(), ['dir', 'secret.txt']);
      assert.ok(fs.lstatSync(link).isSymbolicLink(), 'the link was replaced');
      // The agent's fs/write_text_file was answered with an error naming the refusal.
      const recorded = fs
        .readFileSync(frames, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { writeAnswer?: { error?: { code: number; message: string } } });
      const answer = recorded.find((f) => f.writeAnswer)?.writeAnswer;
      assert.ok(answer?.error, `the write was not refused: ${JSON.stringify(answer)}`);
      assert.equal(answer.error.code, -32602);
      assert.match(answer.error.message, /outside the workspace/);
      // And the CLI reported the tool call as failed.
      const events = run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; outcome?: string; entity?: { kind: string; title?: string; detail?: string } });
      assert.equal(events.at(-1)?.outcome, 'end_turn');
      assert.match(run.stdout, /"status":"failed"/);
      // The refusal is said in the transcript (a notice with the method, the path and the reason) and the log.
      const refused = events.find((e) => e.entity?.kind === 'notice' && e.entity.title === 'Refused');
      assert.ok(refused, `no "Refused" notice in the transcript: ${run.stdout.slice(0, 500)}`);
      assert.match(refused.entity!.detail ?? '', /^fs\/write_text_file: Refused: .*notes\.txt .*outside the workspace/);
      assert.match(run.stderr, /Refused the agent's fs\/write_text_file: .*notes\.txt/);
    } finally {
      cleanup();
    }
  });
});
