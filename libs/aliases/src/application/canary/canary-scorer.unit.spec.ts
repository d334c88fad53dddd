import type { RecordedEvent } from '@lib/platform';
import { AliasEvent, aliasFold, AliasState } from '../../domain/alias';
import { CanaryScorer } from './canary-scorer';

const at = '2026-12-02T10:00:00.000Z';
const settings = { candidateAgentKey: 'new', controlAgentKey: 'old', weight: 0.5, scorers: [{ type: 'same_tool_calls' }], promoteAfterSessions: 10, maxScoreDrop: 0.05 };
const aliasEvents: AliasEvent[] = [
  { type: 'AliasCreated', data: { key: 'front', settings: { name: 'front', enabled: true, policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'old' } }] } }, createdAt: at } },
  { type: 'AliasCanaryStarted', data: { key: 'front', canaryId: 'cny_1', settings, startedAt: at, startedBy: 'k' } },
];
const recorded = (streamId: string, type: string, data: unknown, position = 1): RecordedEvent => ({ id: `e${position}`, streamId, type, data, revision: 0, position, recordedAt: at, metadata: { actor: { type: 'system', id: 't' }, correlationId: 'c', schemaVersion: 1 } }) as RecordedEvent;

function scorer(opts: { aliasKey?: string; canary?: { id: string; arm: string }; history?: AliasEvent[] } = {}) {
  let history = [...(opts.history ?? aliasEvents)];
  const streams: Record<string, RecordedEvent[]> = {
    'session-agt_1.s1': [recorded('session-agt_1.s1', 'SessionCreated', { agentKey: 'new', sessionKey: 's1', ...(opts.aliasKey ? { aliasKey: opts.aliasKey } : {}) })],
    'alias_session-front.s1': [recorded('alias_session-front.s1', 'AliasSessionRouted', { aliasKey: 'front', sessionKey: 's1', agentKey: 'new', agentId: 'agt_1', rule: 0, routedAt: at, ...(opts.canary ? { canary: opts.canary } : {}) })],
  };
  const scored: unknown[] = [];
  const events = { readStream: async (id: string) => streams[id] ?? [] };
  const fold = () => history.reduce(aliasFold.evolve, aliasFold.initialState);
  const writer = {
    state: async () => fold(),
    write: async (_id: string, _f: unknown, decide: (s: AliasState) => AliasEvent[]) => {
      const out = decide(fold());
      history = [...history, ...out];
      return { events: out, position: 9, visible: true };
    },
  };
  const scoring = { score: async (turn: unknown) => (scored.push(turn), [{ type: 'same_tool_calls', score: null, reason: 'no baseline' }]) };
  const clock = { now: () => new Date(at) };
  const runner = new CanaryScorer(events as never, {} as never, scoring as never, clock as never, writer as never);
  return { runner, scored, history: () => history };
}

const ended = (outcome: string, turnId = 't1') => recorded('session-agt_1.s1', 'SessionTurnEnded', { turnId, outcome, usage: {}, createdAt: at }, 5);

describe('the canary scorer', () => {
  it('scores an answered turn of a session in an arm, and records it in the alias stream', async () => {
    const { runner, scored, history } = scorer({ aliasKey: 'front', canary: { id: 'cny_1', arm: 'candidate' } });
    await runner.score(ended('answered'));
    expect(scored).toEqual([{ sessionStream: 'session-agt_1.s1', turnId: 't1' }]);
    expect(history().at(-1)).toEqual({ type: 'AliasCanaryTurnScored', data: { key: 'front', canaryId: 'cny_1', arm: 'candidate', sessionKey: 's1', turnId: 't1', results: [{ type: 'same_tool_calls', score: null, reason: 'no baseline' }], scoredAt: at } });
  });

  it('scores a turn met again (a replay after a restart) neither twice nor judges it again', async () => {
    const { runner, scored, history } = scorer({ aliasKey: 'front', canary: { id: 'cny_1', arm: 'control' } });
    await runner.score(ended('answered'));
    await runner.score(ended('answered'));
    expect(scored).toHaveLength(1);
    expect(history().filter((e) => e.type === 'AliasCanaryTurnScored')).toHaveLength(1);
  });

  it.each([
    ['a turn that did not answer', { aliasKey: 'front', canary: { id: 'cny_1', arm: 'candidate' } }, 'failed'],
    ['a session not created through an alias', { canary: { id: 'cny_1', arm: 'candidate' } }, 'answered'],
    ['a session in no arm', { aliasKey: 'front' }, 'answered'],
    ['a session of an earlier canary', { aliasKey: 'front', canary: { id: 'cny_0', arm: 'candidate' } }, 'answered'],
  ])('leaves out %s', async (_what, opts, outcome) => {
    const { runner, scored, history } = scorer(opts);
    await runner.score(ended(outcome));
    expect(scored).toEqual([]);
    expect(history()).toHaveLength(2);
  });

  it('leaves out the turns of a canary that was stopped', async () => {
    const { runner, scored } = scorer({ aliasKey: 'front', canary: { id: 'cny_1', arm: 'candidate' }, history: [...aliasEvents, { type: 'AliasCanaryEnded', data: { key: 'front', canaryId: 'cny_1', reason: 'stopped', endedAt: at } }] });
    await runner.score(ended('answered'));
    expect(scored).toEqual([]);
  });
});
