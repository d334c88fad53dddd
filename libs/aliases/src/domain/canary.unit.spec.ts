import { givenEvents } from '@lib/testing';
import { AliasEvent, aliasFold, AliasSettings } from './alias';
import { canaryFigures } from './canary';
import { decideCanaryScore, decideStartCanary, decideStopCanary, swapAgent, TurnScores } from './canary-decisions';

const now = new Date('2026-12-02T10:00:00.000Z');
const at = now.toISOString();
const settings: AliasSettings = { name: 'support', enabled: true, policy: { type: 'routed', rules: [{ match: "get('$.session.metadata.vip', false)", targets: { type: 'single', agent_key: 'vip' } }, { targets: { type: 'weighted', partition_by: '$.session.key', options: [{ agent_key: 'old', weight: 3 }, { agent_key: 'vip', weight: 1 }] } }] } };
const created: AliasEvent = { type: 'AliasCreated', data: { key: 'support', settings, createdAt: at } };
const canary = { candidateAgentKey: 'new', controlAgentKey: 'old', weight: 0.5, scorers: [{ type: 'llm_judge', llm_name: 'j', rubric: 'r' }, { type: 'same_tool_calls' }], promoteAfterSessions: 3, maxScoreDrop: 0.05 };
const started: AliasEvent = { type: 'AliasCanaryStarted', data: { key: 'support', canaryId: 'cny_1', settings: canary, startedAt: at, startedBy: 'key_1' } };
const scores = (arm: 'candidate' | 'control', sessionKey: string, turnId: string, score: number | null): TurnScores => ({ canaryId: 'cny_1', arm, sessionKey, turnId, results: [{ type: 'llm_judge', score }, { type: 'same_tool_calls', score: null, reason: 'no baseline' }] });
const scored = (s: TurnScores): AliasEvent => ({ type: 'AliasCanaryTurnScored', data: { key: 'support', ...s, scoredAt: at } });

