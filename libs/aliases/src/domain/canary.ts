/**
 * A canary of an alias (docs/aliases.md, "Canary"): a candidate agent takes a share of the new sessions, both arms'
 * finished turns are scored, and the evidence promotes or rolls it back. Its events are the alias's stream's, so a
 * promotion and the policy it changes are one append.
 */
export interface CanarySettings {
  readonly candidateAgentKey: string;
  /** The agent of the policy the candidate competes with: promotion renames it to the candidate in every target. */
  readonly controlAgentKey: string;
  /** The share of new sessions that go to the candidate, 0..1. */
  readonly weight: number;
  /** The scorers (docs/agents.md, "Scorers"), as the request gave them; checked by the agents' scoring port. */
  readonly scorers: readonly CanaryScorerSpec[];
  readonly promoteAfterSessions: number;
  readonly maxScoreDrop: number;
}

/** A scorer as the domain keeps it: its type and fields (their meaning is the agents context's). */
export type CanaryScorerSpec = { readonly type: string } & Readonly<Record<string, unknown>>;
/** One scorer's result on one turn. */
export interface CanaryScore {
  readonly type: string;
  readonly score: number | null;
  readonly reason?: string;
  readonly error?: string;
}

export type CanaryArm = 'candidate' | 'control';
export type CanaryStatus = 'running' | 'promoted' | 'rolled_back' | 'stopped' | 'replaced';

/** The figures of one arm: a session's score is the mean of its scored turns, a turn's the mean of its non-null scores. */
export interface ArmFigures {
  /** Sessions with at least one turn that got a score. */
  readonly sessions: number;
  readonly turns_scored: number;
  /** Scorer results that were errors (left out of every mean). */
  readonly scorer_errors: number;
  readonly mean: number | null;
  readonly stddev: number | null;
  readonly scorers: readonly { readonly type: string; readonly mean: number | null; readonly scored: number }[];
}

export interface CanaryFigures {
  readonly candidate: ArmFigures;
  readonly control: ArmFigures;
  /** candidate mean − control mean. */
  readonly difference: number | null;
  /** The 95 % interval of the difference (Welch: ±1.96 standard errors), once both arms have two scored sessions. */
  readonly interval95: readonly [number, number] | null;
}

export type CanaryEvent =
  | { type: 'AliasCanaryStarted'; data: { key: string; canaryId: string; settings: CanarySettings; startedAt: string; startedBy: string } }
  | { type: 'AliasCanaryTurnScored'; data: { key: string; canaryId: string; arm: CanaryArm; sessionKey: string; turnId: string; results: readonly CanaryScore[]; scoredAt: string } }
  | { type: 'AliasCanaryDecided'; data: { key: string; canaryId: string; decision: 'promoted' | 'rolled_back'; reason: string; figures: CanaryFigures; settings: CanarySettings; decidedAt: string } }
  | { type: 'AliasCanaryEnded'; data: { key: string; canaryId: string; reason: 'stopped' | 'replaced'; endedAt: string } };

interface ArmTally {
  /** Per session: the sum and count of its turns' scores. */
  readonly sessions: Readonly<Record<string, { readonly sum: number; readonly n: number }>>;
  readonly turnsScored: number;
  readonly errors: number;
  /** Per scorer (by its index in the list): the sum and count of its non-null scores. */
  readonly perScorer: readonly { readonly sum: number; readonly n: number }[];
}

export interface CanaryState {
  readonly id: string;
  readonly settings: CanarySettings;
  readonly status: CanaryStatus;
  readonly startedAt: string;
  readonly startedBy: string;
  readonly endedAt?: string;
  readonly decision?: { readonly decision: 'promoted' | 'rolled_back'; readonly reason: string; readonly figures: CanaryFigures };
  readonly scoredTurns: readonly string[];
  readonly arms: Readonly<Record<CanaryArm, ArmTally>>;
}

const emptyArm = (scorers: number): ArmTally => ({ sessions: {}, turnsScored: 0, errors: 0, perScorer: Array.from({ length: scorers }, () => ({ sum: 0, n: 0 })) });

