import { DomainError } from '@lib/platform/kernel';
import { canonicalEvents, RecordedEvent, recordedTurns, replayRange } from './replay';
import { answerSimilarity, replayDiff } from './replay-diff';

/**
 * Builds a session's stored events as the turn writes them: each run draws its own ids, times and holder, so two
 * runs of the same conversation differ only where the canonical form says they may.
 */
function run(tag: string, answers: { final?: string; tools?: string } = {}) {
  let n = 0;
  let t = Date.parse('2026-12-02T10:00:00Z') + (tag === 'b' ? 3_600_000 : 0);
  const id = (p: string) => `${p}_${tag === 'a' ? '0000aaaa' : '0000bbbb'}-${String(++n).padStart(4, '0')}`;
  const at = () => new Date((t += 250)).toISOString();
  const events: RecordedEvent[] = [{ type: 'SessionCreated', data: { sessionKey: `s-${tag}`, createdAt: at() } }];
  const push = (type: string, data: Record<string, unknown>) => events.push({ type, data, position: events.length + 1 });
  const turn = (input: string, body: (turnId: string) => void, revision = 0) => {
    const turnId = id('turn');
    push('SessionInputReceived', { eventId: id('aev'), createdAt: at(), messages: [{ type: 'text', content: input }], step: 'research' });
    push('SessionTurnStarted', { turnId, step: 'research', holder: `proc-${tag}`, agentRevision: revision, createdAt: at() });
    body(turnId);
  };
  const usage = { input_tokens: 10, output_tokens: 3 };
  turn('refunds?', (turnId) => {
    const mc = id('mc');
    push('SessionToolCalled', { eventId: id('aev'), turnId, createdAt: at(), toolCallId: 'c1', modelCallId: mc, toolConfigurationName: 'docs', toolName: 'corpora_search', toolInput: { query: 'refunds' }, arguments: '{"query":"refunds"}', step: 'research', inputsSeen: 1, usage });
    push('SessionToolCalled', { eventId: id('aev'), turnId, createdAt: at(), toolCallId: 'c2', modelCallId: mc, toolConfigurationName: 'docs', toolName: 'corpora_search', toolInput: { query: answers.tools ?? 'shipping' }, arguments: JSON.stringify({ query: answers.tools ?? 'shipping' }), step: 'research', inputsSeen: 1, usage });
    // Concurrent calls: the second run finishes them in the other order.
    const outs = [
      ['SessionToolReturned', { eventId: id('aev'), turnId, createdAt: at(), toolCallId: 'c1', toolConfigurationName: 'docs', toolName: 'corpora_search', toolOutput: { hits: ['14 days'] }, error: false, step: 'research' }],
      ['SessionToolReturned', { eventId: id('aev'), turnId, createdAt: at(), toolCallId: 'c2', toolConfigurationName: 'docs', toolName: 'corpora_search', toolOutput: { hits: ['3 weeks'] }, error: false, step: 'research' }],
    ] as const;
    for (const [type, data] of tag === 'b' ? [...outs].reverse() : outs) push(type, data);
    push('SessionAgentOutput', { eventId: id('aev'), turnId, createdAt: at(), content: answers.final ?? 'Refunds take 14 days.', step: 'research', inputsSeen: 1, usage });
    push('SessionStepTransitioned', { eventId: id('aev'), turnId, createdAt: at(), fromStep: 'research', toStep: 'wrapup', content: 'Refunds take 14 days.' });
    push('SessionAgentOutput', { eventId: id('aev'), turnId, createdAt: at(), content: '14 days.', step: 'wrapup', inputsSeen: 1, usage });
    push('SessionTurnEnded', { turnId, outcome: 'answered', usage: { input_tokens: 30, output_tokens: 9 }, nextStep: 'research', createdAt: at() });
  });
  turn('thanks', (turnId) => {
    push('SessionAgentOutput', { eventId: id('aev'), turnId, createdAt: at(), content: 'You are welcome.', step: 'research', inputsSeen: 2, usage });
    push('SessionTurnEnded', { turnId, outcome: 'answered', usage, createdAt: at() });
  });
  return events;
}

describe('recorded turns', () => {
  it('cuts a session into turns with their inputs, model answers (tool calls grouped by model call) and tool outputs', () => {
    const turns = recordedTurns(run('a'));
    expect(turns).toHaveLength(2);
    expect(turns[0].trigger).toEqual({ kind: 'message', messages: [{ type: 'text', content: 'refunds?' }], step: 'research' });
    expect(turns[0].answers.map((a) => [a.step, a.content, a.toolCalls.map((c) => c.id)])).toEqual([
      ['research', '', ['c1', 'c2']],
      ['research', 'Refunds take 14 days.', []],
      ['wrapup', '14 days.', []],
    ]);
    expect(turns[0].toolOutputs.map((o) => [o.toolCallId, o.arguments])).toEqual([['c1', '{"query":"refunds"}'], ['c2', '{"query":"shipping"}']]);
    expect(turns[0].unreplayable).toBeUndefined();
    expect(turns[1].inputEventId).toMatch(/^aev_/);
  });

  it('names a turn a replay cannot re-run: one a steer joined, one that waited for a client', () => {
    const events = run('a');
    const end = events.findIndex((e) => e.type === 'SessionTurnEnded');
    const steered = [...events.slice(0, end), { type: 'SessionInputReceived', data: { eventId: 'aev_x', messages: [], behavior: 'steer', step: 'research' } }, ...events.slice(end)];
    expect(recordedTurns(steered)[0].unreplayable).toBe('a steer arrived while it ran');
    const waited = [...events.slice(0, end), { type: 'SessionClientToolPending', data: { eventId: 'aev_y', pendingCalls: [] } }, ...events.slice(end)];
    expect(recordedTurns(waited)[0].unreplayable).toBe('it waited for client tool outputs');
  });

  it('takes a range from an input up to the turn holding an event, and refuses ids outside it (400 naming the field)', () => {
    const turns = recordedTurns(run('a'));
    expect(replayRange(turns, turns[1].inputEventId)).toEqual([turns[1]]);
    const answerOfFirst = String((turns[0].events.find((e) => e.type === 'SessionAgentOutput')!.data as { eventId: string }).eventId);
    expect(replayRange(turns, undefined, answerOfFirst)).toEqual([turns[0]]);
    const refused = (() => {
      try {
        replayRange(turns, turns[1].inputEventId, answerOfFirst);
      } catch (e) {
        return e as DomainError;
      }
    })();
    expect(refused?.details.fieldErrors).toEqual({ until_event_id: 'not an event of a replayed turn' });
    expect(() => replayRange(turns, answerOfFirst)).toThrow(/from_event_id/);
  });
});

