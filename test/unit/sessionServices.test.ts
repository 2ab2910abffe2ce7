/**
 * The session's protocol-neutral services through the real adapters: the ACP adapter reads agentao's
 * `_agentao.cn/ask_user` and `elicitation/create` into askUser / elicit and answers with what they return
 * (the hostile agent records the answers), a start without them answers a clear error at once, and the IDE
 * tools reach an ACP agent as an MCP server and a pi RPC agent as host tools. Then the host side without
 * VS Code: links checked before any prompt, and sign-in's choices (prompts and secrets scripted in memory).
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { askUserRequest, elicitRequest } from '../../src/acp/questions';
import { startAgentSession } from '../../src/adapters/factory';
import { silentLogger, streamLogger } from '../../src/core/log';
import { questionServices, type QuestionPrompts } from '../../src/host/agentQuestions';
import { AgentSignIn, type SecretStore, type SignInMethod, type SignInPrompts } from '../../src/host/signIn';
import type { AgentSession } from '../../src/session/agentSession';
import type { HostToolProvider } from '../../src/session/hostTools';
import { policyDecider } from '../../src/session/permissions';
import type { AgentStartOptions, AskUserRequest, ElicitRequest } from '../../src/session/sessionHost';
import { plainHost } from '../support/plainHost';
import { hostile as hostileRun } from '../support/hostile';
import { repoRoot, scratchDir } from '../support/paths';

const rpcFake = path.join(repoRoot, 'out', 'test', 'fixtures', 'rpcFakeAgent.js');
const live: AgentSession[] = [];

const hostile = (mode: string, extra: string[] = []) => hostileRun(mode, extra, scratchDir('services'));
async function start(config: Parameters<typeof startAgentSession>[0], options: Partial<AgentStartOptions> & { cwd: string }): Promise<AgentSession> {
  const s = await startAgentSession(config, { logger: silentLogger, decidePermission: policyDecider('deny-all'), requestTimeoutMs: 5000, ...options });
  live.push(s);
  return s;
}

/** Notes a call and gives the scripted answer. */
function said<T>(calls: string[], line: string, answer: T): T {
  calls.push(line);
  return answer;
}

const notices = (s: AgentSession) => s.model.timeline().flatMap((e) => (e.kind === 'notice' ? [`${e.title} → ${e.detail ?? ''}`] : []));

const tools: HostToolProvider = {
  definitions: () => [{ name: 'echo_host', label: 'Echo', description: 'Echo', parameters: { type: 'object' } }],
  call: async () => ({ content: [{ type: 'text', text: 'x' }] }),
};

after(async () => {
  await Promise.all(live.map((s) => s.shutdown()));
});

