import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, DomainError } from '@lib/platform';
import type { EvaluationMode, EvaluationScorer, SessionScores, TurnScores } from '../../domain/evaluation';
import { RecordedEvent, recordedTurns } from '../../domain/replay';
import type { ScorerSpec } from '../../domain/scorers';
import { Replays } from '../replay/replays';
import { TURN_SCORING, TurnRef, TurnScoring } from '../runs/turn-scoring.port';
import { Sessions } from '../sessions/sessions';
import { SessionEvaluator } from './session-evaluator.port';

/** The turn ids of a session's own turns, in order (a turn's start names it). */
function turnIds(events: readonly RecordedEvent[]): string[] {
  return recordedTurns(events).map((t) => String((t.events.find((e) => e.type === 'SessionTurnStarted')?.data as { turnId?: string } | undefined)?.turnId ?? ''));
}

/**
 * An evaluation's work on one session (docs/evaluations.md): a replay at the candidate revision (docs/replay.md),
 * then every recorded turn scored as the baseline and every replayed turn as the candidate, against the recorded turn
 * it re-ran (for `same_tool_calls`). Side effects are refused, as in any replay that does not allow them.
 */
@Injectable()
export class ReplaySessionEvaluator extends SessionEvaluator {
  constructor(
    private readonly replays: Replays,
    private readonly sessions: Sessions,
    @Inject(TURN_SCORING) private readonly scoring: TurnScoring,
  ) {
    super();
  }

  scorerProblem(scorers: unknown, prefix: string): Promise<readonly [string, string] | undefined> {
    return this.scoring.problem(scorers, prefix);
  }

  async evaluate(agentKey: string, sessionKey: string, options: { readonly agentRevision: number; readonly mode: EvaluationMode; readonly scorers: readonly EvaluationScorer[]; readonly replayKey: string }, ctx: CommandContext): Promise<SessionScores> {
    const replay = await this.replayUnder(agentKey, sessionKey, options, ctx);
    const [original, replayed] = await Promise.all([this.sessions.active(agentKey, sessionKey), this.sessions.active(agentKey, replay.session_key)]);
    const [originalTurns, replayTurns] = await Promise.all([this.sessions.store.readRaw(original.streamId).then(turnIds), this.sessions.store.readRaw(replayed.streamId).then(turnIds)]);
    const scorers = options.scorers as readonly ScorerSpec[];
    const errors: { scorer: number; side: 'baseline' | 'candidate'; turn: number; message: string }[] = [];
    const side = async (name: 'baseline' | 'candidate', stream: string, ids: readonly string[]): Promise<TurnScores[]> => {
      const out: TurnScores[] = [];
      for (const [turn, turnId] of ids.entries()) {
        const ref: TurnRef = { sessionStream: stream, turnId };
        const base: TurnRef | undefined = name === 'candidate' && originalTurns[turn] ? { sessionStream: original.streamId, turnId: originalTurns[turn] } : undefined;
        const results = await this.scoring.score(ref, scorers, ctx, base);
        results.forEach((r, scorer) => r.error && errors.push({ scorer, side: name, turn, message: r.error }));
        out.push(results.map((r) => r.score));
      }
      return out;
    };
    const baseline = await side('baseline', original.streamId, originalTurns);
    const candidate = await side('candidate', replayed.streamId, replayTurns);
    const t = replay.diff.totals;
    return { sessionKey, replaySessionKey: replay.session_key, baseline, candidate, ...(errors.length ? { errors } : {}), diff: { turns: t.turns, sameAnswers: t.same_answers, sameToolCalls: t.same_tool_calls, diverged: t.diverged } };
  }

  /** The replay under the evaluation's key; a key a crashed attempt left taken gets a suffix (`-2`, `-3`, …). */
  private async replayUnder(agentKey: string, sessionKey: string, options: { readonly agentRevision: number; readonly mode: EvaluationMode; readonly replayKey: string }, ctx: CommandContext) {
    for (let attempt = 1; ; attempt++) {
      const key = attempt === 1 ? options.replayKey : `${options.replayKey}-${attempt}`;
      try {
        return await this.replays.replay(agentKey, sessionKey, { agentRevision: options.agentRevision, mode: options.mode, allowSideEffects: false, key }, ctx);
      } catch (e) {
        if (!(e instanceof DomainError) || e.code !== 'session.key_taken' || attempt >= 5) throw e;
      }
    }
  }
}
