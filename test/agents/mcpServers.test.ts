// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${env:…} is mcp.json's own syntax, written into the file as text.
/**
 * The user's own MCP server reaching real agents through the headless CLI (dist/cli.js): `--mcp-config` names
 * the ticket server (test/fixtures/ticketMcpServer.ts, a stdio server on the official SDK) with a variable the CLI
 * resolves from its environment; opencode and codex, on the scripted model, are asked to call its tool. Asserted
 * on both ends: what the server received (its log: the tool, the id, the source resolved from the environment)
 * and what the model was given (the tool's answer in the request after the call). With `--no-mcp` the same
 * prompt finds no such tool: the model is offered none and the server is never called. Under --deny-all, what
 * each agent does with the call (asks and is refused, or calls without asking) is pinned.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openAiChat } from '../../src/scriptedModel/openaiChat';
import { openAiResponses } from '../../src/scriptedModel/openaiResponses';
import { startScriptedModel, type ModelRequestRecord, type ScriptedModel } from '../../src/scriptedModel/scriptedModel';
import { ticketAnswer } from '../fixtures/ticketMcpServer';
import { runCli } from '../support/cli';
import { repoRoot } from '../support/paths';
import { agentById } from './catalog';

const SCRATCH_ROOT = path.join(repoRoot, '.scratch', 'mcp-servers');
const TICKET_SERVER = path.join(repoRoot, 'out', 'test', 'fixtures', 'ticketMcpServer.js');
const PROMPT = 'Look up ticket T-42.\nSCENARIO: tool {"name": "lookup_ticket", "args": {"id": "T-42"}}';
const SOURCE = 'tracker-from-env';
// Under npm test (AGENT_HOST_REQUIRE_AGENTS=1) a missing agent fails the suite instead of skipping it.
const required = process.env.AGENT_HOST_REQUIRE_AGENTS === '1';
const only = (process.env.AGENTS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
/**
 * Under --deny-all (the default) what happens to the call is the agent's choice: codex asks before it calls an MCP
 * tool, and is refused; opencode 1.18 calls it without asking (no permission request reaches the host).
 */
const UNDER_DENY_ALL: Record<string, 'called' | 'refused'> = { opencode: 'called', codex: 'refused' };
const AGENT_IDS = ['opencode', 'codex'].filter((id) => only.length === 0 || only.includes(id));

/** The names of the tools a model request offered, as the scripted model reads them (codex's namespaces joined). */
function offeredTools(r: ModelRequestRecord): string[] {
  const format = r.api === 'openai-chat' ? openAiChat : r.api === 'openai-responses' ? openAiResponses : undefined;
  assert.ok(format, `a request of an API this test does not read: ${r.api} ${r.path}`);
  return format.toConversation(r.body as Record<string, unknown>).tools.map((t) => t.name);
}

const events = (stdout: string) =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map(
      (l) =>
        JSON.parse(l) as {
          type: string;
          entity?: { kind?: string; id?: string; status?: string; toolCallId?: string; state?: string; answer?: string; options?: { optionId: string; kind: string }[] };
        },
    );

