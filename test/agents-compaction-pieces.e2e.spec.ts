import { estimateTokens } from '@lib/agents';
import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';

type Ev = { type: string; [k: string]: any };
type Message = { role: string; content: string | null };

const WINDOW = 4096;
/** About 2,100 tokens per input: twenty of them are ten times the small model's window. */
const filler = (n: number) => `${'the customer talked about the weather at length '.repeat(180)}(turn ${n})`;

/**
 * Compaction in pieces (issue 46): an agent whose sessions grew on a model with a large window is switched to one with
 * a window ten times smaller than its history; the next turn compacts in pieces that each fit, and answers.
 */
describe('agent compaction in pieces', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  /** A summariser that keeps the facts it reads (lines with `fact:`, and those of the summary so far) as notes. */
  const noting = (req: CapturedRequest): ScriptedReply | undefined => {
    const messages = (req.body?.messages ?? []) as Message[];
    const system = String(messages[0]?.content ?? '');
    if (!system.startsWith('Summarise the conversation') && !system.startsWith('Shorten the notes')) return undefined;
    const facts = [...new Set(String(messages[1].content).match(/fact: [^.\n"]+/g) ?? [])];
    return { content: `notes: ${facts.join('; ')}` };
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'roomy', { capabilities: { context_limit: 200_000 } });
    await registerScripted(app, upstream, 'tiny', { capabilities: { context_limit: WINDOW } });
    const created = await app.call('POST', '/v2/agents', {
      key: 'keeper',
      name: 'keeper',
      model: { name: 'roomy' },
      tool_configurations: { lookup: { type: 'client', description: 'Look up an order', parameters: { type: 'object', properties: { order: { type: 'string' } } } } },
      first_step_name: 'main',
      steps: {
        main: { instructions: [{ type: 'inline', template: 'Take orders.' }], next_steps: [{ condition: "get('$.tools.lookup.outputs.latest.status') == 'shipped' && get('$.output.text') == 'DONE'", step_name: 'shipped' }] },
        shipped: { instructions: [{ type: 'inline', template: 'Tell the shipping date.' }] },
      },
      compaction: { threshold_percent: 80, keep_recent_inputs: 1, compaction_message: 'Keep every fact.' },
    });
    expect(created.status).toBe(201);
    upstream.onChat = noting;
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const say = (key: string, text: string) => app.call('POST', `/v2/agents/keeper/sessions/${key}/events`, { messages: [{ type: 'text', content: text }] });

  /** A session twenty turns long on the roomy model: a looked-up order first, a destination last. */
  async function longSession(key: string) {
    await app.call('POST', '/v2/agents/keeper/sessions', { key });
    upstream.enqueue({ toolCalls: [{ id: `call_${key}`, name: 'lookup', arguments: '{"order":"A-1"}' }] });
    const first = await say(key, 'fact: order A-1 is for Ada Lovelace. Where is it?');
    const pending = first.body.events.find((e: Ev) => e.type === 'tool_input');
    upstream.enqueue({ content: 'It has shipped.' });
    const resumed = await app.call('POST', `/v2/agents/keeper/sessions/${key}/events`, { type: 'tool_output', tool_outputs: [{ type: 'success', event_id: pending.id, output: { status: 'shipped', order: 'A-1' } }] });
    expect(resumed.body.events.map((e: Ev) => e.type)).toEqual(['tool_output', 'agent_output']);
    for (let i = 2; i <= 20; i++) {
      upstream.enqueue({ content: `noted ${i}` });
      const text = i === 20 ? `fact: the last order ships to Lyon. ${filler(i)}` : filler(i);
      expect((await say(key, text)).body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
    }
    const all = (await app.call('GET', `/v2/agents/keeper/sessions/${key}/events?limit=100`)).body.events as Ev[];
    // The history is ten times the small window (the prompt the roomy model last received says so).
    const last = upstream.chatRequests().at(-1)!.body as { messages: Message[] };
    expect(estimateTokens(last.messages as never)).toBeGreaterThan(10 * WINDOW);
    return all;
  }

  const fits = (requests: CapturedRequest[]) => requests.map((r) => estimateTokens((r.body as { messages: never }).messages)).filter((t) => t > WINDOW);

  it('compacts a history ten times the window in pieces that fit, keeps the tool result a condition reads, and answers', async () => {
    await longSession('long');
    const askedEvents = await longSession('asked');
    expect((await app.call('PATCH', '/v2/agents/keeper', { model: { name: 'tiny' } })).status).toBe(200);

    const from = upstream.chatRequests().length;
    upstream.enqueue();
    const done = await (async () => {
      upstream.onChat = (req) => noting(req) ?? { content: String(((req.body?.messages ?? []) as Message[])[0]?.content).startsWith('Tell') ? 'Ships Tuesday.' : 'DONE' };
      return say('long', 'Is order A-1 on its way?');
    })();
    expect(done.status).toBe(201);
    expect(done.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'compaction', 'agent_output', 'step_transition', 'agent_output']);
    expect(done.body.events.at(-1).content).toBe('Ships Tuesday.');
    const requests = upstream.chatRequests().slice(from);
    const summarising = requests.filter((r) => noting(r));
    expect(summarising.length).toBeGreaterThanOrEqual(10);
    // Every request the model received fits its declared window, by the service's own estimator.
    expect(fits(requests)).toEqual([]);
    // Facts of the first piece and of the last one are both in the summary.
    const compaction = done.body.events[1];
    expect(compaction.summary_text).toContain('order A-1 is for Ada Lovelace');
    expect(compaction.summary_text).toContain('the last order ships to Lyon');
    // The looked-up result the condition reads was not compacted: the model still reads it, and the step moved on it.
    const answerCall = requests.find((r) => String(((r.body as { messages: Message[] }).messages[0]).content).startsWith('Take orders.'))!.body as { messages: Message[] };
    expect(answerCall.messages.some((m) => m.role === 'tool' && String(m.content).includes('"status":"shipped"'))).toBe(true);
    expect(done.body.events[3]).toMatchObject({ from_step: 'main', to_step: 'shipped' });
    const visible = (await app.call('GET', '/v2/agents/keeper/sessions/long/events?limit=100')).body.events as Ev[];
    expect(visible.map((e) => e.type)).toEqual(['tool_input', 'tool_output', 'input_message', 'compaction', 'agent_output', 'step_transition', 'agent_output']);

    // What it cost is on the compaction span: its pieces, calls and tokens.
    const span = await until('the compaction span', async () => {
      const traces = (await app.call('GET', '/v2/agent_analytics/traces?agent_key=keeper&session_key=long&operation=compaction')).body.traces as { trace_id: string }[] | undefined;
      if (!traces?.length) return undefined;
      const spans = (await app.call('GET', `/v2/agent_analytics/traces/${traces[0].trace_id}/spans`)).body.spans as { operation: string; attributes: Record<string, number> }[];
      return spans.find((s) => s.operation === 'compaction');
    });
    expect(span.attributes).toMatchObject({ events_compacted: expect.any(Number), calls: summarising.length, pieces: expect.any(Number) });
    expect(span.attributes.input_tokens).toBeGreaterThan(0);

    // An explicit compaction of such a history, up to its last event, works the same way.
    const before = upstream.chatRequests().length;
    const lastEvent = askedEvents.at(-1)!;
    const asked = await app.call('POST', '/v2/agents/keeper/sessions/asked/events', { type: 'compact', compact_up_to_event_id: lastEvent.id });
    expect(asked.status).toBe(201);
    expect(asked.body.events.map((e: Ev) => e.type)).toEqual(['compaction']);
    expect(asked.body.events[0].summary_text).toContain('order A-1 is for Ada Lovelace');
    expect(asked.body.events[0].summary_text).toContain('the last order ships to Lyon');
    const askedRequests = upstream.chatRequests().slice(before);
    expect(askedRequests.length).toBeGreaterThanOrEqual(10);
    expect(fits(askedRequests)).toEqual([]);
  }, 120_000);

  it('a prompt still over the window after compaction is a context limit that says which part is too large', async () => {
    await app.call('POST', '/v2/agents', { key: 'tight', name: 'tight', model: { name: 'tiny' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/agents/tight/sessions', { key: 'huge' });
    const tight = (text: string) => app.call('POST', '/v2/agents/tight/sessions/huge/events', { messages: [{ type: 'text', content: text }] });
    upstream.enqueue({ content: 'ok' });
    await tight('hello');
    // Compaction instructions that leave no room for a piece in the window: refused, and nothing is stored.
    const before = (await app.call('GET', '/v2/agents/tight/sessions/huge/events?limit=100&include_hidden=true')).body.events.length;
    const refused = await app.call('POST', '/v2/agents/tight/sessions/huge/events', { type: 'compact', compaction_message: 'Keep it all. '.repeat(700) });
    expect(refused.status).toBe(422);
    expect(refused.body.messages[0]).toMatch(/leave no room for the conversation within 60 % of the model's context window of 4096 tokens/);
    expect((await app.call('GET', '/v2/agents/tight/sessions/huge/events?limit=100&include_hidden=true')).body.events).toHaveLength(before);
    expect((await app.call('GET', '/v2/agents/tight/sessions/huge')).body.status).not.toBe('running');
    const res = await tight('x'.repeat(4 * WINDOW + 400));
    expect(res.status).toBe(201);
    const limit = res.body.events.find((e: Ev) => e.type === 'context_limit_exceeded');
    expect(limit.message).toMatch(/even after compaction.*what compaction keeps about \d+ \(the last 1 input/);
    expect(res.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'compaction', 'context_limit_exceeded']);
  }, 60_000);
  it('holds the summary to what a large system prompt (instructions, memory blocks) leaves in the window', async () => {
    // About 3,250 tokens of instructions on a 4,096-token model: a summary of the usual 20 % (819 tokens) would not fit.
    await app.call('POST', '/v2/agents', { key: 'memo', name: 'memo', model: { name: 'tiny' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Remember: '.repeat(1300), template_type: 'text' }] } } });
    await app.call('POST', '/v2/agents/memo/sessions', { key: 'm' });
    const from = upstream.chatRequests().length;
    upstream.onChat = (req) => (noting(req) ? { content: `notes: ${'a long-winded note '.repeat(300)}` } : { content: 'ok' });
    const memo = (text: string) => app.call('POST', '/v2/agents/memo/sessions/m/events', { messages: [{ type: 'text', content: text }] });
    expect((await memo(`fact: one. ${'x'.repeat(600)}`)).body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
    const second = await memo(`fact: two. ${'y'.repeat(600)}`);
    expect(second.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'compaction', 'agent_output']);
    expect(fits(upstream.chatRequests().slice(from))).toEqual([]);
  }, 60_000);
});
