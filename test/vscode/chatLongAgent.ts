/**
 * An ACP agent that produces a long transcript on demand, for the chat's windowing test and bench/chatScroll.mjs.
 * A prompt `LONG <messages> <tools>` answers with `<messages>` messages (every fourth one a user message, the
 * rest markdown, some with a code block) and `<tools>` completed tool calls spread among them, then end_turn.
 * A prompt `STREAM <chunksPerSecond> <seconds>` streams one markdown answer at that rate (chunks of a few
 * words, a code block now and then), like a fast model, for bench/chatStream.mjs.
 * Any other prompt gets one short answer. It offers two modes (ask / code) so mode switching works too.
 */
import { serveAcp, type Json } from '../fixtures/acpAgentKit';

const send = (frame: Json) => kit.send(frame);
const update = (sessionId: string, u: Json) => kit.update(sessionId, u);

let turnCount = 0;

async function turn(id: unknown, params: Json): Promise<void> {
  const sessionId = String(params.sessionId);
  const text = ((params.prompt as { type: string; text?: string }[]) ?? []).map((p) => p.text ?? '').join(' ');
  const t = ++turnCount;
  const rate = /\bSTREAM (\d+) (\d+)/.exec(text);
  if (rate) {
    const perSecond = Number(rate[1]);
    const total = perSecond * Number(rate[2]);
    const words = ['the', 'parser', 'reads', 'a', '**token**', 'then', '`emits`', 'one', 'node', 'per', 'rule,'];
    const started = Date.now();
    for (let i = 0; i < total; i++) {
      let piece = `${words[i % words.length]} `;
      if (i % 40 === 39) piece += '\n\n';
      if (i % 400 === 199) piece += '\n\n```ts\nconst x = parse(input);\n\nexport default x;\n```\n\n';
      update(sessionId, { sessionUpdate: 'agent_message_chunk', messageId: `t${t}-stream`, content: { type: 'text', text: piece } });
      // Keep to the rate: wait until chunk i is due (10 ms granularity).
      const due = started + ((i + 1) * 1000) / perSecond;
      if (due - Date.now() >= 10) await new Promise((r) => setTimeout(r, due - Date.now()));
    }
    update(sessionId, { sessionUpdate: 'agent_message_chunk', messageId: `t${t}-stream-end`, content: { type: 'text', text: `STREAM-END ${total} chunks.` } });
    send({ id, result: { stopReason: 'end_turn' } });
    return;
  }
  const m = /\bLONG (\d+) (\d+)/.exec(text);
  if (!m) {
    update(sessionId, { sessionUpdate: 'agent_message_chunk', messageId: `t${t}-short`, content: { type: 'text', text: `You said: ${text}` } });
    send({ id, result: { stopReason: 'end_turn' } });
    return;
  }
  const messages = Number(m[1]);
  const tools = Number(m[2]);
  const toolEvery = tools ? Math.max(1, Math.floor(messages / tools)) : Infinity;
  let toolsDone = 0;
  for (let i = 0; i < messages; i++) {
    if (i % 4 === 0) {
      update(sessionId, { sessionUpdate: 'user_message_chunk', messageId: `t${t}-u${i}`, content: { type: 'text', text: `Question ${i}: how does part ${i} work?` } });
    } else {
      const body =
        i % 8 === 1
          ? `Message **${i}**: part ${i} works like this:\n\n\`\`\`ts\nexport function part${i}(x: number): number {\n  return x * ${i};\n}\n\`\`\`\n`
          : `Message **${i}**: a paragraph with \`code\`, a [link](https://example.com/${i}) and a list:\n\n- first point of ${i}\n- second point of ${i}\n`;
      update(sessionId, { sessionUpdate: 'agent_message_chunk', messageId: `t${t}-a${i}`, content: { type: 'text', text: body } });
    }
    if (toolsDone < tools && i % toolEvery === toolEvery - 1) {
      const toolCallId = `t${t}-c${toolsDone++}`;
      update(sessionId, {
        sessionUpdate: 'tool_call',
        toolCallId,
        title: `Read src/file${i}.ts`,
        kind: 'read',
        status: 'pending',
        rawInput: { path: `src/file${i}.ts` },
        locations: [{ path: `src/file${i}.ts`, line: i }],
      });
      update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId, status: 'completed', content: [{ type: 'content', content: { type: 'text', text: `line 1 of file${i}\nline 2` } }] });
    }
    // Let stdout drain now and then, like a real agent streaming.
    if (i % 200 === 199) await new Promise((r) => setImmediate(r));
  }
  update(sessionId, { sessionUpdate: 'agent_message_chunk', messageId: `t${t}-end`, content: { type: 'text', text: `LONG-END ${messages} messages, ${toolsDone} tool calls.` } });
  send({ id, result: { stopReason: 'end_turn' } });
}

const MODES = [
  { id: 'ask', name: 'Ask', description: 'Answers only' },
  { id: 'code', name: 'Code', description: 'Edits files' },
];

const kit = serveAcp({
  initialize: (msg) =>
    send({
      id: msg.id,
      result: {
        protocolVersion: 1,
        agentCapabilities: { loadSession: false, promptCapabilities: {} },
        authMethods: [],
        agentInfo: { name: 'long-agent', title: 'Long transcript agent', version: '0.0.1' },
      },
    }),
  'session/new': (msg) => send({ id: msg.id, result: { sessionId: 'long-1', modes: { currentModeId: 'ask', availableModes: MODES } } }),
  'session/set_mode': (msg) => {
    const params = (msg.params ?? {}) as Json;
    send({ id: msg.id, result: {} });
    update(String(params.sessionId), { sessionUpdate: 'current_mode_update', currentModeId: String(params.modeId) });
  },
  'session/prompt': (msg) => void turn(msg.id, (msg.params ?? {}) as Json),
  'session/cancel': () => undefined,
});
