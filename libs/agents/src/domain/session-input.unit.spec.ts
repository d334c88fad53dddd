import { givenEvents } from '@lib/testing';
import type { PendingClientCall, SessionEvent } from './session-events';
import { sessionFold } from './session';
import { decideCompactionRequest, decideInputMessage, decideInterrupt, decideToolOutputs, heldInput } from './session-input';

const now = new Date('2026-12-02T10:00:00.000Z');
const at = now.toISOString();
const earlier = '2026-12-02T09:00:00.000Z';
const ref = { agentKey: 'ag', sessionKey: 's1' };
const steps = { main: {}, review: {} };
/** Event ids drawn in order (`aev_1`, `aev_2`, …), so a spec sees how many a decision drew. */
function ids() {
  let n = 0;
  return { newEventId: () => `aev_${++n}`, drawn: () => n };
}
const created: SessionEvent = { type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'ag', sessionKey: 's1', name: 's1', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: earlier } };
const deleted: SessionEvent = { type: 'SessionDeleted', data: { deletedAt: earlier } };
const input = (eventId: string, externalId?: string): SessionEvent => ({ type: 'SessionInputReceived', data: { eventId, createdAt: earlier, messages: [{ type: 'text', content: 'hi' }], ...(externalId ? { externalId } : {}), step: 'main' } });
const started = (turnId = 'turn_1', step = 'main'): SessionEvent => ({ type: 'SessionTurnStarted', data: { turnId, step, holder: 'h1', agentRevision: 1, createdAt: earlier } });
const ended = (nextStep = 'main', outcome: 'answered' | 'client_tool' = 'answered'): SessionEvent => ({ type: 'SessionTurnEnded', data: { turnId: 'turn_1', outcome, usage: { input_tokens: 1, output_tokens: 1 }, nextStep, createdAt: earlier } });
const call = (n: number): PendingClientCall => ({ event_id: `aev_call${n}`, tool_call_id: `tc_${n}`, tool_configuration_name: `ask${n}`, tool_name: 'client', arguments: { q: n } });
const pending = (...calls: PendingClientCall[]): SessionEvent => ({ type: 'SessionClientToolPending', data: { eventId: 'aev_pending', turnId: 'turn_1', createdAt: earlier, pendingCalls: calls } });
/** A turn that left two client tool calls waiting, on step `review`. */
const waitingForTools: SessionEvent[] = [created, input('aev_in'), started('turn_1', 'review'), pending(call(1), call(2)), ended('review', 'client_tool')];
const message = { messages: [{ type: 'text' as const, content: 'hello' }], steps, firstStep: 'main', now };
const received = (eventId: string, step: string, extra: Record<string, unknown> = {}): SessionEvent => ({ type: 'SessionInputReceived', data: { eventId, createdAt: at, messages: [{ type: 'text', content: 'hello' }], ...extra, step } as never });

