import { ScriptedOpenAIServer } from '@lib/testing';
import { asBearer, asKey, createClient, createUser, endUserTokenFor } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Json = Record<string, any>;

const REFUSAL = 'I cannot answer that: the answer was withheld by a guardrail.';
const INPUT_REFUSAL = 'I cannot help with that request: it was stopped by a guardrail.';
const CARD = '\\b\\d{4}[- ]?\\d{4}[- ]?\\d{4}[- ]?\\d{4}\\b';

/**
 * Guardrails (issue 46, docs/agents.md "Guardrails") against the scripted model: grounding with a scripted
 * factual-consistency scorer (an HHEM route of the scripted server), a judge (a second registered model on the same
 * scripted server), patterns; on input, output and tool calls; block, redact, regenerate, flag; streamed answers held
 * until checked and released sentence by sentence; bad configurations refused field by field with nothing stored.
 */
describe('agent guardrails', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let hhemScore = 0.9;
  const hhem: { premise: string; hypothesis: string }[] = [];
  const docs = { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'kb', lexical_interpolation: 1 }], limit: 3 } } };
  const agentWith = (key: string, guardrails: unknown[], extra: Json = {}) => ({
    key,
    name: key,
    model: { name: 'm' },
    tool_configurations: { docs },
    first_step_name: 'main',
    steps: { main: { instructions: [{ type: 'inline', template: 'Answer from the docs.' }] } },
    guardrails,
    ...extra,
  });
  const create = async (key: string, guardrails: unknown[]) => {
    const res = await app.call('POST', '/v2/agents', agentWith(key, guardrails));
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    await app.call('POST', `/v2/agents/${key}/sessions`, { key: 's' });
  };
  const say = (agent: string, text: string, session = 's') => app.call('POST', `/v2/agents/${agent}/sessions/${session}/events`, { messages: [{ type: 'text', content: text }] });
  const listed = async (agent: string, session = 's'): Promise<Json[]> => (await app.call('GET', `/v2/agents/${agent}/sessions/${session}/events?limit=100`)).body.events;
  const types = (events: Json[]) => events.map((e) => e.type);
  const chatBodies = (from: number) => upstream.chatRequests().slice(from).map((r) => r.body as Json);
  const judgeSays = (score: number, reason: string) => ({ content: JSON.stringify({ score, reason }) });

  /** POSTs a streamed input and collects its SSE frames as they arrive. */
  const stream = (agent: string, text: string) => {
    const frames: Json[] = [];
    const done = (async () => {
      const res = await fetch(`${app.url}/v2/agents/${agent}/sessions/s/events`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ type: 'text', content: text }], stream_response: true }) });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        buffer += value;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const data = /^data:(.*)$/m.exec(buffer.slice(0, at));
          buffer = buffer.slice(at + 2);
          if (data) frames.push(JSON.parse(data[1]) as Json);
        }
      }
      return res.status;
    })();
    return { frames, done, pieces: () => frames.filter((f) => f.type === 'streaming_agent_output').map((f) => f.content as string) };
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const until = async (what: string, check: () => boolean) => {
    for (let i = 0; i < 200; i++) {
      if (check()) return;
      await sleep(25);
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.route('POST', '/hhem', (req) => {
      const [[premise, hypothesis]] = req.body?.pairs as string[][];
      hhem.push({ premise, hypothesis });
      return { status: 200, json: { scores: [hhemScore] } };
    });
    app = await startTestApp({ env: { LOG_LEVEL: 'warn', FCS_HHEM_URL: `${upstream.url}/hhem` } });
    await registerScripted(app, upstream, 'm');
    await registerScripted(app, upstream, 'judge');
    await app.call('POST', '/v2/corpora', { key: 'kb', name: 'KB' });
    await app.call('POST', '/v2/corpora/kb/documents', { id: 'refunds', type: 'core', document_parts: [{ text: 'Refunds are paid within 14 days of the return.' }] });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.clear());

  it('refuses a bad configuration field by field (400 with the field, nothing stored), on create and on update', async () => {
    const cases: [unknown, string][] = [
      ['all', 'guardrails'],
      [Array.from({ length: 21 }, () => ({ type: 'pattern', patterns: ['x'], on: 'output', action: 'flag' })), 'guardrails'],
      [[{ type: 'toxicity', action: 'block' }], 'guardrails[0].type'],
      [[{ type: 'grounding', threshold: 2, action: 'block' }], 'guardrails[0].threshold'],
      [[{ type: 'grounding', action: 'redact' }], 'guardrails[0].action'],
      [[{ type: 'grounding', action: 'block', on: 'input' }], 'guardrails[0].on'],
      [[{ type: 'judge', llm_name: 'judge', policy: 'Be kind.', on: 'output', action: 'redact' }], 'guardrails[0].action'],
      [[{ type: 'judge', llm_name: 'judge', policy: 'Be kind.', on: 'input', action: 'regenerate' }], 'guardrails[0].action'],
      [[{ type: 'judge', llm_name: 'judge', on: 'output', action: 'block' }], 'guardrails[0].policy'],
      [[{ type: 'judge', llm_name: 'nobody', policy: 'Be kind.', on: 'output', action: 'block' }], 'guardrails[0].llm_name'],
      [[{ type: 'pattern', patterns: ['x'], on: 'output', action: 'regenerate' }], 'guardrails[0].action'],
      [[{ type: 'pattern', patterns: ['x'], on: 'tool_call', action: 'redact' }], 'guardrails[0].action'],
      [[{ type: 'pattern', patterns: [], on: 'output', action: 'block' }], 'guardrails[0].patterns'],
      [[{ type: 'pattern', patterns: ['(?=lookahead)x'], on: 'output', action: 'block' }], 'guardrails[0].patterns[0]'],
      [[{ type: 'pattern', patterns: ['ok', '(a'], on: 'output', action: 'block' }], 'guardrails[0].patterns[1]'],
      [[{ type: 'pattern', patterns: ['x'], on: 'output', action: 'block', colour: 'red' }], 'guardrails[0].colour'],
      [[{ type: 'pattern', patterns: ['x'], on: 'input', action: 'block', check: 'sentence' }], 'guardrails[0].check'],
      [[{ type: 'judge', llm_name: 'judge', policy: 'Be kind.', on: 'output', action: 'regenerate', check: 'sentence' }], 'guardrails[0].check'],
      [[{ type: 'pattern', name: 'cards', patterns: ['x'], on: 'output', action: 'block' }, { type: 'pattern', name: 'cards', patterns: ['y'], on: 'input', action: 'block' }], 'guardrails[1].name'],
      [[{ type: 'pattern', name: 'no spaces', patterns: ['x'], on: 'output', action: 'block' }], 'guardrails[0].name'],
    ];
    for (const [guardrails, field] of cases) {
      const res = await app.call('POST', '/v2/agents', agentWith('bad', guardrails as unknown[]));
      expect([res.status, Object.keys(res.body.field_errors ?? {})]).toEqual([400, [field]]);
      expect(res.body.request_id).toEqual(expect.any(String));
      expect(res.body.messages[0]).toEqual(expect.any(String));
    }
    expect((await app.call('GET', '/v2/agents/bad')).status).toBe(404);

    await create('keeps', [{ type: 'pattern', patterns: ['x'], on: 'output', action: 'flag' }]);
    const before = (await app.call('GET', '/v2/agents/keeps')).body;
    const patched = await app.call('PATCH', '/v2/agents/keeps', { guardrails: [{ type: 'pattern', patterns: ['(?<=x)y'], on: 'output', action: 'block' }] });
    expect([patched.status, Object.keys(patched.body.field_errors)]).toEqual([400, ['guardrails[0].patterns[0]']]);
    expect((await app.call('GET', '/v2/agents/keeps')).body).toEqual(before);
    expect(before.guardrails).toEqual([{ type: 'pattern', patterns: ['x'], on: 'output', action: 'flag' }]);
  });

  it('an agent user, who may talk to the agent, may not turn its guardrails off (403, unchanged), and its input is still checked; an end user never sees the guardrail\'s event', async () => {
    await create('ruled', [{ type: 'pattern', name: 'cards', patterns: [CARD], on: 'input', action: 'redact' }]);
    const user = asKey(await createUser(app, 'talker', { agent_roles: [{ agent_key: 'ruled', role: 'agent_user' }] }));
    const off = await app.call('PATCH', '/v2/agents/ruled', { guardrails: null }, user);
    expect(off.status).toBe(403);
    expect((await app.call('GET', '/v2/agents/ruled')).body.guardrails).toHaveLength(1);
    expect((await app.call('POST', '/v2/agents/ruled/sessions', { key: 'mine' }, user)).status).toBe(201);
    upstream.enqueue({ content: 'ok' });
    const res = await app.call('POST', '/v2/agents/ruled/sessions/mine/events', { messages: [{ type: 'text', content: 'card 4111111111111111' }] }, user);
    expect(res.body.events[0].messages[0].content).toBe('card [REDACTED]');

    // An end user sees its masked input and the answer, never the guardrail's event (machinery, as tool calls are).
    await app.call('POST', '/v2/agent_aliases', { key: 'ruled-desk', name: 'Desk', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'ruled' } }] } });
    const client = await createClient(app, 'shop', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'ruled', role: 'agent_user' }] });
    const ada = asBearer(await endUserTokenFor(app, client, 'ada'));
    await app.call('POST', '/v2/agent_aliases/ruled-desk/end_user_sessions', { key: 'eu' }, ada);
    upstream.enqueue({ content: 'Refunded.' });
    const eu = await app.call('POST', '/v2/agent_aliases/ruled-desk/end_user_sessions/eu/events', { messages: [{ type: 'text', content: 'card 4111-1111-1111-1111' }] }, ada);
    expect(eu.status).toBe(201);
    expect(types(eu.body.events)).toEqual(['input_message', 'agent_output']);
    expect(eu.body.events[0].messages[0].content).toBe('card [REDACTED]');
    expect(types((await app.call('GET', '/v2/agent_aliases/ruled-desk/end_user_sessions/eu/events', undefined, ada)).body.events)).toEqual(['input_message', 'agent_output']);
  });

  it('grounding: an answer the scripted scorer finds unsupported by the retrieved texts is blocked; a supported one passes', async () => {
    await create('grounded', [{ type: 'grounding', threshold: 0.5, action: 'block' }]);
    hhemScore = 0.12;
    upstream.enqueue({ toolCalls: [{ id: 'c1', name: 'docs', arguments: '{"query":"refunds paid"}' }] }, { content: 'Refunds take 90 days.' });
    const res = await say('grounded', 'How long do refunds take?');
    expect(res.status).toBe(201);
    expect(types(res.body.events)).toEqual(['input_message', 'tool_input', 'tool_output', 'guardrail_triggered', 'agent_output']);
    expect(res.body.events[3]).toMatchObject({ guardrail: 'grounding_0', guardrail_type: 'grounding', on: 'output', action: 'block', score: 0.12 });
    expect(res.body.events[3].reason).toMatch(/factual consistency 0\.120 against 1 retrieved texts is below 0\.5/);
    expect(res.body.events[4].content).toBe(REFUSAL);
    expect(hhem.at(-1)).toEqual({ premise: expect.stringContaining('Refunds are paid within 14 days'), hypothesis: 'Refunds take 90 days.' });
    // What the user got is what is stored, and what the model reads back next turn.
    expect((await listed('grounded')).at(-1)).toMatchObject({ type: 'agent_output', content: REFUSAL });

    hhemScore = 0.93;
    upstream.enqueue({ toolCalls: [{ id: 'c2', name: 'docs', arguments: '{"query":"refunds"}' }] }, { content: 'Refunds take 14 days.' });
    const ok = await say('grounded', 'And again?');
    expect(types(ok.body.events)).toEqual(['input_message', 'tool_input', 'tool_output', 'agent_output']);
    expect(ok.body.events.at(-1).content).toBe('Refunds take 14 days.');

    // The decision is a span of the turn's trace.
    const traces = (await app.call('GET', '/v2/agent_analytics/traces?limit=100')).body.traces as Json[];
    const spansOf = async (id: string) => (await app.call('GET', `/v2/agent_analytics/traces/${id}/spans?limit=100`)).body.spans as Json[];
    const all = (await Promise.all(traces.filter((t) => t.session_key === 's').map((t) => spansOf(t.trace_id)))).flat();
    expect(all.find((s) => s.operation === 'guardrail')).toMatchObject({ attributes: { guardrail: 'grounding_0', guardrail_type: 'grounding', on: 'output', action: 'block', score: 0.12 } });
  });

  it('redaction: a card number is masked in the stored input and in what the model sees; an answer is masked before it reaches the user', async () => {
    await create('cards', [
      { type: 'pattern', name: 'card_in', patterns: [CARD], on: 'input', action: 'redact' },
      { type: 'pattern', name: 'card_out', patterns: [CARD], on: 'output', action: 'redact' },
    ]);
    const from = upstream.chatRequests().length;
    upstream.enqueue({ content: 'Noted: card 5500-0000-0000-0004 will be refunded.' });
    const res = await say('cards', 'Refund my card 4111 1111 1111 1111 please');
    expect(types(res.body.events)).toEqual(['input_message', 'guardrail_triggered', 'guardrail_triggered', 'agent_output']);
    expect(res.body.events[0].messages).toEqual([{ type: 'text', content: 'Refund my card [REDACTED] please' }]);
    expect(res.body.events[1]).toMatchObject({ guardrail: 'card_in', on: 'input', action: 'redact', input_event_id: res.body.events[0].id, score: null, reason: '1 match of its patterns' });
    expect(res.body.events[2]).toMatchObject({ guardrail: 'card_out', on: 'output', action: 'redact' });
    expect(res.body.events[3].content).toBe('Noted: card [REDACTED] will be refunded.');
    const [sent] = chatBodies(from);
    expect(JSON.stringify(sent.messages)).toContain('Refund my card [REDACTED] please');
    const everything = JSON.stringify(await listed('cards'));
    expect(everything).not.toContain('4111');
    expect(everything).not.toContain('5500');
  });

  it('a catastrophic-backtracking pattern runs on RE2 in linear time', async () => {
    await create('redos', [{ type: 'pattern', patterns: ['(a+)+$'], on: 'input', action: 'flag' }]);
    upstream.enqueue({ content: 'Fine.' });
    const started = Date.now();
    const res = await say('redos', `${'a'.repeat(50_000)}!`);
    expect(res.status).toBe(201);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('an input a judge blocks is answered with a refusal without the agent model seeing it', async () => {
    await create('judged_in', [{ type: 'judge', llm_name: 'judge', policy: 'Refuse questions about weapons.', on: 'input', action: 'block' }]);
    const from = upstream.chatRequests().length;
    upstream.enqueue(judgeSays(0.05, 'asks how to build a weapon'));
    const res = await say('judged_in', 'How do I build a crossbow?');
    expect(types(res.body.events)).toEqual(['input_message', 'guardrail_triggered', 'agent_output']);
    expect(res.body.events[1]).toMatchObject({ guardrail: 'judge_0', guardrail_type: 'judge', on: 'input', action: 'block', score: 0.05, reason: 'asks how to build a weapon' });
    expect(res.body.events[2].content).toBe(INPUT_REFUSAL);
    const bodies = chatBodies(from);
    expect(bodies.map((b) => b.model)).toEqual(['judge-upstream']);
    expect(bodies[0].messages[1].content).toContain('POLICY:\nRefuse questions about weapons.');
    expect(bodies[0].messages[1].content).toContain('How do I build a crossbow?');

    // The next input passes the judge and reaches the model.
    upstream.enqueue(judgeSays(0.95, 'fine'), { content: 'Bake at 180 degrees.' });
    const next = await say('judged_in', 'How do I bake bread?');
    expect(types(next.body.events)).toEqual(['input_message', 'agent_output']);
    expect(next.body.events[1].content).toBe('Bake at 180 degrees.');
  });

  it('a steer an input guardrail blocks is refused (400) and nothing of it is stored; the running turn answers as before', async () => {
    await create('steered', [{ type: 'pattern', name: 'secrets', patterns: ['(?i)password'], on: 'input', action: 'block' }]);
    upstream.enqueue({ content: 'Slow answer.', firstByteDelayMs: 1500 });
    const first = say('steered', 'Hello');
    await until('the turn to run', () => upstream.chatRequests().some((r) => JSON.stringify(r.body).includes('Hello')));
    // The turn's start is stored while its model call is on its way: give the commit its moment.
    await sleep(150);
    const steer = await app.call('POST', '/v2/agents/steered/sessions/s/events', { messages: [{ type: 'text', content: 'my password is hunter2' }], behavior: 'steer' });
    expect(steer.status).toBe(400);
    expect(steer.body.messages[0]).toMatch(/blocked by guardrail secrets/);
    expect(steer.body.field_errors).toEqual({ messages: 'blocked by guardrail secrets' });
    expect((await first).body.events.at(-1).content).toBe('Slow answer.');
    const stored = await listed('steered');
    expect(types(stored)).toEqual(['input_message', 'agent_output']);
    expect(JSON.stringify(stored)).not.toContain('hunter2');
  });

  it('a judge on tool calls blocks a call before it runs: the model reads why, and the turn goes on', async () => {
    await create('judged_tools', [{ type: 'judge', name: 'no_salaries', llm_name: 'judge', policy: 'Never search for salaries.', on: 'tool_call', action: 'block' }]);
    const from = upstream.chatRequests().length;
    upstream.enqueue({ toolCalls: [{ id: 'c9', name: 'docs', arguments: '{"query":"CEO salary"}' }] }, judgeSays(0.1, 'searches for salaries'), { content: 'I may not look that up.' });
    const res = await say('judged_tools', 'What does the CEO earn?');
    expect(types(res.body.events)).toEqual(['input_message', 'tool_input', 'guardrail_triggered', 'tool_output', 'agent_output']);
    expect(res.body.events[2]).toMatchObject({ guardrail: 'no_salaries', on: 'tool_call', action: 'block', tool_call_id: 'c9', score: 0.1 });
    expect(res.body.events[3]).toMatchObject({ error: true, tool_output: { error: 'the call was blocked by guardrail no_salaries: searches for salaries' } });
    const [, judged, last] = chatBodies(from);
    expect(judged.model).toBe('judge-upstream');
    expect(judged.messages[1].content).toContain('TOOL CALL:\ndocs {"query":"CEO salary"}');
    expect(last.messages.find((m: Json) => m.role === 'tool').content).toContain('blocked by guardrail no_salaries');
    expect(res.body.events.at(-1).content).toBe('I may not look that up.');
  });

  it('regenerate asks the model once more with the reason; a second answer the guardrail stops is blocked', async () => {
    await create('regen', [{ type: 'judge', llm_name: 'judge', policy: 'Be polite.', on: 'output', action: 'regenerate' }]);
    const from = upstream.chatRequests().length;
    upstream.enqueue({ content: 'Figure it out yourself.' }, judgeSays(0.1, 'rude'), { content: 'Happy to help: press reset.' }, judgeSays(0.9, 'polite'));
    const res = await say('regen', 'How do I reset it?');
    expect(types(res.body.events)).toEqual(['input_message', 'guardrail_triggered', 'agent_output']);
    expect(res.body.events[1]).toMatchObject({ action: 'regenerate', reason: 'rude' });
    expect(res.body.events[2].content).toBe('Happy to help: press reset.');
    const again = chatBodies(from)[2];
    expect(again.messages.at(-2)).toEqual({ role: 'assistant', content: 'Figure it out yourself.' });
    expect(again.messages.at(-1).content).toContain('withheld by a guardrail: rude');

    upstream.enqueue({ content: 'No.' }, judgeSays(0.1, 'rude'), { content: 'Still no.' }, judgeSays(0.2, 'still rude'));
    const twice = await say('regen', 'Please?');
    expect(types(twice.body.events)).toEqual(['input_message', 'guardrail_triggered', 'guardrail_triggered', 'agent_output']);
    expect(twice.body.events[2]).toMatchObject({ action: 'block', reason: 'still rude (after one regeneration)' });
    expect(twice.body.events[3].content).toBe(REFUSAL);
    expect(chatBodies(from).length).toBe(8);
  });

  it('flag only records: the answer goes out unchanged', async () => {
    await create('flagged', [{ type: 'pattern', name: 'mentions_competitor', patterns: ['(?i)acme'], on: 'output', action: 'flag' }]);
    upstream.enqueue({ content: 'Acme sells one too.' });
    const res = await say('flagged', 'Where else can I buy it?');
    expect(types(res.body.events)).toEqual(['input_message', 'guardrail_triggered', 'agent_output']);
    expect(res.body.events[1]).toMatchObject({ guardrail: 'mentions_competitor', action: 'flag' });
    expect(res.body.events[2].content).toBe('Acme sells one too.');
  });

  it('streamed: the answer is held until checked, then released masked; nothing unchecked reaches the caller', async () => {
    await create('held', [{ type: 'pattern', patterns: ['\\d{3}-\\d{4}'], on: 'output', action: 'redact' }]);
    upstream.enqueue({ chunks: ['Call ', '555-', '1234 now.'], holdAfterChunks: 2 });
    const s = stream('held', 'Who do I call?');
    await upstream.whenHeld();
    await sleep(200);
    expect(s.pieces()).toEqual([]);
    upstream.release();
    expect(await s.done).toBe(201);
    expect(s.pieces()).toEqual(['Call [REDACTED] now.']);
    const end = s.frames.find((f) => f.type === 'streaming_agent_output_end');
    const stored = (await listed('held')).find((e) => e.id === end!.event_id);
    expect(stored).toMatchObject({ type: 'agent_output', content: 'Call [REDACTED] now.' });
    expect(s.frames.find((f) => f.type === 'guardrail_triggered')).toMatchObject({ action: 'redact', check: 'answer' });
  });

  it('streamed with check "sentence": each sentence goes out once checked; a blocked sentence stops the answer after those already sent', async () => {
    await create('sentences', [{ type: 'pattern', name: 'secret', patterns: ['(?i)password'], on: 'output', action: 'block', check: 'sentence' }]);
    upstream.enqueue({ chunks: ['The door is green. ', 'The password ', 'is hunter2. ', 'Bye.'], holdAfterChunks: 1 });
    const s = stream('sentences', 'Tell me about the door');
    await upstream.whenHeld();
    // The first sentence is out while the model is still held mid-answer.
    await until('the first sentence', () => s.pieces().length === 1);
    expect(s.pieces()).toEqual(['The door is green. ']);
    upstream.release();
    expect(await s.done).toBe(201);
    expect(s.pieces()).toEqual(['The door is green. ', REFUSAL]);
    expect(s.pieces().join('')).not.toContain('hunter2');
    const stored = (await listed('sentences')).filter((e) => e.type === 'agent_output').at(-1);
    expect(stored!.content).toBe(`The door is green. ${REFUSAL}`);
    expect((await listed('sentences')).find((e) => e.type === 'guardrail_triggered')).toMatchObject({ guardrail: 'secret', action: 'block', check: 'sentence' });

    // Text the model streamed before asking for a tool is not part of the answer that follows.
    upstream.enqueue({ chunks: ['Let me look. '], toolCalls: [{ id: 'c7', name: 'docs', arguments: '{"query":"door"}' }] }, { chunks: ['It is green. ', 'Bye.'] });
    const again = stream('sentences', 'Look it up');
    expect(await again.done).toBe(201);
    const answer = (await listed('sentences')).filter((e) => e.type === 'agent_output').at(-1);
    expect(answer!.content).toBe('It is green. Bye.');
    expect(again.pieces().slice(-2)).toEqual(['It is green. ', 'Bye.']);
  });
});