export function evolveCanary(canary: CanaryState | undefined, event: CanaryEvent): CanaryState | undefined {
  switch (event.type) {
    case 'AliasCanaryStarted':
      return { id: event.data.canaryId, settings: event.data.settings, status: 'running', startedAt: event.data.startedAt, startedBy: event.data.startedBy, scoredTurns: [], arms: { candidate: emptyArm(event.data.settings.scorers.length), control: emptyArm(event.data.settings.scorers.length) } };
    case 'AliasCanaryTurnScored': {
      if (!canary || canary.id !== event.data.canaryId) return canary;
      const { arm, sessionKey, turnId, results } = event.data;
      const tally = canary.arms[arm];
      const scores = results.map((r) => r.score).filter((s): s is number => typeof s === 'number');
      const turnScore = scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : undefined;
      const session = tally.sessions[sessionKey] ?? { sum: 0, n: 0 };
      const next: ArmTally = {
        sessions: turnScore === undefined ? tally.sessions : { ...tally.sessions, [sessionKey]: { sum: session.sum + turnScore, n: session.n + 1 } },
        turnsScored: tally.turnsScored + 1,
        errors: tally.errors + results.filter((r) => r.error !== undefined).length,
        perScorer: tally.perScorer.map((p, i) => (typeof results[i]?.score === 'number' ? { sum: p.sum + (results[i].score as number), n: p.n + 1 } : p)),
      };
      return { ...canary, scoredTurns: [...canary.scoredTurns, turnId], arms: { ...canary.arms, [arm]: next } };
    }
    case 'AliasCanaryDecided':
      if (!canary || canary.id !== event.data.canaryId) return canary;
      return { ...canary, status: event.data.decision, endedAt: event.data.decidedAt, decision: { decision: event.data.decision, reason: event.data.reason, figures: event.data.figures } };
    case 'AliasCanaryEnded':
      if (!canary || canary.id !== event.data.canaryId) return canary;
      return { ...canary, status: event.data.reason, endedAt: event.data.endedAt };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

const round = (n: number | null): number | null => (n === null ? null : Math.round(n * 1e6) / 1e6);

function armFigures(tally: ArmTally, scorers: readonly CanaryScorerSpec[]): ArmFigures & { readonly values: number[] } {
  const values = Object.values(tally.sessions).map((s) => s.sum / s.n);
  const mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
  const variance = mean !== null && values.length > 1 ? values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1) : null;
  return {
    sessions: values.length,
    turns_scored: tally.turnsScored,
    scorer_errors: tally.errors,
    mean: round(mean),
    stddev: round(variance === null ? null : Math.sqrt(variance)),
    scorers: scorers.map((s, i) => ({ type: s.type, mean: round(tally.perScorer[i]?.n ? tally.perScorer[i].sum / tally.perScorer[i].n : null), scored: tally.perScorer[i]?.n ?? 0 })),
    values,
  };
}

/** The running tally and the figures a decision reads. */
export function canaryFigures(canary: CanaryState): CanaryFigures {
  const { values: c, ...candidate } = armFigures(canary.arms.candidate, canary.settings.scorers);
  const { values: k, ...control } = armFigures(canary.arms.control, canary.settings.scorers);
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const difference = c.length && k.length ? mean(c) - mean(k) : null;
  let interval95: [number, number] | null = null;
  if (difference !== null && c.length > 1 && k.length > 1) {
    const variance = (v: number[]) => v.reduce((a, x) => a + (x - mean(v)) ** 2, 0) / (v.length - 1);
    const se = Math.sqrt(variance(c) / c.length + variance(k) / k.length);
    interval95 = [round(difference - 1.96 * se)!, round(difference + 1.96 * se)!];
  }
  return { candidate, control, difference: round(difference), interval95 };
}

/**
 * What the evidence says, checked after every score: roll back once the candidate is worse than the control by
 * more than `maxScoreDrop` with 95 % confidence (the interval's upper end below −maxScoreDrop); at the promotion
 * point (`promoteAfterSessions` scored candidate sessions, one scored control session at least), promote when the
 * candidate's mean is not below the control's by more than `maxScoreDrop`, roll back otherwise. Undefined: wait.
 */
export function canaryDecision(canary: CanaryState): { decision: 'promoted' | 'rolled_back'; reason: string; figures: CanaryFigures } | undefined {
  const figures = canaryFigures(canary);
  const { maxScoreDrop, promoteAfterSessions } = canary.settings;
  if (figures.interval95 && figures.interval95[1] < -maxScoreDrop) {
    return { decision: 'rolled_back', reason: `the candidate is worse than the control by more than ${maxScoreDrop} with 95% confidence (interval of the difference ${figures.interval95[0]} to ${figures.interval95[1]})`, figures };
  }
  if (figures.candidate.sessions < promoteAfterSessions || figures.difference === null) return undefined;
  if (figures.difference >= -maxScoreDrop) return { decision: 'promoted', reason: `${figures.candidate.sessions} candidate sessions scored, mean ${figures.candidate.mean} against the control's ${figures.control.mean}: not below it by more than ${maxScoreDrop}`, figures };
  return { decision: 'rolled_back', reason: `${figures.candidate.sessions} candidate sessions scored, mean ${figures.candidate.mean} against the control's ${figures.control.mean}: below it by more than ${maxScoreDrop}`, figures };
}

/** The view of `GET /v2/agent_aliases/{alias}/canary`. */
export function canaryView(aliasKey: string, canary: CanaryState): Record<string, unknown> {
  const s = canary.settings;
  return {
    alias_key: aliasKey,
    id: canary.id,
    state: canary.status,
    candidate_agent_key: s.candidateAgentKey,
    control_agent_key: s.controlAgentKey,
    weight: s.weight,
    scorers: s.scorers,
    promote_after_sessions: s.promoteAfterSessions,
    max_score_drop: s.maxScoreDrop,
    started_at: canary.startedAt,
    ended_at: canary.endedAt ?? null,
    tally: canary.decision?.figures ?? canaryFigures(canary),
    decision: canary.decision ? { decision: canary.decision.decision, reason: canary.decision.reason } : null,
  };
}