describe('the canonical form', () => {
  it('makes two runs of the same conversation equal: ids, times, holder and the finishing order of concurrent calls aside', () => {
    const a = run('a');
    const b = run('b');
    expect(JSON.stringify(a)).not.toEqual(JSON.stringify(b));
    expect(canonicalEvents(b)).toEqual(canonicalEvents(a));
  });

  it('keeps what the configuration decides: a different answer or argument is a difference', () => {
    expect(canonicalEvents(run('b', { final: 'Refunds take 15 days.' }))).not.toEqual(canonicalEvents(run('a')));
    expect(canonicalEvents(run('b', { tools: 'shipping costs' }))).not.toEqual(canonicalEvents(run('a')));
  });

  it('keeps references between events comparable (an event id a pending call names)', () => {
    const pending = (ids: [string, string], named: [number, number]) => [
      { type: 'SessionToolCalled', data: { eventId: ids[0], toolCallId: 'k' } },
      { type: 'SessionToolCalled', data: { eventId: ids[1], toolCallId: 'l' } },
      { type: 'SessionClientToolPending', data: { eventId: 'aev_99999999-9', pendingCalls: named.map((i) => ({ event_id: ids[i] })) } },
    ];
    const x = canonicalEvents(pending(['aev_11111111-1', 'aev_11111111-2'], [1, 0]));
    expect(canonicalEvents(pending(['aev_22222222-1', 'aev_22222222-2'], [1, 0]))).toEqual(x);
    // The pending list names the calls the other way round: a difference.
    expect(canonicalEvents(pending(['aev_22222222-1', 'aev_22222222-2'], [0, 1]))).not.toEqual(x);
  });
});

describe('the replay diff', () => {
  const replayOf = (origin: Record<string, unknown>, events: RecordedEvent[]) => [{ type: 'SessionCreated', data: { replayOf: { sessionKey: 's-a', mode: 'recorded', agentRevision: 0, allowSideEffects: false, ...origin } } }, ...events.slice(1)];

  it('finds a faithful replay the same in every respect', () => {
    const diff = replayDiff(run('a'), replayOf({}, run('b')));
    expect(diff.totals).toMatchObject({ turns: 2, replayed: 2, same_answers: 2, same_tool_calls: 2, same_events: 2, diverged: 0 });
    expect(diff.turns[0]).toMatchObject({ same: { tool_calls: true, arguments: true, steps: true, answer: true, events: true }, answer_similarity: 1 });
    expect(diff.turns[0].original).toMatchObject({ steps: ['research', 'wrapup'], answer: '14 days.', tokens: { input_tokens: 30, output_tokens: 9 }, latency_ms: 2000 });
    expect(diff.totals.tokens.replay).toEqual({ input_tokens: 40, output_tokens: 12 });
  });

  it('shows a changed argument and answer, and a divergence stored by the replay, and turns it did not reach', () => {
    const changed = run('b', { tools: 'customs', final: 'Refunds take 14 days!' });
    const cut = changed.findIndex((e, i) => i > 1 && e.type === 'SessionInputReceived');
    const firstInput = String((run('a')[1].data as { eventId: string }).eventId);
    const replay = replayOf({}, [...changed.slice(0, cut), { type: 'SessionReplayDiverged', data: { inputEventId: firstInput, kind: 'step', detail: 'x', modelCall: 2 } }]);
    const diff = replayDiff(run('a'), replay);
    expect(diff.turns[0].same).toEqual({ tool_calls: true, arguments: false, steps: true, answer: true, events: false });
    expect(diff.turns[0].divergence).toEqual({ kind: 'step', detail: 'x', model_call: 2 });
    expect(diff.turns[1].replay).toBeUndefined();
    expect(diff.totals).toMatchObject({ turns: 2, replayed: 1, diverged: 1 });
  });

  it('pairs turns from the replay range only', () => {
    const original = run('a');
    const second = String((recordedTurns(original)[1].inputEventId));
    const diff = replayDiff(original, replayOf({ fromEventId: second }, [run('b')[0]]));
    expect(diff.turns.map((t) => t.input_event_id)).toEqual([second]);
  });
});

describe('answer similarity', () => {
  it('is 1 for equal texts (case and spacing aside), 0 for nothing shared, and in between otherwise', () => {
    expect(answerSimilarity('Refunds take 14 days.', 'refunds  take 14 days.')).toBe(1);
    expect(answerSimilarity('', '')).toBe(1);
    expect(answerSimilarity('abc', 'xyz')).toBe(0);
    const near = answerSimilarity('Refunds take 14 days.', 'Refunds take 15 days.');
    const far = answerSimilarity('Refunds take 14 days.', 'Shipping is slow.');
    expect(near).toBeGreaterThan(0.8);
    expect(near).toBeLessThan(1);
    expect(far).toBeLessThan(near);
  });
});