describe('session input decisions', () => {
  it('a message on an idle session starts a turn on the step the session stands on, else the first step', () => {
    const fresh = givenEvents(sessionFold, [created]);
    expect(decideInputMessage(fresh.state, { ...ref, ...ids(), ...message })).toEqual({ kind: 'start', step: 'main', events: [received('aev_1', 'main')] });
    const stood = givenEvents(sessionFold, [created, input('aev_a'), started(), ended('review')]);
    expect(decideInputMessage(stood.state, { ...ref, ...ids(), ...message })).toEqual({ kind: 'start', step: 'review', events: [received('aev_1', 'review')] });
    // A step the agent no longer has: the first step.
    const gone = givenEvents(sessionFold, [created, input('aev_a'), started(), ended('removed')]);
    expect(decideInputMessage(gone.state, { ...ref, ...ids(), ...message })).toMatchObject({ kind: 'start', step: 'main' });
  });

  it('entry_step, external_id and behavior are kept on the input; an entry_step the agent lacks is a 400', () => {
    givenEvents(sessionFold, [created])
      .when((s) => (decideInputMessage(s, { ...ref, ...ids(), ...message, entryStep: 'review', externalId: 'x1', behavior: 'follow_up' }) as { events: SessionEvent[] }).events)
      .then([received('aev_1', 'review', { externalId: 'x1', behavior: 'follow_up' })]);
    givenEvents(sessionFold, [created])
      .when((s) => (decideInputMessage(s, { ...ref, ...ids(), ...message, entryStep: 'nope' }), []))
      .thenFails({ kind: 'invalid', code: 'session.invalid_entry_step', details: { fieldErrors: { entry_step: 'not a step of the agent' } } });
  });

  it('while a turn runs: a plain message is a 409, a steer joins the turn on its step, a follow-up stores nothing and waits', () => {
    const running = [created, input('aev_a'), started('turn_1', 'review')];
    givenEvents(sessionFold, running)
      .when((s) => (decideInputMessage(s, { ...ref, ...ids(), ...message }), []))
      .thenFails({
        kind: 'conflict',
        code: 'session.turn_running',
        message: 'A turn is already running in this session: send the input with behavior "steer" (joins the running turn) or "follow_up" (runs after it)',
      });
    const { state } = givenEvents(sessionFold, running);
    expect(decideInputMessage(state, { ...ref, ...ids(), ...message, behavior: 'steer' })).toEqual({ kind: 'steer', events: [received('aev_1', 'review', { behavior: 'steer' })] });
    const drawn = ids();
    expect(decideInputMessage(state, { ...ref, ...drawn, ...message, behavior: 'follow_up' })).toEqual({ kind: 'follow_up' });
    expect(drawn.drawn()).toBe(0);
  });

  it('an external_id already held shows the input stored under it, or nothing when that event was deleted', () => {
    const { state } = givenEvents(sessionFold, [created, input('aev_a', 'x1'), started(), ended()]);
    expect(heldInput(state, ref, 'x1')).toEqual({ held: expect.objectContaining({ type: 'SessionInputReceived', data: expect.objectContaining({ eventId: 'aev_a' }) }) });
    expect(heldInput(state, ref, 'x2')).toBeUndefined();
    expect(heldInput(state, ref, undefined)).toBeUndefined();
    const gone = givenEvents(sessionFold, [created, input('aev_a', 'x1'), { type: 'SessionEventDeleted', data: { eventId: 'aev_a', createdAt: earlier } }]);
    expect(heldInput(gone.state, ref, 'x1')).toEqual({});
  });

  it('a deleted or missing session is a 404 for every input', () => {
    const missing = { kind: 'not_found', code: 'session.not_found', message: 'Session "s1" of agent "ag" does not exist' };
    for (const history of [[], [created, deleted]]) {
      givenEvents(sessionFold, history).when((s) => (decideInputMessage(s, { ...ref, ...ids(), ...message }), [])).thenFails(missing);
      givenEvents(sessionFold, history).when((s) => decideInterrupt(s, { ...ref, ...ids(), now })).thenFails(missing);
      givenEvents(sessionFold, history).when((s) => decideToolOutputs(s, { ...ref, ...ids(), now, firstStep: 'main', outputs: [] }).events).thenFails(missing);
      givenEvents(sessionFold, history).when((s) => (decideCompactionRequest(s, { ...ref, firstStep: 'main' }), [])).thenFails(missing);
      givenEvents(sessionFold, history).when((s) => (heldInput(s, ref, 'x1'), [])).thenFails(missing);
    }
  });
});

describe('session interrupt decisions', () => {
  it('interrupts the running turn by request', () => {
    givenEvents(sessionFold, [created, input('aev_a'), started('turn_7')])
      .when((s) => decideInterrupt(s, { ...ref, ...ids(), now }))
      .then([{ type: 'SessionInterrupted', data: { eventId: 'aev_1', turnId: 'turn_7', reason: 'request', createdAt: at } }]);
  });

  it('refuses when no turn runs (never started, or ended)', () => {
    const refusal = { kind: 'conflict', code: 'session.not_running', message: 'No turn is running in this session: there is nothing to interrupt' };
    givenEvents(sessionFold, [created]).when((s) => decideInterrupt(s, { ...ref, ...ids(), now })).thenFails(refusal);
    givenEvents(sessionFold, [created, input('aev_a'), started(), ended()]).when((s) => decideInterrupt(s, { ...ref, ...ids(), now })).thenFails(refusal);
  });
});

describe('session compaction request decisions', () => {
  it('runs on the step the session stands on (the first step before any turn); refused while a turn runs', () => {
    expect(decideCompactionRequest(givenEvents(sessionFold, [created]).state, { ...ref, firstStep: 'main' })).toEqual({ step: 'main' });
    expect(decideCompactionRequest(givenEvents(sessionFold, waitingForTools).state, { ...ref, firstStep: 'main' })).toEqual({ step: 'review' });
    givenEvents(sessionFold, [created, input('aev_a'), started()])
      .when((s) => (decideCompactionRequest(s, { ...ref, firstStep: 'main' }), []))
      .thenFails({ kind: 'conflict', code: 'session.turn_running', message: 'A turn is running in this session; ask for the compaction when it has ended' });
  });
});