describe('session services through the adapters', () => {
  it('ACP: ask_user and elicitation/create go to askUser / elicit, and the agent gets their answers', async () => {
    const h = hostile('ask');
    const asked: AskUserRequest[] = [];
    const forms: ElicitRequest[] = [];
    const s = await start(h.config, {
      cwd: h.dir,
      ...plainHost(h.dir),
      askUser: async (request) => {
        asked.push(request);
        return { outcome: 'answered', text: request.options[1]!.label };
      },
      elicit: async (request) => {
        forms.push(request);
        return { action: 'accept', content: { name: 'Ada' } };
      },
    });
    assert.equal((await s.prompt([{ type: 'text', text: 'questions please' }])).stopReason, 'end_turn');
    assert.deepEqual(asked, [{ question: 'Which file?', options: [{ label: 'a.txt' }, { label: 'b.txt' }], multiple: false, allowCustom: false }]);
    assert.deepEqual(forms, [{ mode: 'form', message: 'Your name?', fields: [{ name: 'name', type: 'string', required: false }] }]);
    const answers = h.frames().find((f) => f.askAnswer) as { askAnswer: { result: unknown }; elicitationAnswer: { result: unknown } };
    assert.deepEqual(answers.askAnswer.result, { outcome: 'answered', text: 'b.txt' });
    assert.deepEqual(answers.elicitationAnswer.result, { action: 'accept', content: { name: 'Ada' } });
    assert.deepEqual(
      notices(s)
        .filter((n) => n.includes(' asked: '))
        .sort(),
      ['hostile asked: Which file? → Answer: b.txt', 'hostile asked: Your name? → Answer: name: Ada'],
    );
  });

  it('ACP: without askUser / elicit the agent is answered a clear error at once, and its turn ends', async () => {
    const h = hostile('ask');
    const s = await start(h.config, { cwd: h.dir, ...plainHost(h.dir) });
    assert.equal((await s.prompt([{ type: 'text', text: 'questions please' }])).stopReason, 'end_turn');
    const answers = h.frames().find((f) => f.askAnswer) as { askAnswer: { error?: { code: number; message: string } }; elicitationAnswer: { error?: { code: number; message: string } } };
    assert.deepEqual(answers.askAnswer.error, { code: -32601, message: '_agentao.cn/ask_user is not served here: this client has nobody to ask the question' });
    assert.deepEqual(answers.elicitationAnswer.error, { code: -32601, message: 'elicitation/create is not served here: this client has nobody to ask for this input' });
  });

  it('ACP: a link goes to elicit as a url request, and the agent gets its answer', async () => {
    const h = hostile('ask-url', [JSON.stringify(['https://auth.example.com/device'])]);
    const seen: ElicitRequest[] = [];
    const s = await start(h.config, {
      cwd: h.dir,
      ...plainHost(h.dir),
      elicit: async (request) => {
        seen.push(request);
        return { action: 'decline' };
      },
    });
    await s.prompt([{ type: 'text', text: 'sign in' }]);
    assert.deepEqual(seen, [{ mode: 'url', message: 'Sign in, please', url: 'https://auth.example.com/device' }]);
    const recorded = h.frames().find((f) => f.urlAnswers) as { urlAnswers: unknown[] };
    assert.deepEqual(recorded.urlAnswers, [{ action: 'decline' }]);
  });

  it('ACP: the wire requests read into the neutral shapes; an unknown elicitation mode is declined without asking', () => {
    assert.deepEqual(askUserRequest({ question: 'Q?', header: 'H', options: ['a', { value: 'b', description: 'B' }, { x: 1 }, 3], multiple: true, allowCustom: 1 }), {
      question: 'Q?',
      header: 'H',
      options: [{ label: 'a' }, { label: 'b', description: 'B' }],
      multiple: true,
      allowCustom: true,
    });
    assert.deepEqual(askUserRequest(null), { options: [], multiple: false, allowCustom: false });
    const schema = {
      properties: {
        lang: { enum: ['ts', 'js'], default: 'ts' },
        size: { type: 'integer', oneOf: [{ const: 1 }, { const: 2 }], title: 'Size' },
        tags: { type: 'array', items: { enum: ['x'] } },
        why: { description: 'Why' },
      },
      required: ['lang'],
    };
    assert.deepEqual(elicitRequest({ message: 'M', requestedSchema: schema }), {
      mode: 'form',
      message: 'M',
      fields: [
        { name: 'lang', choices: ['ts', 'js'], default: 'ts', required: true },
        { name: 'size', type: 'integer', title: 'Size', choices: [1, 2], required: false },
        { name: 'tags', type: 'array', choices: ['x'], required: false },
        { name: 'why', description: 'Why', required: false },
      ],
    });
    assert.equal(elicitRequest({ mode: 'telepathy', message: 'M' }), undefined);
    assert.equal(elicitRequest({ mode: 'url', message: 'M' }), undefined, 'a url request without a URL');
  });

  it('ACP: the IDE tools reach the agent as the MCP server in session/new', async () => {
    const h = hostile('normal');
    const spec = { name: 'ide', command: process.execPath, args: ['bridge.js'], env: [{ name: 'X', value: '1' }] };
    await start(h.config, { cwd: h.dir, ...plainHost(h.dir), ideTools: { tools, mcpServer: async () => spec } });
    const created = h.frames().find((f) => f.method === 'session/new') as { params: { mcpServers: unknown[] } };
    assert.deepEqual(created.params.mcpServers, [spec]);
  });

  it('pi RPC: the IDE tools are registered as host tools', async () => {
    let mcpAsked = false;
    const mcpServer = async () => {
      mcpAsked = true;
      return undefined;
    };
    const s = await start({ name: 'fake', command: process.execPath, args: [rpcFake, 'fork'], protocol: 'rpc' }, { cwd: repoRoot, ideTools: { tools, mcpServer } });
    assert.deepEqual((s.model.agentState.hostTools as { registered: string[] } | undefined)?.registered, ['echo_host']);
    assert.equal(mcpAsked, false, 'an RPC agent has no use for an MCP server');
  });
});

