// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${env:…}, ${input:…} and the other variables are mcp.json's own syntax, tested here as text.
/**
 * The user's MCP servers, session layer (src/session/mcpConfig.ts): the three shapes of a configuration, wrong
 * entries named as problems while the good ones are kept, `disabled`, the type a server gets without one, the
 * merge by name (a later configuration wins), `${…}` variables, which servers an agent gets by its transports and
 * its entry, and the one-line command shown in the trust dialog.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mcpCommandLine, mcpServersFor, mcpTransports, mergeMcpConfigs, parseMcpConfig, resolveMcpServer, type McpServerEntry, type McpVariables } from '../../src/session/mcpConfig';

const stdio = { command: 'node', args: ['server.js'], env: { TOKEN: 'x' } };
const names = (servers: { name: string }[]) => servers.map((s) => s.name);

describe('parseMcpConfig', () => {
  test("the three shapes: VS Code's {servers, inputs}, {mcpServers} and the map alone give the same servers", () => {
    const expected: McpServerEntry[] = [
      { name: 'files', source: 'cli', origin: 'a.json', type: 'stdio', command: 'node', args: ['server.js'], env: { TOKEN: 'x' } },
      { name: 'web', source: 'cli', origin: 'a.json', type: 'http', url: 'https://mcp.example/api', headers: {} },
    ];
    const servers = { files: stdio, web: { url: 'https://mcp.example/api' } };
    for (const value of [{ servers }, { mcpServers: servers }, servers]) {
      const c = parseMcpConfig(value, 'cli', 'a.json');
      assert.deepEqual(c.servers, expected, JSON.stringify(value));
      assert.deepEqual(c.problems, []);
      assert.deepEqual(c.inputs, []);
    }
  });

  test('"servers" wins over "mcpServers"; a file with only inputs has no servers (its keys are not taken as servers)', () => {
    const both = parseMcpConfig({ servers: { a: stdio }, mcpServers: { b: stdio } }, 'user', 'mcp.json');
    assert.deepEqual(names(both.servers), ['a']);
    const onlyInputs = parseMcpConfig({ inputs: [{ id: 'tok', type: 'promptString' }] }, 'workspace', '.vscode/mcp.json');
    assert.deepEqual(onlyInputs.servers, []);
    assert.deepEqual(onlyInputs.problems, []);
    assert.deepEqual(onlyInputs.inputs, [{ id: 'tok', type: 'promptString' }]);
  });

  test('nothing (undefined, null) is an empty configuration; a value that is not an object is one problem', () => {
    for (const v of [undefined, null]) assert.deepEqual(parseMcpConfig(v, 'cli', 'x'), { servers: [], inputs: [], problems: [] });
    for (const v of [[], 'servers', 3]) {
      const c = parseMcpConfig(v, 'cli', 'x.json');
      assert.deepEqual(c.servers, []);
      assert.equal(c.problems.length, 1);
      assert.match(c.problems[0]!, /^x\.json: expected \{"servers"/);
    }
  });

  test('each wrong entry is a problem naming the file and the server; the good ones are kept, in order', () => {
    const c = parseMcpConfig(
      {
        servers: {
          first: stdio,
          notObject: 'node server.js',
          noCommand: { args: ['x'] },
          emptyCommand: { command: '' },
          badArgs: { command: 'node', args: 'server.js' },
          badEnv: { command: 'node', env: { A: { nested: true } } },
          badUrl: { url: 'ftp://mcp.example' },
          relativeUrl: { type: 'http', url: '/mcp' },
          badHeaders: { url: 'https://mcp.example', headers: ['Authorization'] },
          badType: { type: 'websocket', url: 'ws://mcp.example' },
          last: { type: 'sse', url: 'http://127.0.0.1:9/sse', headers: { 'X-Key': 'k' } },
        },
      },
      'cli',
      'cfg.json',
    );
    assert.deepEqual(names(c.servers), ['first', 'last']);
    assert.deepEqual(c.problems, [
      'cfg.json: server "notObject": expected an object',
      'cfg.json: server "noCommand": "command" must be a non-empty string',
      'cfg.json: server "emptyCommand": "command" must be a non-empty string',
      'cfg.json: server "badArgs": "args" must be a list of strings',
      'cfg.json: server "badEnv": "env" must map names to strings',
      'cfg.json: server "badUrl": "url" must start with http:// or https://',
      'cfg.json: server "relativeUrl": "url" must start with http:// or https://',
      'cfg.json: server "badHeaders": "headers" must map names to strings',
      'cfg.json: server "badType": "type" must be "stdio", "http" or "sse"',
    ]);
  });

  test('"envFile" is said (not read) and the server kept; numbers in env and headers become strings', () => {
    const c = parseMcpConfig({ servers: { s: { command: 'srv', envFile: '.env', env: { PORT: 8080 } }, h: { url: 'https://h.example', headers: { 'X-Retries': 3 } } } }, 'cli', 'f.json');
    assert.deepEqual(c.problems, ['f.json: server "s": "envFile" is not read here (write the variables in "env"); the server is passed without it']);
    assert.deepEqual(c.servers[0]!.env, { PORT: '8080' });
    assert.deepEqual(c.servers[1]!.headers, { 'X-Retries': '3' });
  });

  test('"disabled": true leaves a server out quietly; "disabled": false (or anything else) does not', () => {
    const c = parseMcpConfig({ servers: { off: { ...stdio, disabled: true }, on: { ...stdio, disabled: false }, broken: { disabled: true } } }, 'user', 'u.json');
    assert.deepEqual(names(c.servers), ['on']);
    assert.deepEqual(c.problems, [], 'a disabled entry is not checked');
  });

  test('the type: "stdio" with a command, "http" with a url, as given otherwise; args, env and headers default empty', () => {
    const c = parseMcpConfig(
      {
        servers: {
          cmd: { command: 'srv' },
          web: { url: 'http://h.example/mcp' },
          events: { type: 'sse', url: 'https://h.example/sse' },
          plain: { type: 'stdio', command: 'srv2' },
          both: { command: 'srv3', url: 'https://h.example' },
        },
      },
      'cli',
      'f',
    );
    assert.deepEqual(
      c.servers.map((s) => [s.name, s.type]),
      [
        ['cmd', 'stdio'],
        ['web', 'http'],
        ['events', 'sse'],
        ['plain', 'stdio'],
        ['both', 'http'],
      ],
    );
    assert.deepEqual(c.servers[0], { name: 'cmd', source: 'cli', origin: 'f', type: 'stdio', command: 'srv', args: [], env: {} });
    assert.deepEqual(c.servers[1], { name: 'web', source: 'cli', origin: 'f', type: 'http', url: 'http://h.example/mcp', headers: {} });
  });

  test('inputs keep their id, type (default promptString), description, password, default and options; one without an id is a problem', () => {
    const c = parseMcpConfig(
      {
        servers: {},
        inputs: [
          { id: 'key', type: 'promptString', description: 'API key', password: true },
          { id: 'region', type: 'pickString', options: ['eu', 'us'], default: 'eu' },
          { id: 'bare' },
          { description: 'no id' },
          'key',
        ],
      },
      'workspace',
      'w.json',
    );
    assert.deepEqual(c.inputs, [
      { id: 'key', type: 'promptString', description: 'API key', password: true },
      { id: 'region', type: 'pickString', default: 'eu', options: ['eu', 'us'] },
      { id: 'bare', type: 'promptString' },
    ]);
    assert.deepEqual(c.problems, ['w.json: an input without an "id"', 'w.json: an input without an "id"']);
  });
});

describe('mergeMcpConfigs', () => {
  test('by name: a later configuration replaces an earlier one and moves to its place in the later order; problems and inputs gathered', () => {
    const user = parseMcpConfig({ servers: { a: { command: 'a-user' }, b: { command: 'b-user' }, c: { command: 'c-user' } }, inputs: [{ id: 'k', description: 'user' }] }, 'user', 'user.json');
    const workspace = parseMcpConfig({ servers: { b: { command: 'b-ws' }, d: { command: 'd-ws' }, bad: 3 }, inputs: [{ id: 'k', description: 'workspace' }] }, 'workspace', 'ws.json');
    const merged = mergeMcpConfigs([user, workspace]);
    assert.deepEqual(
      merged.servers.map((s) => [s.name, s.command, s.source, s.origin]),
      [
        ['a', 'a-user', 'user', 'user.json'],
        ['c', 'c-user', 'user', 'user.json'],
        ['b', 'b-ws', 'workspace', 'ws.json'],
        ['d', 'd-ws', 'workspace', 'ws.json'],
      ],
    );
    assert.deepEqual(merged.inputs, [{ id: 'k', type: 'promptString', description: 'workspace' }]);
    assert.deepEqual(merged.problems, ['ws.json: server "bad": expected an object']);
    // The other order: the user's file wins.
    assert.deepEqual(
      mergeMcpConfigs([workspace, user]).servers.map((s) => [s.name, s.command]),
      [
        ['d', 'd-ws'],
        ['a', 'a-user'],
        ['b', 'b-user'],
        ['c', 'c-user'],
      ],
    );
    assert.deepEqual(mergeMcpConfigs([]), { servers: [], inputs: [], problems: [] });
  });

  test('a later stdio server replaces an earlier http one of the same name whole (no fields carried over)', () => {
    const merged = mergeMcpConfigs([parseMcpConfig({ s: { url: 'https://h.example', headers: { A: 'b' } } }, 'user', 'u'), parseMcpConfig({ s: { command: 'srv' } }, 'cli', 'c')]);
    assert.deepEqual(merged.servers, [{ name: 's', source: 'cli', origin: 'c', type: 'stdio', command: 'srv', args: [], env: {} }]);
  });
});

describe('resolveMcpServer', () => {
  const vars = (over: Partial<McpVariables> = {}): McpVariables & { asked: string[] } => {
    const asked: string[] = [];
    return {
      env: (name) => (<Record<string, string>>{ HOME_TOKEN: 'tok-1', REGION: 'eu' })[name],
      input: async (id) => {
        asked.push(id);
        return id === 'key' ? 'secret-key' : undefined;
      },
      workspaceFolder: '/projects/shop',
      userHome: '/home/ann',
      asked,
      ...over,
    };
  };
  const [server] = parseMcpConfig(
    {
      s: {
        command: '${userHome}/bin/srv',
        args: ['--root', '${workspaceFolder}', '--region=${env:REGION}', 'plain', 'a${pathSeparator}b'],
        env: { TOKEN: '${env:HOME_TOKEN}', KEY: '${input:key}', UNSET: 'x${env:NOT_SET}y' },
      },
    },
    'user',
    'u.json',
  ).servers;

  test('env, workspaceFolder, userHome, pathSeparator and an input (asked through the callback) in command, args and env', async () => {
    const v = vars();
    const r = await resolveMcpServer(server!, v);
    assert.equal(r.command, '/home/ann/bin/srv');
    assert.deepEqual(r.args, ['--root', '/projects/shop', '--region=eu', 'plain', 'a/b']);
    assert.deepEqual(r.env, { TOKEN: 'tok-1', KEY: 'secret-key', UNSET: 'xy' });
    assert.deepEqual(v.asked, ['key']);
    assert.equal(server!.command, '${userHome}/bin/srv', 'the entry itself is left as written');
    assert.deepEqual({ ...r, command: server!.command, args: server!.args, env: server!.env }, server, 'name, source, origin and type kept');
  });

  test('url and headers of an http server', async () => {
    const [web] = parseMcpConfig({ web: { url: 'https://h.example/${env:REGION}/mcp', headers: { Authorization: 'Bearer ${input:key}' } } }, 'cli', 'c').servers;
    const r = await resolveMcpServer(web!, vars());
    assert.equal(r.url, 'https://h.example/eu/mcp');
    assert.deepEqual(r.headers, { Authorization: 'Bearer secret-key' });
  });

  test('an input the person did not give fails naming the input and the server', async () => {
    const [s] = parseMcpConfig({ gh: { command: 'srv', env: { T: '${input:github-token}' } } }, 'cli', 'c').servers;
    await assert.rejects(resolveMcpServer(s!, vars()), { message: 'MCP server "gh": no value given for ${input:github-token}' });
  });

  test('an unknown variable fails naming it; ${workspaceFolder} without a folder fails too', async () => {
    const [s] = parseMcpConfig({ x: { command: 'srv', args: ['${config:editor.fontSize}'] } }, 'cli', 'c').servers;
    await assert.rejects(resolveMcpServer(s!, vars()), { message: 'MCP server "x": unknown variable ${config:editor.fontSize}' });
    const [t] = parseMcpConfig({ x: { command: 'srv', args: ['a ${env:REGION} ${nope}'] } }, 'cli', 'c').servers;
    await assert.rejects(resolveMcpServer(t!, vars()), { message: 'MCP server "x": unknown variable ${nope}' });
    const { workspaceFolder: _, ...noFolder } = vars();
    const [w] = parseMcpConfig({ x: { command: 'srv', args: ['${workspaceFolder}'] } }, 'cli', 'c').servers;
    await assert.rejects(resolveMcpServer(w!, noFolder), { message: 'MCP server "x": ${workspaceFolder} used without a workspace folder' });
  });

  test('text without variables is left alone, and no input is asked for', async () => {
    const [s] = parseMcpConfig({ x: { command: 'srv', args: ['$HOME', '{env:X}', '$(id)'] } }, 'cli', 'c').servers;
    const v = vars();
    assert.deepEqual((await resolveMcpServer(s!, v)).args, ['$HOME', '{env:X}', '$(id)']);
    assert.deepEqual(v.asked, []);
  });
});

describe('mcpServersFor', () => {
  const all = parseMcpConfig(
    { local: { command: 'srv', args: ['-v'], env: { A: '1' } }, web: { url: 'https://h.example/mcp', headers: { K: 'v' } }, events: { type: 'sse', url: 'https://h.example/sse' } },
    'user',
    'u',
  ).servers;

  test('stdio always, in ACP\'s shape (no "type"; env and headers as name/value pairs); http and sse not without the capability', () => {
    for (const caps of [undefined, {}, { http: false, sse: false }]) {
      const r = mcpServersFor(all, caps);
      assert.deepEqual(r.pass, [{ name: 'local', command: 'srv', args: ['-v'], env: [{ name: 'A', value: '1' }] }]);
      assert.deepEqual(names(r.passed), ['local']);
      assert.deepEqual(r.notPassed, [
        { name: 'web', type: 'http', reason: 'transport' },
        { name: 'events', type: 'sse', reason: 'transport' },
      ]);
    }
  });

  test('http only with caps.http, sse only with caps.sse', () => {
    const http = mcpServersFor(all, { http: true });
    assert.deepEqual(names(http.passed), ['local', 'web']);
    assert.deepEqual(http.pass[1], { type: 'http', name: 'web', url: 'https://h.example/mcp', headers: [{ name: 'K', value: 'v' }] });
    assert.deepEqual(http.notPassed, [{ name: 'events', type: 'sse', reason: 'transport' }]);
    const sse = mcpServersFor(all, { sse: true });
    assert.deepEqual(names(sse.passed), ['local', 'events']);
    assert.deepEqual(sse.pass[1], { type: 'sse', name: 'events', url: 'https://h.example/sse', headers: [] });
    assert.deepEqual(names(mcpServersFor(all, { http: true, sse: true }).passed), ['local', 'web', 'events']);
  });

  test("the entry's list passes only the servers it names; false passes none; the rest are 'filtered'", () => {
    const some = mcpServersFor(all, { http: true, sse: true }, ['events', 'nonexistent']);
    assert.deepEqual(names(some.passed), ['events']);
    assert.deepEqual(some.notPassed, [
      { name: 'local', type: 'stdio', reason: 'filtered' },
      { name: 'web', type: 'http', reason: 'filtered' },
    ]);
    const none = mcpServersFor(all, { http: true, sse: true }, false);
    assert.deepEqual(none.pass, []);
    assert.deepEqual(
      none.notPassed.map((n) => n.reason),
      ['filtered', 'filtered', 'filtered'],
    );
    assert.deepEqual(names(mcpServersFor(all, undefined, []).passed), []);
    // A server the list names but the agent cannot reach is still not passed, for its transport.
    assert.deepEqual(
      mcpServersFor(all, undefined, ['web']).notPassed.find((n) => n.name === 'web'),
      { name: 'web', type: 'http', reason: 'transport' },
    );
  });

  test('the transports as words', () => {
    assert.equal(mcpTransports(undefined), 'stdio');
    assert.equal(mcpTransports({ http: true }), 'stdio and http');
    assert.equal(mcpTransports({ sse: true }), 'stdio and sse');
    assert.equal(mcpTransports({ http: true, sse: true }), 'stdio, http and sse');
  });
});

describe('mcpCommandLine', () => {
  const one = (value: unknown) => parseMcpConfig({ s: value }, 'workspace', 'w').servers[0]!;

  test('plain words as they are; words with spaces, quotes or shell characters single-quoted; env first', () => {
    assert.equal(mcpCommandLine(one({ command: 'npx', args: ['-y', '@scope/server@1.2', '--dir=/a/b', 'k:v,w%'] })), 'npx -y @scope/server@1.2 --dir=/a/b k:v,w%');
    assert.equal(mcpCommandLine(one({ command: '/opt/my tools/srv', args: ['a b', '$(rm -rf ~)', '', "it's"] })), `'/opt/my tools/srv' 'a b' '$(rm -rf ~)' '' 'it'\\''s'`);
    assert.equal(mcpCommandLine(one({ command: 'srv', env: { TOKEN: 'abc', MSG: 'a;b' } })), `TOKEN=abc MSG='a;b' srv`);
  });

  test('an http or sse server: its type and url, and the names of its headers only (never their values)', () => {
    assert.equal(mcpCommandLine(one({ url: 'https://h.example/mcp' })), 'http https://h.example/mcp');
    const line = mcpCommandLine(one({ type: 'sse', url: 'https://h.example/sse', headers: { Authorization: 'Bearer s3cret', 'X-Team': 't' } }));
    assert.equal(line, 'sse https://h.example/sse (headers: Authorization, X-Team)');
    assert.doesNotMatch(line, /s3cret/);
  });
});