/** The lines the ticket server appended to its log, one per call. */
function ticketCalls(log: string): { transport: string; tool: string; args: { id?: string }; source: string }[] {
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

for (const id of AGENT_IDS) {
  const agent = agentById(id)!;
  describe(`${agent.label}: the user's MCP server through the CLI (--mcp-config, --no-mcp, --deny-all)`, {
    skip: agent.installed() || required ? false : `${id} not installed`,
    concurrency: false,
  }, () => {
    let model: ScriptedModel;
    let scratch: string;
    let workspace: string;
    let agentsFile: string;
    let mcpFile: string;
    let ticketLog: string;

    before(async () => {
      assert.ok(agent.installed(), `${id} is not installed: run scripts/setup-agents.sh`);
      assert.ok(fs.existsSync(TICKET_SERVER), 'out/test/fixtures/ticketMcpServer.js is missing: npx tsc -p .');
      model = await startScriptedModel();
      fs.mkdirSync(SCRATCH_ROOT, { recursive: true });
      scratch = fs.mkdtempSync(path.join(SCRATCH_ROOT, `${id}-`));
      workspace = path.join(scratch, 'workspace');
      fs.mkdirSync(workspace);
      const spec = await agent.prepare({ scratch, modelUrl: model.url, workspace });
      agentsFile = path.join(scratch, 'agents.json');
      ticketLog = path.join(scratch, 'logs', 'tickets.ndjson');
      fs.mkdirSync(path.dirname(ticketLog));
      // The server runs in the agent's sandbox: the folder of its log is allowed by name, as a user allows a server's.
      fs.writeFileSync(agentsFile, JSON.stringify([{ name: id, command: spec.command, args: spec.args, env: spec.env, inheritEnv: false, sandbox: { allowWrite: [path.dirname(ticketLog)] } }]));
      mcpFile = path.join(scratch, 'mcp.json');
      fs.writeFileSync(
        mcpFile,
        JSON.stringify({ servers: { tickets: { command: process.execPath, args: [TICKET_SERVER], env: { TICKET_LOG: ticketLog, TICKET_SOURCE: '${env:TICKET_SOURCE_FROM_ENV}' } } } }),
      );
    });
    after(async () => {
      await model?.close();
      if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
    });

    /** One prompt through the CLI; the model's requests of this run. */
    async function prompt(...flags: string[]) {
      fs.rmSync(ticketLog, { force: true });
      const first = model.requests.length;
      const r = await runCli(['--config', agentsFile, '--agent', id, '--cwd', workspace, '--state-dir', path.join(scratch, 'state'), '--format', 'json', ...flags, PROMPT], workspace, {
        ...process.env,
        TICKET_SOURCE_FROM_ENV: SOURCE,
      });
      return { ...r, requests: model.requests.slice(first) };
    }

    test('--mcp-config: the agent calls lookup_ticket on the server; the model is given its answer', { timeout: 240_000 }, async (t) => {
      const started = Date.now();
      const r = await prompt('--approve-all', '--mcp-config', mcpFile);
      t.diagnostic(`${id}: ${Date.now() - started} ms, ${r.requests.length} model requests (${r.requests.map((q) => q.decision).join(', ')})`);
      assert.equal(r.code, 0, r.stderr);
      // The server's end: one call of its tool, with the id the model chose and the source the CLI resolved.
      assert.deepEqual(ticketCalls(ticketLog), [{ transport: 'stdio', tool: 'lookup_ticket', args: { id: 'T-42' }, source: SOURCE }]);
      // The model's end: the tool was offered, called, and its answer came back in the next request.
      assert.ok(
        r.requests.some((q) => offeredTools(q).some((n) => n.includes('lookup_ticket'))),
        `no request offered lookup_ticket: ${r.requests.map((q) => offeredTools(q).join(' ')).join(' | ')}`,
      );
      assert.ok(
        r.requests.some((q) => q.tool?.includes('lookup_ticket')),
        'the model never called the tool',
      );
      const answer = ticketAnswer('T-42', SOURCE);
      assert.ok(
        r.requests.some((q) => q.toolResult?.includes(answer)),
        `no request carried "${answer}": ${JSON.stringify(r.requests.map((q) => q.toolResult ?? null))}`,
      );
      // The transcript: the agent's tool call, completed.
      const calls = events(r.stdout).filter((e) => e.type === 'entity' && e.entity?.kind === 'tool_call' && JSON.stringify(e.entity).includes('lookup_ticket'));
      assert.equal(calls.at(-1)?.entity?.status, 'completed', r.stdout);
    });

    test('--no-mcp (with --mcp-config too): no lookup_ticket offered, the server never called', { timeout: 240_000 }, async (t) => {
      const started = Date.now();
      const r = await prompt('--approve-all', '--mcp-config', mcpFile, '--no-mcp');
      t.diagnostic(`${id}: ${Date.now() - started} ms, ${r.requests.length} model requests (${r.requests.map((q) => q.decision).join(', ')})`);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(ticketCalls(ticketLog), []);
      assert.ok(r.requests.length > 0, 'the model got no request');
      const offered = r.requests.flatMap(offeredTools);
      assert.ok(offered.length > 0, 'no request offered any tool (the check below would prove nothing)');
      assert.deepEqual(
        offered.filter((n) => n.includes('lookup_ticket')),
        [],
      );
      assert.ok(!r.requests.some((q) => q.tool?.includes('lookup_ticket')));
    });

    test(`--deny-all: the MCP tool call is ${UNDER_DENY_ALL[id]} (${id} ${UNDER_DENY_ALL[id] === 'called' ? 'asks no permission for it' : 'asks, and is refused'})`, {
      timeout: 240_000,
    }, async (t) => {
      const r = await prompt('--deny-all', '--mcp-config', mcpFile);
      t.diagnostic(`${id}: ${r.requests.length} model requests (${r.requests.map((q) => q.decision).join(', ')})`);
      assert.equal(r.code, 0, r.stderr);
      const entities = events(r.stdout).flatMap((e) => (e.type === 'entity' && e.entity ? [e.entity] : []));
      const ticketCallIds = new Set(entities.filter((e) => e.kind === 'tool_call' && JSON.stringify(e).includes('lookup_ticket')).map((e) => e.id));
      // The permissions asked for the ticket tool's calls, each as it was last shown.
      const permissions = [...new Map(entities.filter((e) => e.kind === 'permission' && ticketCallIds.has(e.toolCallId)).map((e) => [e.id, e])).values()];
      if (UNDER_DENY_ALL[id] === 'called') {
        assert.equal(ticketCalls(ticketLog).length, 1);
        assert.deepEqual(permissions, [], 'a permission was asked');
      } else {
        assert.deepEqual(ticketCalls(ticketLog), []);
        assert.equal(permissions.length, 1, `no permission was asked: ${r.stdout}`);
        const asked = permissions[0]!;
        assert.equal(asked.state, 'answered');
        assert.match(asked.options?.find((o) => o.optionId === asked.answer)?.kind ?? '', /^reject_/, `answered ${asked.answer}`);
        assert.ok(
          r.requests.some((q) => q.decision === 'final-denied'),
          'the model was not told the call was refused',
        );
      }
    });
  });
}
