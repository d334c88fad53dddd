import fc from 'fast-check';
import { compactionBudget, cutToFit, splitIntoPieces } from './compaction-pieces';
import { pinnedEventIds, toolsRead } from './compaction-pins';
import type { AgentConfig, StepConfig } from './agent-config';
import type { SessionApiEvent } from './session-events';

const at = '2026-12-03T00:00:00.000Z';
let n = 0;
const input = (text: string): SessionApiEvent => ({ type: 'SessionInputReceived', data: { eventId: `aev_${++n}`, messages: [{ type: 'text', content: text }], step: 'main', createdAt: at } });
const output = (text: string): SessionApiEvent => ({ type: 'SessionAgentOutput', data: { eventId: `aev_${++n}`, content: text, step: 'main', createdAt: at } });
const called = (call: string, tool = 'lookup', turnId?: string): SessionApiEvent => ({ type: 'SessionToolCalled', data: { eventId: `aev_${++n}`, toolCallId: call, modelCallId: `m_${call}`, toolConfigurationName: tool, toolName: 'lambda', toolInput: {}, arguments: '{}', step: 'main', createdAt: at, ...(turnId ? { turnId } : {}) } });
const returned = (call: string, out: Record<string, unknown>, tool = 'lookup', turnId?: string): SessionApiEvent => ({ type: 'SessionToolReturned', data: { eventId: `aev_${++n}`, toolCallId: call, toolConfigurationName: tool, toolName: 'lambda', toolOutput: out, error: false, step: 'main', createdAt: at, ...(turnId ? { turnId } : {}) } });
const ids = (events: SessionApiEvent[]) => events.map((e) => e.data.eventId);

describe('compaction pieces', () => {
  it('budgets 60 % of the window for a prompt and 20 % for the summary, the rest of the prompt for a piece', () => {
    expect(compactionBudget(1000, 500)).toEqual({ promptChars: 2400, summaryChars: 800, pieceChars: 2400 - 500 - 800 - 64 });
  });

  it('holds the summary to half of what a large system prompt leaves, and never under 5 % of the window', () => {
    expect(compactionBudget(1000, 500, 600).summaryChars).toBe(800);
    expect(compactionBudget(1000, 500, 800).summaryChars).toBe(400);
    expect(compactionBudget(1000, 500, 990).summaryChars).toBe(200);
    expect(compactionBudget(1000, 500, 800).pieceChars).toBe(2400 - 500 - 400 - 64);
  });

  it('cuts a text to its head and tail, saying how much was left out', () => {
    const text = `HEAD${'x'.repeat(10_000)}TAIL`;
    const cut = cutToFit(text, 300);
    expect(cut.text.length).toBeLessThanOrEqual(300);
    expect(cut.text.startsWith('HEAD')).toBe(true);
    expect(cut.text.endsWith('TAIL')).toBe(true);
    expect(cut.text).toContain(`[… ${cut.leftOut} characters left out …]`);
    expect(cut.leftOut).toBe(text.length - (cut.text.length - `\n[… ${cut.leftOut} characters left out …]\n`.length));
    expect(cutToFit('short', 300)).toEqual({ text: 'short', leftOut: 0 });
  });

  it('fills pieces greedily in order, and an event larger than a piece is cut and stands alone', () => {
    const events = [input('a'.repeat(300)), output('b'.repeat(300)), input('c'.repeat(5000)), output('d'.repeat(100))];
    const pieces = splitIntoPieces(events, 'include_outputs', 1000);
    expect(pieces.map((p) => p.eventIds)).toEqual([ids(events.slice(0, 2)), [events[2].data.eventId], [events[3].data.eventId]]);
    expect(pieces[1].cutChars).toBeGreaterThan(4000);
    expect(pieces[1].text.length).toBeLessThanOrEqual(1000);
    expect(pieces[0].text).toBe(`User: ${'a'.repeat(300)}\n\nAssistant: ${'b'.repeat(300)}`);
  });

  it('keeps events the model does not read with the piece they fall in; tool calls and outputs per policy', () => {
    const events = [input('q'), called('c1'), returned('c1', { v: 1 })];
    expect(splitIntoPieces(events, 'include_outputs', 1000)).toEqual([{ eventIds: ids(events), text: 'User: q\n\nTool result lookup: {"v":1}', cutChars: 0 }]);
    expect(splitIntoPieces(events, 'exclude', 1000)[0].text).toBe('User: q');
    expect(splitIntoPieces(events, 'include_all', 1000)[0].text).toContain('Tool call lookup: {}');
    expect(splitIntoPieces(events, 'exclude', 1000)[0].eventIds).toEqual(ids(events));
  });

  it('every piece fits and every event is in exactly one piece, in order, whatever the sizes', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 3000 }), { minLength: 1, maxLength: 60 }), fc.integer({ min: 400, max: 2000 }), (sizes, pieceChars) => {
        const events = sizes.map((s, i) => (i % 3 === 2 ? called(`c${i}`) : i % 2 ? output('o'.repeat(s)) : input('i'.repeat(s))));
        const pieces = splitIntoPieces(events, 'include_outputs', pieceChars);
        expect(pieces.flatMap((p) => p.eventIds)).toEqual(ids(events));
        for (const p of pieces) expect(p.text.length).toBeLessThanOrEqual(pieceChars);
      }),
    );
  });
});

describe('compaction pins', () => {
  const step = (condition?: string): StepConfig => ({ instructions: [], output_parser: { type: 'default' }, reminders: [], next_steps: condition ? [{ condition, step_name: 'main' }] : [] });
  const config = (condition?: string, tools: Record<string, unknown> = { lookup: { type: 'lambda' }, other: { type: 'lambda' } }) =>
    ({ name: 'a', model: { name: 'm' }, first_step_name: 'main', steps: { main: step(condition) }, tool_configurations: tools, metadata: {}, enabled: true }) as unknown as AgentConfig;

  it('finds the tools read through tools.<name> by conditions and tool configurations', () => {
    expect(toolsRead(config('tools.lookup.outputs.latest.ok == true'))).toEqual(new Set(['lookup']));
    expect(toolsRead(config("tools['other'].outputs.latest"))).toEqual(new Set(['other']));
    expect(toolsRead(config(undefined, { lookup: { type: 'lambda' }, other: { type: 'lambda', template: '$tools.lookup.outputs.latest' } }))).toEqual(new Set(['lookup']));
    expect(toolsRead(config('tools.lookups.x'))).toEqual(new Set());
  });

  it('pins the latest result of a tool a condition reads, with its call, and the running turn\'s tool events', () => {
    const old = [called('c1'), returned('c1', { v: 1 })];
    const latest = [called('c2'), returned('c2', { v: 2 })];
    const unread = [called('c3', 'other'), returned('c3', { v: 3 }, 'other')];
    const running = [called('c4', 'other', 'turn_9'), returned('c4', {}, 'other', 'turn_9')];
    const events = [input('q'), ...old, ...latest, ...unread, ...running];
    expect(pinnedEventIds(events, config('tools.lookup.outputs.latest.v > 1'), 'turn_9')).toEqual(new Set([...ids(latest), ...ids(running)]));
    expect(pinnedEventIds(events, config(), 'turn_1')).toEqual(new Set());
  });
});
