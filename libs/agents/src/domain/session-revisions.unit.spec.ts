import { ActiveSession, sessionFold } from './session';
import { agentRevisionOf, nextTurnRevision, TurnRevisionReader } from './session-revisions';
import type { SessionEvent } from './session-events';

const at = '2026-12-02T09:00:00.000Z';
const created: SessionEvent = { type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'ag', sessionKey: 's1', name: 's1', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: at } };
const input = (eventId: string): SessionEvent => ({ type: 'SessionInputReceived', data: { eventId, createdAt: at, messages: [{ type: 'text', content: 'hi' }], step: 'main' } });
const start = (turnId: string, agentRevision: number): SessionEvent => ({ type: 'SessionTurnStarted', data: { turnId, step: 'main', holder: 'h', agentRevision, createdAt: at } });
const output = (eventId: string, turnId: string): SessionEvent => ({ type: 'SessionAgentOutput', data: { eventId, turnId, createdAt: at, content: 'ok', step: 'main' } });
const end = (turnId: string): SessionEvent => ({ type: 'SessionTurnEnded', data: { turnId, outcome: 'answered', usage: { input_tokens: 0, output_tokens: 0 }, createdAt: at } });
const upload: SessionEvent = { type: 'SessionArtifactUploaded', data: { eventId: 'aev_up', createdAt: at, artifacts: [] } };
const steer = (eventId: string): SessionEvent => ({ type: 'SessionInputReceived', data: { eventId, createdAt: at, messages: [{ type: 'text', content: 'also' }], behavior: 'steer', step: 'main' } });
const denied = (eventId: string, turnId: string): SessionEvent => ({ type: 'SessionToolReturned', data: { eventId, turnId, createdAt: at, toolCallId: 'c1', toolConfigurationName: 'pay', toolName: 'web_get', toolOutput: { error: 'denied' }, error: true, step: 'main' } });

/** Two turns on two agent revisions, a steer in the second, an upload between, a late decision on the first turn's call. */
const log: SessionEvent[] = [created, input('aev_1'), start('turn_1', 0), output('aev_2', 'turn_1'), end('turn_1'), upload, input('aev_3'), start('turn_2', 2), steer('aev_4'), output('aev_5', 'turn_2'), end('turn_2'), denied('aev_6', 'turn_1')];
const expected: [string, number | undefined][] = [['aev_1', 0], ['aev_2', 0], ['aev_up', undefined], ['aev_3', 2], ['aev_4', 2], ['aev_5', 2], ['aev_6', 0]];

const eventOf = (s: ActiveSession, id: string) => s.events.find((e) => e.data.eventId === id)!;

describe('the agent revision of each session event', () => {
  it('is the revision of the turn the event belongs to: by turn id, the running turn, or the turn an input starts', () => {
    const state = log.reduce(sessionFold.evolve, sessionFold.initialState) as ActiveSession;
    expect(expected.map(([id]) => [id, agentRevisionOf(state, eventOf(state, id))])).toEqual(expected);
  });

  it('a fork keeps the revisions of the history it inherits, and its own turns name theirs', () => {
    const parent = log.slice(0, 5).reduce(sessionFold.evolve, sessionFold.initialState);
    const fork: SessionEvent = { type: 'SessionCreated', data: { ...(created.data as Extract<SessionEvent, { type: 'SessionCreated' }>['data']), sessionKey: 'f1', forkedFrom: { streamId: 'session-agt_1.s1', agentKey: 'ag', sessionKey: 's1', upToPosition: 5 } } };
    const state = [fork, input('aev_f'), start('turn_f', 3)].reduce(sessionFold.evolve, parent) as ActiveSession;
    expect(['aev_1', 'aev_2', 'aev_f'].map((id) => agentRevisionOf(state, eventOf(state, id)))).toEqual([0, 0, 3]);
  });

  it('stays what it was in an earlier state as later turns are folded (states share the map as it grows)', () => {
    let state = [created, input('aev_0'), start('turn_0', 0)].reduce(sessionFold.evolve, sessionFold.initialState) as ActiveSession;
    const early = state;
    for (let i = 1; i <= 150; i++) state = [end(`turn_${i - 1}`), input(`aev_${i}`), start(`turn_${i}`, i)].reduce(sessionFold.evolve, state) as ActiveSession;
    expect([0, 1, 64, 65, 149, 150].map((i) => agentRevisionOf(state, eventOf(state, `aev_${i}`)))).toEqual([0, 1, 64, 65, 149, 150]);
    expect(agentRevisionOf(early, eventOf(early, 'aev_0'))).toBe(0);
    expect(agentRevisionOf(early, { data: { eventId: 'aev_150' } })).toBeUndefined();
  });

  it('is the same for a reader that goes through the stream one event at a time (the session feed)', () => {
    const reader = new TurnRevisionReader();
    const seen = log.flatMap((e, i): [string, number | undefined][] => {
      const known = reader.read(e);
      if (!('eventId' in e.data) || typeof e.data.eventId !== 'string') return [];
      return [[e.data.eventId, known === 'next' ? nextTurnRevision(log.slice(i + 1)) : known]];
    });
    expect(seen).toEqual(expected);
  });
});