describe('a canary', () => {
  it('starts on an alias, replacing one that runs', () => {
    givenEvents(aliasFold, [created]).when((s) => decideStartCanary(s, 'support', 'cny_1', canary, 'key_1', now)).then([started]);
    givenEvents(aliasFold, [created, started])
      .when((s) => decideStartCanary(s, 'support', 'cny_2', canary, 'key_1', now))
      .then([{ type: 'AliasCanaryEnded', data: { key: 'support', canaryId: 'cny_1', reason: 'replaced', endedAt: at } }, { type: 'AliasCanaryStarted', data: { key: 'support', canaryId: 'cny_2', settings: canary, startedAt: at, startedBy: 'key_1' } }]);
    givenEvents(aliasFold, []).when((s) => decideStartCanary(s, 'support', 'cny_1', canary, 'key_1', now)).thenFails({ code: 'alias.not_found' });
  });

  it('stops only when one runs', () => {
    givenEvents(aliasFold, [created, started]).when((s) => decideStopCanary(s, 'support', now)).then([{ type: 'AliasCanaryEnded', data: { key: 'support', canaryId: 'cny_1', reason: 'stopped', endedAt: at } }]);
    givenEvents(aliasFold, [created]).when((s) => decideStopCanary(s, 'support', now)).thenFails({ kind: 'not_found', code: 'alias.canary_not_found' });
  });

  it('records a turn once, and nothing for a canary that no longer runs', () => {
    const first = scores('candidate', 's1', 't1', 0.9);
    givenEvents(aliasFold, [created, started]).when((s) => decideCanaryScore(s, 'support', first, now)).then([scored(first)]);
    givenEvents(aliasFold, [created, started, scored(first)]).when((s) => decideCanaryScore(s, 'support', first, now)).then([]);
    givenEvents(aliasFold, [created, started, { type: 'AliasCanaryEnded', data: { key: 'support', canaryId: 'cny_1', reason: 'stopped', endedAt: at } }]).when((s) => decideCanaryScore(s, 'support', first, now)).then([]);
  });

  it('tallies per arm: a session is the mean of its turns, a turn the mean of its non-null scores; errors are counted', () => {
    const events = [created, started, scored(scores('candidate', 's1', 't1', 0.8)), scored(scores('candidate', 's1', 't2', 0.4)), scored(scores('candidate', 's2', 't3', 1)), scored({ ...scores('control', 's3', 't4', null), results: [{ type: 'llm_judge', score: null, error: 'bad judge' }, { type: 'same_tool_calls', score: null }] })];
    const state = events.reduce(aliasFold.evolve, aliasFold.initialState);
    if (state.status !== 'active' || !state.canary) throw new Error('no canary');
    const figures = canaryFigures(state.canary);
    expect(figures.candidate).toEqual({ sessions: 2, turns_scored: 3, scorer_errors: 0, mean: 0.8, stddev: 0.282843, scorers: [{ type: 'llm_judge', mean: 0.733333, scored: 3 }, { type: 'same_tool_calls', mean: null, scored: 0 }] });
    expect(figures.control).toMatchObject({ sessions: 0, turns_scored: 1, scorer_errors: 1, mean: null });
    expect(figures.difference).toBeNull();
  });

  it('promotes at the promotion point when the candidate is not worse by more than the drop: the policy names the candidate', () => {
    const history = [created, started, scored(scores('control', 'c1', 'tc1', 0.8)), scored(scores('candidate', 's1', 't1', 0.78)), scored(scores('candidate', 's2', 't2', 0.8))];
    const last = scores('candidate', 's3', 't3', 0.76);
    const out = decideCanaryScore(history.reduce(aliasFold.evolve, aliasFold.initialState), 'support', last, now);
    expect(out.map((e) => e.type)).toEqual(['AliasCanaryTurnScored', 'AliasCanaryDecided', 'AliasUpdated']);
    expect(out[1].data).toMatchObject({ decision: 'promoted', figures: { candidate: { sessions: 3, mean: 0.78 }, control: { sessions: 1, mean: 0.8 }, difference: -0.02 } });
    expect((out[2].data as { settings: AliasSettings }).settings.policy).toEqual(swapAgent(settings.policy, 'old', 'new'));
    expect(JSON.stringify((out[2].data as { settings: AliasSettings }).settings.policy)).toContain('"agent_key":"new","weight":3');
  });

  it('rolls back at the promotion point when the candidate is worse by more than the drop', () => {
    const history = [created, started, scored(scores('control', 'c1', 'tc1', 0.8)), scored(scores('candidate', 's1', 't1', 0.7)), scored(scores('candidate', 's2', 't2', 0.7))];
    const out = decideCanaryScore(history.reduce(aliasFold.evolve, aliasFold.initialState), 'support', scores('candidate', 's3', 't3', 0.7), now);
    expect(out.map((e) => e.type)).toEqual(['AliasCanaryTurnScored', 'AliasCanaryDecided']);
    expect(out[1].data).toMatchObject({ decision: 'rolled_back', figures: { difference: -0.1, interval95: null } });
  });

  it('rolls back before the promotion point once the 95% interval of the difference lies below −drop', () => {
    const history = [created, started, scored(scores('control', 'c1', 'tc1', 0.9)), scored(scores('control', 'c2', 'tc2', 0.8)), scored(scores('candidate', 's1', 't1', 0.3))];
    const out = decideCanaryScore(history.reduce(aliasFold.evolve, aliasFold.initialState), 'support', scores('candidate', 's2', 't2', 0.2), now);
    expect(out[1]).toMatchObject({ type: 'AliasCanaryDecided', data: { decision: 'rolled_back', figures: { difference: -0.6, candidate: { sessions: 2 } } } });
    const [low, high] = (out[1].data as unknown as { figures: { interval95: [number, number] } }).figures.interval95;
    expect(high).toBeLessThan(-0.05);
    expect(low).toBeLessThan(high);
    // Noisy evidence waits: the same mean difference with a wide spread decides nothing yet.
    const noisy = [created, started, scored(scores('control', 'c1', 'tc1', 1)), scored(scores('control', 'c2', 'tc2', 0.1)), scored(scores('candidate', 's1', 't1', 0))];
    expect(decideCanaryScore(noisy.reduce(aliasFold.evolve, aliasFold.initialState), 'support', scores('candidate', 's2', 't2', 0.5), now).map((e) => e.type)).toEqual(['AliasCanaryTurnScored']);
  });

  it('an ended canary keeps its figures and state', () => {
    const decided = decideCanaryScore([created, started, scored(scores('control', 'c1', 'tc1', 0.8)), scored(scores('candidate', 's1', 't1', 0.8)), scored(scores('candidate', 's2', 't2', 0.8))].reduce(aliasFold.evolve, aliasFold.initialState), 'support', scores('candidate', 's3', 't3', 0.8), now);
    const state = [created, started, scored(scores('control', 'c1', 'tc1', 0.8)), scored(scores('candidate', 's1', 't1', 0.8)), scored(scores('candidate', 's2', 't2', 0.8)), ...decided].reduce(aliasFold.evolve, aliasFold.initialState);
    expect(state).toMatchObject({ status: 'active', canary: { status: 'promoted', decision: { decision: 'promoted' } } });
  });
});
