// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${env:…}, ${input:…} and the other variables are mcp.json's own syntax, tested here as text.
/**
 * The CLI's `--mcp-config FILE` (repeatable) and `--no-mcp`: the files read and merged in order, their variables
 * resolved (env, the --cwd as workspaceFolder, the home folder), an `${input:…}` refused by name (the CLI does not
 * prompt), wrong entries warned about while the rest is passed, unreadable files and bad JSON refused naming the
 * file. Then through the built CLI (dist/cli.js) to an ACP agent of our own (the hostile fixture, which logs every
 * frame it receives): what session/new carries, for a prompt and for `task`, and what `--no-mcp` leaves out.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { mcpServersFromFlags, type McpFlagContext } from '../../src/cli/agentOptions';
import { runCli } from '../support/cli';
import { cliPath, hostileAgent, scratchDir } from '../support/paths';

const root = scratchDir('cli-mcp');
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** Files by name, read through the context (no disk). */
function context(files: Record<string, string>, over: Partial<McpFlagContext> = {}): McpFlagContext & { reads: string[] } {
  const reads: string[] = [];
  return {
    cwd: '/projects/shop',
    env: { TICKET_TOKEN: 'tok-7' },
    userHome: '/home/ann',
    read: (file) => {
      reads.push(file);
      const text = files[file];
      if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: 'ENOENT' });
      return text;
    },
    reads,
    ...over,
  };
}
const json = (v: unknown) => JSON.stringify(v);

