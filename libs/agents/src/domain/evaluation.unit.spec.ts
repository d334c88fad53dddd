import { givenEvents } from '@lib/testing';
import { aggregate, decideCancelEvaluation, decideCompleteEvaluation, decideSessionOutcome, decideStartEvaluation, estimate, EvaluationEvent, evaluationFold, remainingSessions, sessionScore } from './evaluation';

const now = new Date('2026-12-02T10:00:00Z');
const requested: EvaluationEvent = {
  type: 'AgentEvaluationRequested',
  data: { evaluationId: 'evl_1', agentId: 'agt_1', agentKey: 'a', sessionKeys: ['s1', 's2', 's3'], candidateRevision: 2, mode: 'recorded', scorers: [{ type: 'llm_judge', llm_name: 'j', rubric: 'r' }, { type: 'same_tool_calls' }], createdAt: 't0' },
};
const started: EvaluationEvent = { type: 'AgentEvaluationStarted', data: { evaluationId: 'evl_1', holder: 'h', startedAt: 't1' } };
const scored = (sessionKey: string, baseline: (number | null)[][], candidate: (number | null)[][]): EvaluationEvent => ({ type: 'AgentEvaluationSessionScored', data: { evaluationId: 'evl_1', sessionKey, replaySessionKey: `${sessionKey}-r`, baseline, candidate, scoredAt: 't2' } });

describe('evaluation decisions', () => {
  it('starts once, scores each session once, and completes only when none is left', () => {
    givenEvents(evaluationFold, [requested]).when((s) => decideStartEvaluation(s, 'h', now)).then([{ type: 'AgentEvaluationStarted', data: { evaluationId: 'evl_1', holder: 'h', startedAt: now.toISOString() } }]);
    givenEvents(evaluationFold, [requested, started]).when((s) => decideStartEvaluation(s, 'h2', now)).then([]);
    const one = scored('s1', [[1, null]], [[0.5, 1]]);
    givenEvents(evaluationFold, [requested, started, one]).when((s) => decideSessionOutcome(s, { scores: { sessionKey: 's1', replaySessionKey: 'x', baseline: [], candidate: [] } }, now)).then([]);
    givenEvents(evaluationFold, [requested, started, one]).when((s) => decideCompleteEvaluation(s, now)).then([]);
    const failed: EvaluationEvent = { type: 'AgentEvaluationSessionFailed', data: { evaluationId: 'evl_1', sessionKey: 's3', error: 'gone', failedAt: 't3' } };
    const { state } = givenEvents(evaluationFold, [requested, started, one, failed]);
    expect(state.status !== 'absent' && remainingSessions(state)).toEqual(['s2']);
    const done = givenEvents(evaluationFold, [requested, started, one, failed, scored('s2', [[0, null]], [[1, 0]])]).state;
    expect(decideCompleteEvaluation(done, now).map((e) => e.type)).toEqual(['AgentEvaluationCompleted']);
  });

  it('takes no outcome after a cancel, and refuses to cancel twice', () => {
    const cancelled: EvaluationEvent = { type: 'AgentEvaluationCancelled', data: { evaluationId: 'evl_1', cancelledAt: 't3' } };
    givenEvents(evaluationFold, [requested, started, cancelled]).when((s) => decideSessionOutcome(s, { sessionKey: 's1', error: 'x' }, now)).then([]);
    givenEvents(evaluationFold, [requested, started, cancelled]).when((s) => decideCancelEvaluation(s, 'evl_1', now)).thenFails({ kind: 'conflict' });
    givenEvents(evaluationFold, []).when((s) => decideCancelEvaluation(s, 'evl_1', now)).thenFails({ kind: 'not_found' });
  });
});

describe('evaluation figures', () => {
  it('scores a session as the mean of the turns a scorer applies to', () => {
    expect(sessionScore([[1, null], [0, null], [0.5, 1]], 0)).toBe(0.5);
    expect(sessionScore([[1, null]], 1)).toBeNull();
  });

  it('gives a 95% t-interval (n = 4: t = 3.182)', () => {
    const e = estimate([0.2, 0.4, 0.6, 0.8]);
    expect(e.mean).toBeCloseTo(0.5);
    const half = 3.182446305 * Math.sqrt(((0.09 + 0.01 + 0.01 + 0.09) / 3) / 4);
    expect(e.ci95?.[0]).toBeCloseTo(0.5 - half, 6);
    expect(e.ci95?.[1]).toBeCloseTo(0.5 + half, 6);
    expect(estimate([0.7])).toEqual({ n: 1, mean: 0.7 });
    expect(estimate([])).toEqual({ n: 0, mean: null });
  });

  it('pairs the difference over the sessions where both sides apply', () => {
    const { state } = givenEvents(evaluationFold, [requested, started, scored('s1', [[1, null]], [[0.5, 1]]), scored('s2', [[0, null]], [[1, 0]]), scored('s3', [[null, null]], [[1, 0.5]])]);
    if (state.status === 'absent') throw new Error('absent');
    const [judge, same] = aggregate(state);
    expect(judge.baseline).toMatchObject({ n: 2, mean: 0.5 });
    expect(judge.candidate).toMatchObject({ n: 3, mean: 2.5 / 3 });
    expect(judge.difference).toMatchObject({ n: 2, mean: 0.25 });
    expect(same.baseline).toEqual({ n: 0, mean: null });
    expect(same.candidate.n).toBe(3);
    expect(same.difference.n).toBe(0);
  });
});
