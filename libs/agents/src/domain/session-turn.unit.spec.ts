import { givenEvents } from '@lib/testing';
import { apiEventView, SessionApiEvent, SessionEvent } from './session-events';
import { ActiveSession, sessionFold, SessionState } from './session';
import { decideCloseCrashedTurn, decideEndTurn, decideStartTurn, decideStopInterrupt, EndTurnCommand } from './session-turn';

const now = new Date('2026-12-02T10:00:00.000Z');
const at = now.toISOString();
const earlier = '2026-12-02T09:00:00.000Z';
const steps = { main: {}, review: { reentry_step: 'main' } };
function ids() {
  let n = 0;
  return { newEventId: () => `aev_${++n}`, drawn: () => n };
}
const created: SessionEvent = { type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'ag', sessionKey: 's1', name: 's1', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: earlier } };
const input: SessionEvent = { type: 'SessionInputReceived', data: { eventId: 'aev_in', createdAt: earlier, messages: [{ type: 'text', content: 'hi' }], step: 'main' } };
const started = (turnId = 'turn_1', step = 'main'): SessionEvent => ({ type: 'SessionTurnStarted', data: { turnId, step, holder: 'h1', agentRevision: 1, createdAt: earlier } });
const transitioned: SessionEvent = { type: 'SessionStepTransitioned', data: { eventId: 'aev_t', turnId: 'turn_1', createdAt: earlier, fromStep: 'main', toStep: 'review', content: 'x' } };
const endedEarlier: SessionEvent = { type: 'SessionTurnEnded', data: { turnId: 'turn_1', outcome: 'answered', usage: { input_tokens: 1, output_tokens: 1 }, nextStep: 'main', createdAt: earlier } };
/** The turn deciders act on the active session a turn holds. */
const active = (s: SessionState): ActiveSession => {
  if (s.status !== 'active') throw new Error('no active session in the given events');
  return s;
};
const running = [created, input, started()];
const usage = { input_tokens: 12, output_tokens: 3 };

describe('turn start decisions', () => {
  it('starts a turn on an idle session, under its holder and the agent revision it runs', () => {
    givenEvents(sessionFold, [created, input])
      .when((s) => decideStartTurn(active(s), { turnId: 'turn_9', step: 'review', holder: 'proc-1', agentRevision: 4, now }))
      .then([{ type: 'SessionTurnStarted', data: { turnId: 'turn_9', step: 'review', holder: 'proc-1', agentRevision: 4, createdAt: at } }]);
    // After an ended turn, the next one starts.
    givenEvents(sessionFold, [...running, endedEarlier]).when((s) => decideStartTurn(active(s), { turnId: 'turn_2', step: 'main', holder: 'h', agentRevision: 1, now })).then([{ type: 'SessionTurnStarted', data: { turnId: 'turn_2', step: 'main', holder: 'h', agentRevision: 1, createdAt: at } }]);
  });

  it('refuses while a turn runs', () => {
    givenEvents(sessionFold, running)
      .when((s) => decideStartTurn(active(s), { turnId: 'turn_2', step: 'main', holder: 'h', agentRevision: 1, now }))
      .thenFails({ kind: 'conflict', code: 'session.turn_running', message: 'A turn is already running in this session: send the input with behavior "steer" or "follow_up"' });
  });
});

describe('turn end decisions', () => {
  const end = (command: Partial<EndTurnCommand>) => (s: SessionState) => decideEndTurn(active(s), { turnId: 'turn_1', outcome: 'answered', usage, step: 'main', steps, now, ...command });
  const ended = (outcome: string, nextStep: string, error?: string): SessionEvent => ({ type: 'SessionTurnEnded', data: { turnId: 'turn_1', outcome, usage, ...(error ? { error } : {}), nextStep, createdAt: at } as never });

  it('an answered turn stores its final answer with its end, and re-enters where the step says', () => {
    const final = { type: 'SessionAgentOutput' as const, data: { eventId: 'aev_out', turnId: 'turn_1', createdAt: at, content: 'done', step: 'review', inputsSeen: 1 } };
    givenEvents(sessionFold, [...running, transitioned]).when(end({ step: 'review', final })).then([final, ended('answered', 'main')]);
    // A step without reentry_step (or one the agent lost) is re-entered itself.
    givenEvents(sessionFold, running).when(end({})).then([ended('answered', 'main')]);
    givenEvents(sessionFold, running).when(end({ step: 'gone' })).then([ended('answered', 'gone')]);
  });

  it('every outcome: a turn waiting for client tools resumes on its step; the others re-enter; a failure keeps its message', () => {
    givenEvents(sessionFold, [...running, transitioned]).when(end({ step: 'review', outcome: 'client_tool' })).then([ended('client_tool', 'review')]);
    givenEvents(sessionFold, [...running, transitioned]).when(end({ step: 'review', outcome: 'interrupted' })).then([ended('interrupted', 'main')]);
    givenEvents(sessionFold, [...running, transitioned]).when(end({ step: 'review', outcome: 'limit' })).then([ended('limit', 'main')]);
    givenEvents(sessionFold, [...running, transitioned]).when(end({ step: 'review', outcome: 'failed', error: 'The model failed' })).then([ended('failed', 'main', 'The model failed')]);
  });

  it('a compaction turn ends on the step it ran on', () => {
    givenEvents(sessionFold, [created, input, started('turn_1', 'review')]).when(end({ step: 'review', compaction: true })).then([ended('answered', 'review')]);
    givenEvents(sessionFold, [created, input, started('turn_1', 'review')]).when(end({ step: 'review', compaction: true, outcome: 'failed', error: 'The compaction failed unexpectedly' })).then([ended('failed', 'review', 'The compaction failed unexpectedly')]);
  });

  it('is recorded even when a sweep closed the turn meanwhile (what the turn did is kept)', () => {
    givenEvents(sessionFold, [...running, endedEarlier]).when(end({})).then([ended('answered', 'main')]);
  });
});

