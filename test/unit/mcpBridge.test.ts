/**
 * The IDE MCP server end to end without VS Code: the extension-side endpoint (private socket + bearer token)
 * serving `workspaceFileTools`, the stdio bridge (dist/ideBridge.js, as agents start it), and the official MCP
 * SDK client listing and calling the tools through it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startToolEndpoint, type ToolEndpoint } from '../../src/mcp/toolEndpoint';
import { workspaceFileTools } from '../../src/host/workspaceFileTools';
import { repoRoot, scratchDir } from '../support/paths';

const bridge = path.join(repoRoot, 'out', 'src', 'mcp', 'ideBridge.js');

const execFileP = promisify(execFile);

function rawRequest(socketPath: string, route: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, path: route, method: 'GET', headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('IDE MCP server (endpoint + stdio bridge + SDK client)', () => {
  let root: string;
  let endpoint: ToolEndpoint;

  before(async () => {
    root = scratchDir('mcp');
    fs.mkdirSync(path.join(root, 'src'));
    fs.writeFileSync(path.join(root, 'src', 'a.ts'), 'export function greet(name: string) {\n  return name;\n}\nexport class Box {}\n');
    endpoint = await startToolEndpoint(workspaceFileTools(root));
  });
  after(async () => {
    await endpoint.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('refuses requests without the token, and has no other routes', async () => {
    assert.equal(await rawRequest(endpoint.socketPath, '/tools'), 401);
    assert.equal(await rawRequest(endpoint.socketPath, '/tools', 'wrong'), 401);
    assert.equal(await rawRequest(endpoint.socketPath, '/tools', endpoint.token), 200);
    assert.equal(await rawRequest(endpoint.socketPath, '/eval', endpoint.token), 404);
    if (process.platform !== 'win32') {
      assert.equal(fs.statSync(path.dirname(endpoint.socketPath)).mode & 0o077, 0, 'socket folder is private');
    }
  });

  it('another local user cannot reach the socket, even with the token', { skip: process.platform === 'win32' ? 'no Unix socket modes on Windows' : false }, async () => {
    // As root (this machine and CI) a process of user "nobody" is started; as anyone else, the private mode
    // bits are all there is to check (another user cannot be made without root).
    if (process.getuid?.() !== 0) {
      assert.equal(fs.statSync(endpoint.socketPath).mode & 0o077, 0, 'the socket is private');
      return;
    }
    const script = `require('http').request({ socketPath: ${JSON.stringify(endpoint.socketPath)}, path: '/tools', headers: { authorization: 'Bearer ${endpoint.token}' } }, (r) => { console.log('STATUS ' + r.statusCode); }).on('error', (e) => console.log('ERROR ' + e.code)).end();`;
    // Asynchronously: the endpoint answers from this process's event loop.
    const r = await execFileP(process.execPath, ['-e', script], { uid: 65534, gid: 65534, timeout: 20_000 });
    assert.equal(r.stdout.trim(), 'ERROR EACCES', `another user reached the socket: ${r.stdout} ${r.stderr}`);
    // The same request as the owner works: it is the user that is refused, not the request.
    const own = await execFileP(process.execPath, ['-e', script], { timeout: 20_000 });
    assert.equal(own.stdout.trim(), 'STATUS 200');
  });

  it('lists and calls the tools through the bridge with the MCP SDK client', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new Client({ name: 'test', version: '1' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bridge],
      env: { ...(process.env as Record<string, string>), ...endpoint.bridgeEnv() },
      stderr: 'pipe',
    });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['get_document_symbols', 'read_project_file']);
      const symbols = tools.find((t) => t.name === 'get_document_symbols');
      assert.deepEqual(symbols?.inputSchema.required, ['abspath']);

      const result = await client.callTool({ name: 'get_document_symbols', arguments: { abspath: path.join(root, 'src', 'a.ts') } });
      const content = result.content as { type: string; text: string }[];
      const parsed = JSON.parse(content[0]!.text) as { name: string; kind: string }[];
      assert.deepEqual(
        parsed.map((s) => `${s.kind} ${s.name}`),
        ['Function greet', 'Class Box'],
      );

      const outside = await client.callTool({ name: 'read_project_file', arguments: { path: '/etc/passwd' } });
      assert.equal(outside.isError, true);
      assert.match((outside.content as { text: string }[])[0]!.text, /outside the workspace/);

      assert.deepEqual(await client.ping(), {});
      // A tools-only server: other MCP methods are unknown (-32601), a tool it does not have is bad params (-32602).
      await assert.rejects(client.listResources(), (e: { code?: number }) => e.code === -32601);
      await assert.rejects(
        client.callTool({ name: 'no_such_tool', arguments: {} }),
        (e: { code?: number; message?: string }) => e.code === -32602 && /Unknown tool: no_such_tool/.test(e.message ?? ''),
      );
      // A tool that fails on its arguments answers a result marked isError, which the model reads.
      const missing = await client.callTool({ name: 'get_document_symbols', arguments: { abspath: path.join(root, 'src', 'missing.ts') } });
      assert.equal(missing.isError, true);
      assert.ok((missing.content as { text: string }[])[0]!.text.length > 0);
    } finally {
      await client.close();
    }
  });

  it('the bridge refuses to start without the endpoint environment', async () => {
    const { spawnSync } = await import('node:child_process');
    const env = { ...process.env };
    delete env.AGENT_HOST_IDE_SOCKET;
    delete env.AGENT_HOST_IDE_TOKEN;
    const r = spawnSync(process.execPath, [bridge], { env, encoding: 'utf8', input: '' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /must be set/);
  });
});
