import { notFound } from '@lib/platform/kernel';
import { AliasEvent, aliasFold, aliasNotFound, AliasPolicy, AliasState, AliasTargets } from './alias';
import { CanaryArm, canaryDecision, CanaryScore, CanarySettings } from './canary';

export const canaryNotFound = (key: string) => notFound('alias.canary_not_found', `Alias "${key}" has no canary running`, key);

/** Starts a canary; one already running is replaced (its tally ends with it: `AliasCanaryEnded` reason `replaced`). */
export function decideStartCanary(state: AliasState, key: string, canaryId: string, settings: CanarySettings, by: string, now: Date): AliasEvent[] {
  if (state.status !== 'active') throw aliasNotFound(key);
  const at = now.toISOString();
  const running = state.canary?.status === 'running' ? state.canary : undefined;
  return [...(running ? [{ type: 'AliasCanaryEnded' as const, data: { key, canaryId: running.id, reason: 'replaced' as const, endedAt: at } }] : []), { type: 'AliasCanaryStarted', data: { key, canaryId, settings, startedAt: at, startedBy: by } }];
}

/** Ends the running canary: routing is the policy's alone again, nothing else changes. */
export function decideStopCanary(state: AliasState, key: string, now: Date): AliasEvent[] {
  if (state.status !== 'active') throw aliasNotFound(key);
  if (state.canary?.status !== 'running') throw canaryNotFound(key);
  return [{ type: 'AliasCanaryEnded', data: { key, canaryId: state.canary.id, reason: 'stopped', endedAt: now.toISOString() } }];
}

export interface TurnScores {
  readonly canaryId: string;
  readonly arm: CanaryArm;
  readonly sessionKey: string;
  readonly turnId: string;
  readonly results: readonly CanaryScore[];
}

/** Whether a turn still needs scoring by this canary (running, and the turn not scored yet): asked before the scorers run. */
export function needsScore(state: AliasState, canaryId: string, turnId: string): boolean {
  return state.status === 'active' && state.canary?.id === canaryId && state.canary.status === 'running' && !state.canary.scoredTurns.includes(turnId);
}

/**
 * Records a turn's scores (once: a turn already scored, or a canary no longer running, records nothing), then the
 * decision the evidence makes, if any, in the same append: a promotion with the policy it changes.
 */
export function decideCanaryScore(state: AliasState, key: string, scores: TurnScores, now: Date): AliasEvent[] {
  if (state.status !== 'active' || !needsScore(state, scores.canaryId, scores.turnId)) return [];
  const at = now.toISOString();
  const scored: AliasEvent = { type: 'AliasCanaryTurnScored', data: { key, ...scores, scoredAt: at } };
  const after = aliasFold.evolve(state, scored);
  if (after.status !== 'active' || !after.canary) return [scored];
  const decision = canaryDecision(after.canary);
  if (!decision) return [scored];
  const settings = after.canary.settings;
  const decided: AliasEvent = { type: 'AliasCanaryDecided', data: { key, canaryId: scores.canaryId, ...decision, settings, decidedAt: at } };
  if (decision.decision === 'rolled_back') return [scored, decided];
  const policy = swapAgent(state.settings.policy, settings.controlAgentKey, settings.candidateAgentKey);
  return [scored, decided, { type: 'AliasUpdated', data: { key, settings: { ...state.settings, policy }, updatedAt: at } }];
}

/** The policy with every target naming `from` naming `to` instead (a promotion). */
export function swapAgent(policy: AliasPolicy, from: string, to: string): AliasPolicy {
  const swap = (t: AliasTargets): AliasTargets => (t.type === 'single' ? (t.agent_key === from ? { ...t, agent_key: to } : t) : { ...t, options: t.options.map((o) => (o.agent_key === from ? { ...o, agent_key: to } : o)) });
  return { ...policy, rules: policy.rules.map((r) => ({ ...r, targets: swap(r.targets) })) };
}

