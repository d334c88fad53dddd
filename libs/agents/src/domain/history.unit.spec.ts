import type { StepConfig } from './agent-config';
import { expandTerms } from './glossary';
import { historyMessages, reminderFires } from './history';
import { ActiveSession, sessionFold, SessionState } from './session';
import type { SessionEvent } from './session-events';

const at = '2026-03-01T00:00:00.000Z';
const created: SessionEvent = { type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'a', sessionKey: 's', name: 's', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: at } };
let n = 0;
const id = () => `aev_${++n}`;
const input = (text: string, extra: object = {}): SessionEvent => ({ type: 'SessionInputReceived', data: { eventId: id(), messages: [{ type: 'text', content: text }], step: 'main', createdAt: at, ...extra } });
const output = (text: string, inputsSeen?: number): SessionEvent => ({ type: 'SessionAgentOutput', data: { eventId: id(), content: text, step: 'main', createdAt: at, ...(inputsSeen !== undefined ? { inputsSeen } : {}) } });
const called = (call: string, model: string): SessionEvent => ({ type: 'SessionToolCalled', data: { eventId: id(), toolCallId: call, modelCallId: model, toolConfigurationName: 'docs', toolName: 'corpora_search', toolInput: {}, arguments: '{"query":"q"}', step: 'main', createdAt: at } });
const returned = (call: string): SessionEvent => ({ type: 'SessionToolReturned', data: { eventId: id(), toolCallId: call, toolConfigurationName: 'docs', toolName: 'corpora_search', toolOutput: { r: call }, error: false, step: 'main', createdAt: at } });

const fold = (events: SessionEvent[]): ActiveSession => [created, ...events].reduce<SessionState>((s, e) => sessionFold.evolve(s, e), sessionFold.initialState) as ActiveSession;
const steps = (reminders: StepConfig['reminders'] = []): Record<string, StepConfig> => ({ main: { instructions: [], output_parser: { type: 'default' }, reminders, next_steps: [] } });
const contents = (s: ActiveSession, st = steps()) => historyMessages(s, st, (r) => r.template).map((m) => m.content ?? m.tool_calls!.map((c) => c.id).join(','));

describe('prompt history', () => {
  it('groups the calls of one model answer into one assistant message, each answered by its output', () => {
    const messages = historyMessages(fold([input('q'), called('c1', 'm1'), called('c2', 'm1'), returned('c2'), returned('c1'), output('a')]), steps(), () => '');
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(messages[1].tool_calls!.map((c) => c.id)).toEqual(['c1', 'c2']);
  });

  it('puts a steer that came while tools ran after their outputs, and an answer before the input it had not seen', () => {
    expect(contents(fold([input('q'), called('c1', 'm1'), input('steer', { behavior: 'steer' }), returned('c1'), output('a')]))).toEqual(['q', 'c1', '{"r":"c1"}', 'steer', 'a']);
    expect(contents(fold([input('q'), input('steer'), output('first', 1), output('second', 2)]))).toEqual(['q', 'first', 'steer', 'second']);
  });

  it('closes calls that never got an output when input follows them (a client tool left waiting)', () => {
    const messages = historyMessages(fold([input('q'), called('c1', 'm1'), input('next')]), steps(), () => '');
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(messages[2].content).toContain('no output');
  });

  it('leaves hidden events out and starts from the last compaction summary', () => {
    const first = input('old');
    const kept = input('kept');
    const s = fold([first, output('old answer'), kept, { type: 'SessionCompacted', data: { eventId: id(), turnsCompacted: 1, eventsCompacted: 2, summaryText: 'S', summaryKey: 'k', compactedEventIds: [(first.data as { eventId: string }).eventId, `aev_${n - 1}`], createdAt: at } }, output('new')]);
    expect(contents(s)).toEqual(['Summary of the conversation before this point:\nS', 'kept', 'new']);
    const hidden = sessionFold.evolve(s, { type: 'SessionEventHidden', data: { eventId: (kept.data as { eventId: string }).eventId, createdAt: at } }) as ActiveSession;
    expect(contents(hidden)).toEqual(['Summary of the conversation before this point:\nS', 'new']);
  });

  it('fires reminders by hook after skip_first, every fire_every, the same on every rebuild', () => {
    expect([0, 1, 2, 3, 4, 5].map((i) => reminderFires({ type: 'templated', template: '', hooks: ['input_message'], skip_first: 1, fire_every: 2 }, i))).toEqual([false, true, false, true, false, true]);
    const s = fold([input('1'), output('a'), input('2'), output('b'), input('3')]);
    const st = steps([{ type: 'templated', template: 'R', hooks: ['input_message'], fire_every: 2 }]);
    expect(contents(s, st).filter((_, i) => i % 2 === 0)).toEqual(['1\n\n<reminder>R</reminder>', '2', '3\n\n<reminder>R</reminder>']);
  });
});

describe('glossary expansion', () => {
  it('expands whole words in any case, each term once, longest terms first', () => {
    const entries = new Map([['SLA', 'service level agreement'], ['SLA breach', 'a missed target'], ['AI', 'artificial intelligence']]);
    expect(expandTerms('An SLA breach, then another sla; SLAs and EMAIL stay.', entries)).toBe('An SLA breach (a missed target), then another sla (service level agreement); SLAs and EMAIL stay.');
    expect(expandTerms('nothing here', new Map())).toBe('nothing here');
  });
});
