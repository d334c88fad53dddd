import type { CommandContext } from '@lib/platform';
import type { ScorerSpec, ScoreResult } from '../../domain/scorers';

export type { ScorerSpec, ScorerType, ScoreResult } from '../../domain/scorers';
export { SCORER_TYPES, MAX_SCORERS } from '../../domain/scorers';

/** A finished turn: the session's stream (the SessionTurnEnded event's) and the turn's id. */
export interface TurnRef {
  readonly sessionStream: string;
  readonly turnId: string;
}

/**
 * The scoring port (docs/agents.md, "Scorers"): scores one finished turn of a session from its events, optionally
 * against a baseline turn. Implemented by the agents context (`TurnScorers`), injected as `TURN_SCORING`; used by
 * canary aliases and evaluations.
 */
export interface TurnScoring {
  /**
   * The first problem of a scorer list as `[field, reason]` (`scorers[1].llm_name`: no such model, ...), the fields
   * named under `prefix`; undefined when every scorer can run.
   */
  problem(scorers: unknown, prefix?: string): Promise<readonly [string, string] | undefined>;
  /** One result per scorer, in order; a scorer's failure is its result's `error`, never a rejection. */
  score(turn: TurnRef, scorers: readonly ScorerSpec[], ctx: CommandContext, baseline?: TurnRef): Promise<ScoreResult[]>;
}

export const TURN_SCORING = Symbol('TurnScoring');