describe('mcpServersFromFlags', () => {
  test('without --mcp-config: no servers, no file read (the CLI never reads .vscode/mcp.json by itself)', async () => {
    const ctx = context({ '.vscode/mcp.json': json({ servers: { repo: { command: 'evil' } } }) });
    assert.deepEqual(await mcpServersFromFlags({}, ctx), { servers: [], warnings: [] });
    assert.deepEqual(await mcpServersFromFlags({ 'mcp-config': [] }, ctx), { servers: [], warnings: [] });
    assert.deepEqual(ctx.reads, []);
  });

  test('files merged in order (a later file wins by name), variables resolved: env, workspaceFolder (--cwd), userHome', async () => {
    const ctx = context({
      'team.json': json({
        servers: {
          tickets: { command: 'old-tickets' },
          docs: { type: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer ${env:TICKET_TOKEN}' } },
        },
      }),
      'mine.json': json({
        mcpServers: { tickets: { command: '${userHome}/bin/tickets', args: ['--root', '${workspaceFolder}'], env: { TOKEN: '${env:TICKET_TOKEN}' } } },
      }),
    });
    const r = await mcpServersFromFlags({ 'mcp-config': ['team.json', 'mine.json'] }, ctx);
    assert.deepEqual(r.warnings, []);
    assert.deepEqual(r.servers, [
      { name: 'docs', source: 'cli', origin: 'team.json', type: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer tok-7' } },
      { name: 'tickets', source: 'cli', origin: 'mine.json', type: 'stdio', command: '/home/ann/bin/tickets', args: ['--root', '/projects/shop'], env: { TOKEN: 'tok-7' } },
    ]);
    assert.deepEqual(ctx.reads, ['team.json', 'mine.json']);
  });

  test('--no-mcp wins: no servers, and no file is even read (a missing one is no error)', async () => {
    const ctx = context({ 'a.json': json({ servers: { s: { command: 'srv' } } }) });
    assert.deepEqual(await mcpServersFromFlags({ 'mcp-config': ['a.json', 'missing.json'], 'no-mcp': true }, ctx), { servers: [], warnings: [] });
    assert.deepEqual(ctx.reads, []);
  });

  test('wrong entries are warnings naming the file and the server; the good ones are still passed', async () => {
    const ctx = context({
      'a.json': json({ servers: { good: { command: 'srv' }, noCommand: { args: ['x'] }, badUrl: { url: 'ftp://x' }, off: { command: 'x', disabled: true } } }),
      'b.json': json(['not', 'a', 'map']),
    });
    const r = await mcpServersFromFlags({ 'mcp-config': ['a.json', 'b.json'] }, ctx);
    assert.deepEqual(
      r.servers.map((s) => s.name),
      ['good'],
    );
    assert.deepEqual(r.warnings, [
      'a.json: server "noCommand": "command" must be a non-empty string',
      'a.json: server "badUrl": "url" must start with http:// or https://',
      'b.json: expected {"servers": {name: {command, args, env} or {url}}}',
    ]);
  });

  test('an unset ${env:NAME} reads as empty, with a warning naming it', async () => {
    const r = await mcpServersFromFlags({ 'mcp-config': ['a.json'] }, context({ 'a.json': json({ servers: { s: { command: 'srv', env: { KEY: '${env:NOT_SET_ANYWHERE}' } } } }) }));
    assert.deepEqual(r.servers[0]!.env, { KEY: '' });
    assert.deepEqual(r.warnings, ['a.json: server "s": ${env:NOT_SET_ANYWHERE} is not set; it reads as empty']);
  });

  test('a missing file, a folder, and a file that is not JSON are errors naming the file', async () => {
    await assert.rejects(mcpServersFromFlags({ 'mcp-config': ['missing.json'] }, context({})), { message: '--mcp-config missing.json: no such file' });
    await assert.rejects(mcpServersFromFlags({ 'mcp-config': [root] }, context({}, { read: (f) => fs.readFileSync(f, 'utf8') })), { message: `--mcp-config ${root}: is a folder, not a file` });
    await assert.rejects(mcpServersFromFlags({ 'mcp-config': ['ok.json', 'bad.json'] }, context({ 'ok.json': '{}', 'bad.json': '{"servers": {"s": {"command": "x"' })), (error: Error) => {
      assert.match(error.message, /^--mcp-config bad\.json: not valid JSON \(\w+ at offset \d+\)$/);
      return true;
    });
  });

  test('comments and trailing commas are read, as VS Code writes mcp.json', async () => {
    const r = await mcpServersFromFlags({ 'mcp-config': ['c.json'] }, context({ 'c.json': '{"servers": {\n  // the ticket server\n  "t": {"command": "srv", "args": ["-v",],},\n}}' }));
    assert.deepEqual(
      r.servers.map((m) => [m.name, m.command, m.args]),
      [['t', 'srv', ['-v']]],
    );
  });

  test('${input:…}: an error naming the input (and its description) and the server; the CLI does not prompt', async () => {
    const ctx = context({
      'a.json': json({
        servers: { github: { type: 'http', url: 'https://gh.example/mcp', headers: { Authorization: 'Bearer ${input:gh-token}' } } },
        inputs: [{ id: 'gh-token', type: 'promptString', description: 'GitHub token', password: true }],
      }),
      'b.json': json({ servers: { other: { command: 'srv', env: { K: '${input:undeclared}' } } } }),
    });
    await assert.rejects(mcpServersFromFlags({ 'mcp-config': ['a.json'] }, ctx), {
      message:
        '--mcp-config a.json: MCP server "github" uses ${input:gh-token} ("GitHub token"): the CLI does not prompt for inputs; write the value in the file, or take it from the environment with ${env:NAME}',
    });
    await assert.rejects(mcpServersFromFlags({ 'mcp-config': ['b.json'] }, ctx), { message: /^--mcp-config b\.json: MCP server "other" uses \$\{input:undeclared\}: the CLI does not prompt/ });
  });

  test('an unknown variable is an error naming it and the file', async () => {
    await assert.rejects(mcpServersFromFlags({ 'mcp-config': ['a.json'] }, context({ 'a.json': json({ s: { command: 'srv', args: ['${config:x}'] } }) })), {
      message: '--mcp-config a.json: MCP server "s": unknown variable ${config:x}',
    });
  });

  test("the agent entry's mcpServers: only the servers it names are resolved and passed (another's input is no error); false: none", async () => {
    const ctx = context({ 'a.json': json({ servers: { tickets: { command: 'srv' }, github: { command: 'gh', env: { T: '${input:tok}' } } } }) });
    assert.deepEqual(
      (await mcpServersFromFlags({ 'mcp-config': ['a.json'] }, { ...ctx, only: ['tickets'] })).servers.map((s) => s.name),
      ['tickets'],
    );
    assert.deepEqual((await mcpServersFromFlags({ 'mcp-config': ['a.json'] }, { ...ctx, only: false })).servers, []);
    await assert.rejects(mcpServersFromFlags({ 'mcp-config': ['a.json'] }, ctx), /\$\{input:tok\}/);
  });
});

describe('CLI: --mcp-config and --no-mcp reach the agent (the hostile fixture logs session/new)', () => {
  let runs = 0;
  /** Runs the CLI in a folder of its own; `sessionNew` is the session/new params the agent received (undefined: none). */
  async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
    const dir = path.join(root, `run-${++runs}`);
    fs.mkdirSync(dir);
    const log = path.join(dir, 'frames.ndjson');
    const agent = ['--env', `HOSTILE_LOG=${log}`, '--', process.execPath, hostileAgent, 'answer'];
    const r = await runCli(['--cwd', dir, '--state-dir', path.join(dir, 'state'), ...args, ...agent], dir, { ...process.env, ...env });
    const frames = fs.existsSync(log)
      ? fs
          .readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { method?: string; params?: Record<string, unknown> })
      : [];
    return { ...r, dir, sessionNew: frames.find((f) => f.method === 'session/new')?.params };
  }
  const write = (name: string, value: unknown) => {
    const file = path.join(root, name);
    fs.writeFileSync(file, JSON.stringify(value));
    return file;
  };
  const tickets = write('tickets.json', {
    servers: {
      tickets: { command: process.execPath, args: ['ticketMcpServer.js', '${workspaceFolder}'], env: { TICKET_SOURCE: '${env:TICKET_SOURCE_FROM_ENV}' } },
      docs: { type: 'http', url: 'http://127.0.0.1:9/mcp' },
      broken: { args: ['no command'] },
    },
  });

  test('a prompt: the stdio server in session/new, resolved; the http one named in the transcript; a wrong entry warned about', { timeout: 60_000 }, async () => {
    assert.ok(fs.existsSync(cliPath), 'dist/cli.js is missing: npm run build');
    const r = await run(['--format', 'json', '--mcp-config', tickets, 'say hello'], { TICKET_SOURCE_FROM_ENV: 'from-env' });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.sessionNew?.mcpServers, [
      {
        name: 'tickets',
        command: process.execPath,
        args: ['ticketMcpServer.js', r.dir],
        env: [{ name: 'TICKET_SOURCE', value: 'from-env' }],
      },
    ]);
    assert.match(r.stderr, /^agent-host: warning: .*tickets\.json: server "broken": "command" must be a non-empty string$/m);
    const notices = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; entity?: { kind?: string; title?: string; detail?: string } })
      .filter((e) => e.type === 'entity' && e.entity?.kind === 'notice')
      .map((e) => `${e.entity!.title}: ${e.entity!.detail}`);
    assert.ok(notices.includes('MCP server not passed: docs (http) not passed: this agent takes only stdio servers'), notices.join('\n'));
  });

  test('--no-mcp: session/new carries no server, even with --mcp-config; no warning', { timeout: 60_000 }, async () => {
    const r = await run(['--mcp-config', tickets, '--no-mcp', 'say hello']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.sessionNew?.mcpServers, []);
    assert.doesNotMatch(r.stderr, /warning/);
  });

  test('task: the same servers reach the agent of a selection command', { timeout: 60_000 }, async () => {
    const dir = path.join(root, 'task');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'a.py'), 'def f():\n    return 1\n');
    const log = path.join(dir, 'frames.ndjson');
    const r = await runCli(
      ['task', 'explain', '--file', 'a.py', '--range', '1-2', '--cwd', dir, '--mcp-config', tickets, '--env', `HOSTILE_LOG=${log}`, '--', process.execPath, hostileAgent, 'answer'],
      dir,
      { ...process.env, TICKET_SOURCE_FROM_ENV: 'task-env' },
    );
    assert.equal(r.code, 0, r.stderr);
    const sessionNew = fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { method?: string; params?: { mcpServers?: { name: string; env: unknown }[] } })
      .find((f) => f.method === 'session/new');
    assert.deepEqual(
      sessionNew?.params?.mcpServers?.map((s) => [s.name, s.env]),
      [['tickets', [{ name: 'TICKET_SOURCE', value: 'task-env' }]]],
    );
  });

  test('a missing file, bad JSON or an ${input:…}: exit 2 naming it, before any agent starts', { timeout: 60_000 }, async () => {
    const bad = path.join(root, 'bad.json');
    fs.writeFileSync(bad, '{"servers": ');
    const input = write('input.json', { servers: { gh: { url: 'https://gh.example/mcp', headers: { Authorization: '${input:token}' } } } });
    for (const [file, message] of [
      [path.join(root, 'none.json'), /^agent-host: --mcp-config .*none\.json: no such file$/m],
      [bad, /^agent-host: --mcp-config .*bad\.json: not valid JSON/m],
      [input, /^agent-host: --mcp-config .*input\.json: MCP server "gh" uses \$\{input:token\}: the CLI does not prompt for inputs/m],
    ] as const) {
      const r = await run(['--mcp-config', tickets, '--mcp-config', file, 'say hello']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.sessionNew, undefined, 'the agent was started');
    }
  });

  test('--help names both flags', async () => {
    const r = await runCli(['--help'], root);
    assert.match(r.stdout, /^ {2}--mcp-config FILE {4}MCP servers for the agent \(repeatable\)/m);
    assert.match(r.stdout, /^ {2}--no-mcp {13}pass no MCP servers, even with --mcp-config$/m);
    assert.match(r.stdout, /never reads \.vscode\/mcp\.json by itself/);
    const task = await runCli(['task', '--help'], root);
    assert.match(task.stdout, /--mcp-config FILE, --no-mcp/);
  });
});