describe('stopped turn interrupt decisions', () => {
  const stop = (command: { outcome?: 'interrupted' | 'answered' | 'failed'; interruptRecorded?: boolean; cancelled?: boolean }, drawn = ids()) => (s: SessionState) =>
    decideStopInterrupt(active(s), { turnId: 'turn_1', outcome: 'interrupted', interruptRecorded: false, cancelled: false, ...drawn, now, ...command });

  it('a turn stopped without a stored interrupt records one: cancelled when its in-process caller cancelled it, else request', () => {
    givenEvents(sessionFold, running).when(stop({})).then([{ type: 'SessionInterrupted', data: { eventId: 'aev_1', turnId: 'turn_1', createdAt: at, reason: 'request' } }]);
    givenEvents(sessionFold, running).when(stop({ cancelled: true })).then([{ type: 'SessionInterrupted', data: { eventId: 'aev_1', turnId: 'turn_1', createdAt: at, reason: 'cancelled' } }]);
  });

  it('an interrupt stored by an older build for a streaming caller that went away still reads (reason disconnect)', () => {
    const old = JSON.parse('{"type":"SessionInterrupted","data":{"eventId":"aev_9","turnId":"turn_1","createdAt":"2026-11-01T00:00:00.000Z","reason":"disconnect"}}') as SessionEvent;
    const after = [...running, old].reduce<SessionState>((s, e) => sessionFold.evolve(s, e), sessionFold.initialState);
    expect(after.status === 'active' && after.interruptRequested).toBe(true);
    expect(apiEventView(old as SessionApiEvent, 's')).toMatchObject({ type: 'session_interrupted', id: 'aev_9', reason: 'disconnect' });
  });

  it('nothing when the interrupt was stored by its request, or the turn was not interrupted (no event id drawn)', () => {
    const drawn = ids();
    givenEvents(sessionFold, running).when(stop({ interruptRecorded: true }, drawn)).then([]);
    givenEvents(sessionFold, running).when(stop({ outcome: 'answered' }, drawn)).then([]);
    givenEvents(sessionFold, running).when(stop({ outcome: 'failed', cancelled: true }, drawn)).then([]);
    expect(drawn.drawn()).toBe(0);
  });
});

describe('crashed turn close decisions', () => {
  it('closes the running turn as interrupted by crash, resuming on the step it stood on', () => {
    givenEvents(sessionFold, [...running, transitioned])
      .when((s) => decideCloseCrashedTurn(active(s), { ...ids(), now }))
      .then([
        { type: 'SessionInterrupted', data: { eventId: 'aev_1', turnId: 'turn_1', reason: 'crash', createdAt: at } },
        { type: 'SessionTurnEnded', data: { turnId: 'turn_1', outcome: 'interrupted', usage: { input_tokens: 0, output_tokens: 0 }, error: 'the process running the turn stopped', nextStep: 'review', createdAt: at } },
      ]);
  });

  it('leaves the session idle and taking input on that step', () => {
    const { state } = givenEvents(sessionFold, [...running, transitioned]);
    const after = decideCloseCrashedTurn(active(state), { ...ids(), now }).reduce(sessionFold.evolve, state);
    expect(active(after)).toMatchObject({ turn: undefined, currentStep: 'review', interruptRequested: false });
  });

  it('nothing when no turn runs', () => {
    const drawn = ids();
    givenEvents(sessionFold, [created]).when((s) => decideCloseCrashedTurn(active(s), { ...drawn, now })).then([]);
    givenEvents(sessionFold, [...running, endedEarlier]).when((s) => decideCloseCrashedTurn(active(s), { ...drawn, now })).then([]);
    expect(drawn.drawn()).toBe(0);
  });
});
