import { jStat } from 'jstat';
import { assertNever, conflict, notFound } from '@lib/platform/kernel';

/**
 * An evaluation of a candidate revision over recorded sessions (docs/evaluations.md): its events, its fold, and
 * the aggregates with their confidence intervals. Stream `agent_evaluation-<agentId>.<evaluationId>`.
 */

export type EvaluationMode = 'recorded' | 'live_model';
/** A scorer as the request gave it (checked at the edge): `{type, ...its settings}`. */
export type EvaluationScorer = Readonly<Record<string, unknown>> & { readonly type: string };
/** One turn's scores, one per scorer in the evaluation's order: null where the scorer does not apply. */
export type TurnScores = readonly (number | null)[];

export interface SessionScores {
  readonly sessionKey: string;
  readonly replaySessionKey: string;
  /** Per turn of the recorded session, in order. */
  readonly baseline: readonly TurnScores[];
  /** Per turn of the replay, in order. */
  readonly candidate: readonly TurnScores[];
  /** A scorer that failed on a turn (a judge that answered no score): `{scorer index, side, turn, message}`. */
  readonly errors?: readonly { readonly scorer: number; readonly side: 'baseline' | 'candidate'; readonly turn: number; readonly message: string }[];
  /** How the replay differed from the original, in counts (the whole diff is the replay's, GET …/replay). */
  readonly diff?: { readonly turns: number; readonly sameAnswers: number; readonly sameToolCalls: number; readonly diverged: number };
}

export type EvaluationEvent =
  | {
      type: 'AgentEvaluationRequested';
      data: {
        evaluationId: string;
        agentId: string;
        agentKey: string;
        name?: string;
        sessionKeys: string[];
        candidateRevision: number;
        mode: EvaluationMode;
        scorers: EvaluationScorer[];
        createdAt: string;
      };
    }
  // Every event names its evaluation (the read model's row), not only the first.
  | { type: 'AgentEvaluationStarted'; data: { evaluationId: string; holder: string; startedAt: string } }
  | { type: 'AgentEvaluationSessionScored'; data: SessionScores & { evaluationId: string; scoredAt: string } }
  | { type: 'AgentEvaluationSessionFailed'; data: { evaluationId: string; sessionKey: string; error: string; failedAt: string } }
  | { type: 'AgentEvaluationCompleted'; data: { evaluationId: string; aggregates: ScorerAggregate[]; completedAt: string } }
  | { type: 'AgentEvaluationCancelled'; data: { evaluationId: string; cancelledAt: string } };

export const EVALUATION_EVENT_TYPES = ['AgentEvaluationRequested', 'AgentEvaluationStarted', 'AgentEvaluationSessionScored', 'AgentEvaluationSessionFailed', 'AgentEvaluationCompleted', 'AgentEvaluationCancelled'] as const;

export type EvaluationStatus = 'queued' | 'running' | 'completed' | 'cancelled';

export type EvaluationState =
  | { readonly status: 'absent' }
  | {
      readonly status: EvaluationStatus;
      readonly request: Extract<EvaluationEvent, { type: 'AgentEvaluationRequested' }>['data'];
      readonly startedAt?: string;
      readonly finishedAt?: string;
      readonly scored: readonly (SessionScores & { readonly scoredAt: string })[];
      readonly failed: readonly { readonly sessionKey: string; readonly error: string; readonly failedAt: string }[];
    };

export type ActiveEvaluation = Exclude<EvaluationState, { status: 'absent' }>;

export const evaluationFold = {
  initialState: { status: 'absent' } as EvaluationState,
  evolve(state: EvaluationState, event: EvaluationEvent): EvaluationState {
    if (event.type === 'AgentEvaluationRequested') return { status: 'queued', request: event.data, scored: [], failed: [] };
    if (state.status === 'absent') return state;
    switch (event.type) {
      case 'AgentEvaluationStarted':
        return { ...state, status: 'running', startedAt: state.startedAt ?? event.data.startedAt };
      case 'AgentEvaluationSessionScored':
        return { ...state, scored: [...state.scored.filter((s) => s.sessionKey !== event.data.sessionKey), event.data] };
      case 'AgentEvaluationSessionFailed':
        return { ...state, failed: [...state.failed.filter((s) => s.sessionKey !== event.data.sessionKey), event.data] };
      case 'AgentEvaluationCompleted':
        return { ...state, status: 'completed', finishedAt: event.data.completedAt };
      case 'AgentEvaluationCancelled':
        return { ...state, status: 'cancelled', finishedAt: event.data.cancelledAt };
      default:
        return assertNever(event);
    }
  },
};

export const evaluationNotFound = (id: string) => notFound('evaluation.not_found', `Evaluation "${id}" does not exist`, id);