describe('client tool output decisions', () => {
  const returned = (eventId: string, n: number, toolOutput: Record<string, unknown>, error = false): SessionEvent => ({
    type: 'SessionToolReturned',
    data: { eventId, createdAt: at, toolCallId: `tc_${n}`, toolConfigurationName: `ask${n}`, toolName: 'client', toolOutput, error, step: 'review' },
  });
  const base = { ...ref, now, firstStep: 'main' };

  it('records each output against its pending call; the turn resumes once none is pending', () => {
    const { state } = givenEvents(sessionFold, waitingForTools);
    expect(decideToolOutputs(state, { ...base, ...ids(), outputs: [{ type: 'success', event_id: 'aev_call2', output: { a: 2 } }] })).toEqual({ events: [returned('aev_1', 2, { a: 2 })], resume: false, step: 'review', run: [] });
    expect(
      decideToolOutputs(state, {
        ...base,
        ...ids(),
        outputs: [
          { type: 'error', event_id: 'aev_call1', error: 'denied' },
          { type: 'success', event_id: 'aev_call2', output: { a: 2 } },
        ],
      }),
    ).toEqual({ events: [returned('aev_1', 1, { error: 'denied' }, true), returned('aev_2', 2, { a: 2 })], resume: true, step: 'review', run: [] });
  });

  it('an output already recorded leaves its call answered: the rest resumes the turn', () => {
    const { state } = givenEvents(sessionFold, [...waitingForTools, returned('aev_r', 1, { a: 1 })]);
    expect(decideToolOutputs(state, { ...base, ...ids(), outputs: [{ type: 'success', event_id: 'aev_call2', output: {} }] })).toMatchObject({ resume: true });
    // The answered call is no longer one the session waits for.
    givenEvents(sessionFold, [...waitingForTools, returned('aev_r', 1, { a: 1 })])
      .when((s) => decideToolOutputs(s, { ...base, ...ids(), outputs: [{ type: 'success', event_id: 'aev_call1', output: {} }] }).events)
      .thenFails({ kind: 'invalid', code: 'session.no_pending_call' });
  });

  it('an event_id the session does not wait for is a 400 naming its index', () => {
    givenEvents(sessionFold, waitingForTools)
      .when((s) => decideToolOutputs(s, { ...base, ...ids(), outputs: [{ type: 'success', event_id: 'aev_call1', output: {} }, { type: 'success', event_id: 'aev_other', output: {} }] }).events)
      .thenFails({
        kind: 'invalid',
        code: 'session.no_pending_call',
        message: 'tool_outputs[1].event_id "aev_other" is not a client tool call this session waits for',
        details: { fieldErrors: { 'tool_outputs[1].event_id': 'not an outstanding client tool call' } },
      });
    // No turn ever waited: nothing is pending.
    givenEvents(sessionFold, [created])
      .when((s) => decideToolOutputs(s, { ...base, ...ids(), outputs: [{ type: 'success', event_id: 'aev_call1', output: {} }] }).events)
      .thenFails({ code: 'session.no_pending_call' });
  });

  it('a success output that does not match its registered output_schema is a 400; an error output is never checked', () => {
    const schemaProblems = new Map([[0, { toolId: 'tol_1', problems: ['/a must be number', '/b is required'] }]]);
    givenEvents(sessionFold, waitingForTools)
      .when((s) => decideToolOutputs(s, { ...base, ...ids(), schemaProblems, outputs: [{ type: 'success', event_id: 'aev_call1', output: { a: 'x' } }] }).events)
      .thenFails({
        kind: 'invalid',
        code: 'session.invalid_tool_output',
        message: 'tool_outputs[0].output does not match the output_schema of tol_1: /a must be number; /b is required',
        details: { fieldErrors: { 'tool_outputs[0].output': '/a must be number; /b is required' } },
      });
    givenEvents(sessionFold, waitingForTools)
      .when((s) => decideToolOutputs(s, { ...base, ...ids(), schemaProblems, outputs: [{ type: 'error', event_id: 'aev_call1', error: 'x' }] }).events)
      .then([returned('aev_1', 1, { error: 'x' }, true)]);
  });

  it('refused while a turn runs', () => {
    givenEvents(sessionFold, [...waitingForTools, input('aev_b'), started('turn_2')])
      .when((s) => decideToolOutputs(s, { ...base, ...ids(), outputs: [{ type: 'success', event_id: 'aev_call1', output: {} }] }).events)
      .thenFails({ kind: 'conflict', code: 'session.turn_running', message: 'A turn is running in this session; send tool outputs when it waits for them' });
  });
});