describe('question services (no VS Code)', () => {
  function scripted(openAnswer: boolean) {
    const calls: string[] = [];
    const prompts: QuestionPrompts = {
      askUser: async (agent, r) => said(calls, `ask ${agent}: ${r.question}`, { outcome: 'cancelled' }),
      fillForm: async (agent, r) => said(calls, `form ${agent}: ${r.message}`, { action: 'cancel' }),
      openLink: async (agent, message, target) => said(calls, `open ${agent}: ${message} ${target.url} (${target.host})`, openAnswer),
      linkRefused: (agent, reason) => void calls.push(`refused ${agent}: ${reason}`),
    };
    return { calls, prompts };
  }
  const signal = new AbortController().signal;

  it('a link other than an http(s) page is declined, logged with the link and said without it; a page is offered whole', async () => {
    const lines: string[] = [];
    const { calls, prompts } = scripted(true);
    const services = questionServices(
      prompts,
      'qwen',
      streamLogger((l) => lines.push(l), 'warn'),
    );
    assert.deepEqual(await services.elicit({ mode: 'url', message: 'Log in', url: 'file:///etc/passwd' }, signal), { action: 'decline' });
    assert.deepEqual(await services.elicit({ mode: 'url', message: 'Log in', url: 'https://user:pw@evil.example/' }, signal), { action: 'decline' });
    assert.deepEqual(await services.elicit({ mode: 'url', message: 'Log in', url: 'https://auth.example.com/x' }, signal), { action: 'accept' });
    assert.deepEqual(calls, [
      'refused qwen: only https and http pages are opened, and this is a file: URL',
      'refused qwen: a URL with a user name or password before its host is not opened',
      'open qwen: Log in https://auth.example.com/x (auth.example.com)',
    ]);
    assert.match(lines.join(''), /qwen asked to open "file:\/\/\/etc\/passwd"; declined/);
  });

  it('a link the person does not open is declined; questions and forms go to their prompts with the agent named', async () => {
    const { calls, prompts } = scripted(false);
    const services = questionServices(prompts, 'qwen', silentLogger);
    assert.deepEqual(await services.elicit({ mode: 'url', message: 'Log in', url: 'https://auth.example.com/x' }, signal), { action: 'decline' });
    await services.askUser({ question: 'Which?', options: [], multiple: false, allowCustom: false }, signal);
    await services.elicit({ mode: 'form', message: 'Name?', fields: [] }, signal);
    assert.deepEqual(calls.slice(1), ['ask qwen: Which?', 'form qwen: Name?']);
  });
});

describe('sign-in (no VS Code)', () => {
  const agent = { name: 'hostile', command: 'node', args: ['agent.js'] };
  const methods = [
    { id: 'login', name: 'Log in' },
    { id: 'term', name: 'Terminal', type: 'terminal', args: ['login'] },
    { id: 'key', name: 'Key', type: 'env_var', varName: 'HOSTILE_API_KEY' },
  ];
  function setup(pick: string | undefined, answers: { confirm?: boolean; code?: number; secret?: string } = {}) {
    const calls: string[] = [];
    const kept = new Map<string, string>();
    const secrets: SecretStore = {
      get: async (k) => kept.get(k),
      store: async (k, v) => void kept.set(k, v),
      delete: async (k) => void kept.delete(k),
    };
    const prompts: SignInPrompts = {
      needed: (a, m) => void calls.push(`needed ${a.name}: ${m.map((x) => x.kind).join(',')}`),
      choose: async (_a, m: SignInMethod[]) =>
        said(
          calls,
          'choose',
          m.find((x) => x.id === pick),
        ),
      confirmCommand: async (_a, m) => said(calls, `confirm ${m.command} ${m.args.join(' ')}`, answers.confirm ?? true),
      runTerminal: async (_m, cwd) => said(calls, `run in ${cwd}`, answers.code),
      failed: (_a, _m, code) => void calls.push(`failed ${code}`),
      askSecret: async (_a, _m, name) => said(calls, `secret ${name}`, answers.secret),
    };
    return { calls, kept, signIn: new AgentSignIn(secrets, prompts, silentLogger, () => '/ws') };
  }

  it('unasked, it only says sign-in is needed; asked, an agent method authenticates', async () => {
    const s = setup('login');
    assert.equal(await s.signIn.signIn(agent, methods), undefined);
    s.signIn.requested = true;
    assert.deepEqual(await s.signIn.signIn(agent, methods), { authenticate: 'login' });
    assert.deepEqual(s.calls, ['needed hostile: agent,terminal,env_var', 'choose']);
  });

  it('a terminal method runs only when confirmed; exit 0 restarts, another code is said', async () => {
    const declined = setup('term', { confirm: false });
    declined.signIn.requested = true;
    assert.equal(await declined.signIn.signIn(agent, methods), undefined);
    assert.deepEqual(declined.calls, ['choose', 'confirm node agent.js login']);
    const ok = setup('term', { code: 0 });
    ok.signIn.requested = true;
    assert.equal(await ok.signIn.signIn(agent, methods), 'restart');
    assert.deepEqual(ok.calls.slice(2), ['run in /ws']);
    const failed = setup('term', { code: 1 });
    failed.signIn.requested = true;
    assert.equal(await failed.signIn.signIn(agent, methods), undefined);
    assert.deepEqual(failed.calls.slice(2), ['run in /ws', 'failed 1']);
  });

  it('an API key goes to the secret store and into the env; forget removes it', async () => {
    const s = setup('key', { secret: 'sekret-123' });
    s.signIn.requested = true;
    assert.equal(await s.signIn.signIn(agent, methods), 'restart');
    assert.deepEqual(await s.signIn.env(agent), { HOSTILE_API_KEY: 'sekret-123' });
    await s.signIn.forget(agent);
    assert.deepEqual(await s.signIn.env(agent), {});
    assert.equal(s.kept.size, 0);
  });
});
