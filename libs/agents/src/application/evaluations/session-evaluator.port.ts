import type { CommandContext } from '@lib/platform';
import type { EvaluationMode, EvaluationScorer, SessionScores } from '../../domain/evaluation';

/**
 * What an evaluation does with one recorded session (docs/evaluations.md): replay it at the candidate revision and
 * score, turn by turn, the recorded turns (the baseline) and the replay's (the candidate). Bound in AgentsModule
 * over the replays and the turn scorers.
 */
export abstract class SessionEvaluator {
  /** The first problem of a scorer list as `[field, reason]`, fields named under `prefix`; undefined when all can run. */
  abstract scorerProblem(scorers: unknown, prefix: string): Promise<readonly [string, string] | undefined>;
  /** Replays the session and scores both sides; rejects when the session cannot be replayed. */
  abstract evaluate(
    agentKey: string,
    sessionKey: string,
    options: { readonly agentRevision: number; readonly mode: EvaluationMode; readonly scorers: readonly EvaluationScorer[]; readonly replayKey: string },
    ctx: CommandContext,
  ): Promise<SessionScores>;
}