/** The sessions still to go, in the evaluation's order. */
export function remainingSessions(s: ActiveEvaluation): string[] {
  const done = new Set([...s.scored.map((x) => x.sessionKey), ...s.failed.map((x) => x.sessionKey)]);
  return s.request.sessionKeys.filter((k) => !done.has(k));
}

export function decideRequestEvaluation(s: EvaluationState, request: Extract<EvaluationEvent, { type: 'AgentEvaluationRequested' }>['data']): EvaluationEvent[] {
  if (s.status !== 'absent') return []; // the same command again (its id is the evaluation's) adds nothing
  return [{ type: 'AgentEvaluationRequested', data: request }];
}

export function decideStartEvaluation(s: EvaluationState, holder: string, now: Date): EvaluationEvent[] {
  if (s.status !== 'queued') return [];
  return [{ type: 'AgentEvaluationStarted', data: { evaluationId: s.request.evaluationId, holder, startedAt: now.toISOString() } }];
}

/** A session's outcome, once: an evaluation that ended (a cancel) takes no more. */
export function decideSessionOutcome(s: EvaluationState, outcome: { readonly scores: SessionScores } | { readonly sessionKey: string; readonly error: string }, now: Date): EvaluationEvent[] {
  if (s.status !== 'running' && s.status !== 'queued') return [];
  const key = 'scores' in outcome ? outcome.scores.sessionKey : outcome.sessionKey;
  if (!remainingSessions(s).includes(key)) return [];
  return 'scores' in outcome
    ? [{ type: 'AgentEvaluationSessionScored', data: { ...outcome.scores, evaluationId: s.request.evaluationId, scoredAt: now.toISOString() } }]
    : [{ type: 'AgentEvaluationSessionFailed', data: { evaluationId: s.request.evaluationId, sessionKey: key, error: outcome.error, failedAt: now.toISOString() } }];
}

/** Completes an evaluation whose sessions are all scored or failed; the aggregates are recorded with it. */
export function decideCompleteEvaluation(s: EvaluationState, now: Date): EvaluationEvent[] {
  if ((s.status !== 'running' && s.status !== 'queued') || remainingSessions(s).length) return [];
  return [{ type: 'AgentEvaluationCompleted', data: { evaluationId: s.request.evaluationId, aggregates: aggregate(s), completedAt: now.toISOString() } }];
}

export function decideCancelEvaluation(s: EvaluationState, id: string, now: Date): EvaluationEvent[] {
  if (s.status === 'absent') throw evaluationNotFound(id);
  if (s.status === 'completed' || s.status === 'cancelled') throw conflict('evaluation.finished', `Evaluation "${id}" is already ${s.status}`);
  return [{ type: 'AgentEvaluationCancelled', data: { evaluationId: s.request.evaluationId, cancelledAt: now.toISOString() } }];
}

/** A mean with its 95% t-interval (absent below two values). */
export interface MeanEstimate {
  readonly n: number;
  readonly mean: number | null;
  readonly ci95?: readonly [number, number];
}

export interface ScorerAggregate {
  readonly scorer: EvaluationScorer;
  readonly baseline: MeanEstimate;
  readonly candidate: MeanEstimate;
  /** candidate − baseline over the sessions where both apply. */
  readonly difference: MeanEstimate;
}

/** The mean of the values that apply; null when none does. */
export function meanOf(values: readonly (number | null)[]): number | null {
  const xs = values.filter((v): v is number => v !== null);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

/** Mean and 95% Student t-interval of a sample. */
export function estimate(values: readonly number[]): MeanEstimate {
  const n = values.length;
  if (!n) return { n, mean: null };
  const mean = values.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { n, mean };
  const variance = values.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1);
  const half = (jStat.studentt.inv(0.975, n - 1) as number) * Math.sqrt(variance / n);
  return { n, mean, ci95: [mean - half, mean + half] };
}

/** A session's score per scorer for one side: the mean over its turns of the scores that apply. */
export function sessionScore(turns: readonly TurnScores[], scorer: number): number | null {
  return meanOf(turns.map((t) => t[scorer] ?? null));
}

/** Per scorer: baseline, candidate and their paired difference over the scored sessions. */
export function aggregate(s: ActiveEvaluation): ScorerAggregate[] {
  return s.request.scorers.map((scorer, i) => {
    const pairs = s.scored.map((x) => [sessionScore(x.baseline, i), sessionScore(x.candidate, i)] as const);
    const baseline = pairs.map(([b]) => b).filter((v): v is number => v !== null);
    const candidate = pairs.map(([, c]) => c).filter((v): v is number => v !== null);
    const differences = pairs.filter(([b, c]) => b !== null && c !== null).map(([b, c]) => (c as number) - (b as number));
    return { scorer, baseline: estimate(baseline), candidate: estimate(candidate), difference: estimate(differences) };
  });
}
