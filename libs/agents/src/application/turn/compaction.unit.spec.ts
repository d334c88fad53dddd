import type { AgentConfig } from '../../domain/agent-config';
import { ActiveSession, sessionFold, SessionState } from '../../domain/session';
import type { SessionEvent } from '../../domain/session-events';
import { eventsToCompact, overflowMessage, summarise } from './compaction';
import type { ModelCallOptions } from './model-call';
import { estimateTokens } from './turn-parts';

const at = '2026-12-03T00:00:00.000Z';
let n = 0;
const created: SessionEvent = { type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'a', sessionKey: 's', name: 's', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: at } };
const input = (text: string): SessionEvent => ({ type: 'SessionInputReceived', data: { eventId: `aev_${++n}`, messages: [{ type: 'text', content: text }], step: 'main', createdAt: at } });
const output = (text: string): SessionEvent => ({ type: 'SessionAgentOutput', data: { eventId: `aev_${++n}`, content: text, step: 'main', createdAt: at } });
const fold = (events: SessionEvent[]) => [created, ...events].reduce<SessionState>((s, e) => sessionFold.evolve(s, e), sessionFold.initialState) as ActiveSession;
const config = { name: 'a', model: { name: 'm' }, first_step_name: 'main', steps: { main: { instructions: [], output_parser: { type: 'default' }, reminders: [], next_steps: [] } }, tool_configurations: {}, metadata: {}, enabled: true } as unknown as AgentConfig;
const signal = new AbortController().signal;
const WINDOW = 1000;

/** A history about ten times the window: order numbers 1..n, each turn about 1,000 characters. */
function longHistory(orders: number) {
  const events: SessionEvent[] = [];
  for (let i = 1; i <= orders; i++) events.push(input(`order ${i}: ${'filler '.repeat(130)}`), output(`noted order ${i}`));
  return events;
}

/** A model that notes the order numbers it reads (the summary so far's and the piece's), as a summariser should. */
function notingModel(calls: ModelCallOptions[], pad = '') {
  return async (o: ModelCallOptions) => {
    calls.push(o);
    const orders = [...new Set([...String(o.messages[1].content).matchAll(/order (\d+)/g)].map((m) => Number(m[1])))];
    return { content: `orders ${orders.map((x) => `order ${x}`).join(', ')}${pad}`, toolCalls: [], usage: { input_tokens: 10, output_tokens: 5 } };
  };
}

describe('compaction in pieces', () => {
  it('summarises a history ten times the window in rolling pieces whose prompts all fit 60 % of it', async () => {
    const events = longHistory(40);
    const session = fold(events);
    expect(estimateTokens([{ role: 'user', content: JSON.stringify(events) }])).toBeGreaterThan(10 * WINDOW);
    const calls: ModelCallOptions[] = [];
    const result = await summarise(notingModel(calls), config, session, eventsToCompact(session, config).events, 'Keep order numbers.', signal, WINDOW);
    expect(calls.length).toBeGreaterThan(10);
    for (const c of calls) expect(estimateTokens(c.messages)).toBeLessThanOrEqual(0.6 * WINDOW);
    // Rolling: each call after the first reads the summary the one before it wrote.
    for (let i = 1; i < calls.length; i++) expect(String(calls[i].messages[1].content)).toMatch(/^Summary so far:\norders order 1\b/);
    expect(result.summary).toContain('order 1,');
    expect(result.summary).toContain('order 39');
    expect(result.pieces.every((p) => p.kind === 'piece' && p.promptTokens <= 0.6 * WINDOW)).toBe(true);
    expect(result.pieces.reduce((s, p) => s + p.events, 0)).toBe(78);
    expect(result.usage).toEqual({ input_tokens: 10 * calls.length, output_tokens: 5 * calls.length });
    expect(result.turns).toBe(39);
    expect(calls[0].messages[0].content).toContain('Keep order numbers.');
  });

  it('condenses a summary over its share, and cuts one that stays over it', async () => {
    const session = fold(longHistory(3));
    const calls: ModelCallOptions[] = [];
    const verbose = await summarise(notingModel(calls, ' blah'.repeat(300)), config, session, eventsToCompact(session, config).events, undefined, signal, WINDOW);
    expect(verbose.pieces.map((p) => p.kind)).toEqual(expect.arrayContaining(['piece', 'condense', 'cut']));
    expect(verbose.summary.length).toBeLessThanOrEqual(800);
    expect(verbose.summary).toMatch(/characters left out/);
    for (const c of calls) expect(estimateTokens(c.messages)).toBeLessThanOrEqual(0.6 * WINDOW);
  });

  it('holds the summary to what a large system prompt (memory blocks) leaves in the window', async () => {
    const session = fold(longHistory(3));
    const result = await summarise(notingModel([], ' blah'.repeat(300)), config, session, eventsToCompact(session, config).events, undefined, signal, WINDOW, 800);
    expect(result.summary.length).toBeLessThanOrEqual(400);
  });

  it('refuses instructions that leave no room for a piece', async () => {
    const session = fold(longHistory(3));
    await expect(summarise(notingModel([]), config, session, eventsToCompact(session, config).events, 'x'.repeat(2000), signal, WINDOW)).rejects.toMatchObject({ code: 'agent.compaction_no_room' });
  });

  it('says which part of a prompt is too large', () => {
    const big = 'x'.repeat(8000);
    expect(overflowMessage([{ role: 'system', content: big }], WINDOW, config)).toMatch(/instructions and memory alone \(about 2001 tokens\)/);
    expect(overflowMessage([{ role: 'system', content: 'sys' }, { role: 'user', content: 'Summary of the conversation before this point:\nS' }, { role: 'user', content: big }], WINDOW, config)).toMatch(/even after compaction.*summary about \d+, and what compaction keeps about 200\d/);
  });
});
