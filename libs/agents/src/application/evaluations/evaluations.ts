import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, DomainError, ID_GENERATOR, IdGenerator, invalid, parseFilter, READ_STORE, ReadStore, StreamWriter, streamId } from '@lib/platform';
import { agentNotFound } from '../../domain/agent';
import {
  ActiveEvaluation,
  aggregate,
  decideCancelEvaluation,
  decideRequestEvaluation,
  EvaluationEvent,
  evaluationFold,
  evaluationNotFound,
  EvaluationMode,
  EvaluationScorer,
  EvaluationState,
  sessionScore,
} from '../../domain/evaluation';
import { EVALUATIONS, EvaluationRow, evaluationSummaryView, SESSIONS, SessionRow } from '../../read-models';
import { AgentRevisions } from '../revisions/agent-revisions';
import { AgentWriter } from '../agent-writer';
import { SessionEvaluator } from './session-evaluator.port';

export const evaluationStream = (agentId: string, evaluationId: string): string => streamId('agent_evaluation', agentId, evaluationId);

/** How many sessions one evaluation may replay. */
export const MAX_EVALUATION_SESSIONS = 200;
export const DEFAULT_EVALUATION_SESSIONS = 20;
export const MAX_EVALUATION_SCORERS = 10;

/** The request as the edge checked its shape (the rest is checked here, against the agent). */
export interface EvaluationRequest {
  readonly sessions: { readonly metadata_filter?: string; readonly created_after?: string; readonly limit?: number } | { readonly session_keys: readonly string[] };
  readonly candidate_revision: number | 'current';
  readonly mode?: EvaluationMode;
  readonly scorers: readonly EvaluationScorer[];
  readonly name?: string;
}

/** Evaluations of an agent's candidate revision over its recorded sessions (docs/evaluations.md): create, read, list, cancel. */
@Injectable()
export class Evaluations {
  constructor(
    private readonly streams: StreamWriter,
    private readonly agents: AgentWriter,
    private readonly revisions: AgentRevisions,
    private readonly evaluator: SessionEvaluator,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  private async agent(agentKey: string) {
    const state = await this.agents.state(agentKey);
    if (state.status === 'absent') throw agentNotFound(agentKey);
    return state;
  }

  /** Checks everything, chooses the sessions, and stores the request (nothing is stored when a check fails). */
  async create(agentKey: string, req: EvaluationRequest, ctx: CommandContext): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    const mode = req.mode ?? 'recorded';
    if (mode !== 'recorded' && mode !== 'live_model') throw invalid('evaluation.invalid', 'mode must be "recorded" or "live_model"', { mode: 'must be recorded or live_model' });
    const revisions = await this.revisions.list(agentKey);
    const candidateRevision = req.candidate_revision === 'current' ? revisions.length - 1 : req.candidate_revision;
    if (!Number.isInteger(candidateRevision) || candidateRevision < 0 || candidateRevision >= revisions.length) {
      throw invalid('evaluation.invalid', `candidate_revision ${String(req.candidate_revision)} is not a revision of agent "${agentKey}" (0 to ${revisions.length - 1})`, { candidate_revision: 'no such revision' });
    }
    if (!Array.isArray(req.scorers) || !req.scorers.length || req.scorers.length > MAX_EVALUATION_SCORERS) throw invalid('evaluation.invalid', `scorers must hold 1 to ${MAX_EVALUATION_SCORERS} scorers`, { scorers: `1 to ${MAX_EVALUATION_SCORERS} scorers` });
    const problem = await this.evaluator.scorerProblem(req.scorers, 'scorers');
    if (problem) throw invalid('evaluation.invalid', `${problem[0]}: ${problem[1]}`, { [problem[0]]: problem[1] });
    const sessionKeys = await this.choose(agent.agentId, agentKey, req.sessions);
    const evaluationId = `evl_${this.ids.uuid().replace(/-/g, '')}`;
    const request = { evaluationId, agentId: agent.agentId, agentKey, ...(req.name !== undefined ? { name: req.name } : {}), sessionKeys, candidateRevision, mode, scorers: req.scorers.map((s) => ({ ...s })), createdAt: ctx.now.toISOString() };
    await this.streams.write<EvaluationState, EvaluationEvent>(evaluationStream(agent.agentId, evaluationId), evaluationFold, (s) => decideRequestEvaluation(s, request), ctx, ['agent_evaluations']);
    return this.get(agentKey, evaluationId);
  }

  /** The sessions an evaluation replays, chosen now: named, or the newest matching the filter (replays left out). */
  private async choose(agentId: string, agentKey: string, sel: EvaluationRequest['sessions']): Promise<string[]> {
    if (!sel || typeof sel !== 'object') throw invalid('evaluation.invalid', 'sessions must be {"session_keys": [...]} or {"metadata_filter", "created_after", "limit"}', { sessions: 'required' });
    if ('session_keys' in sel) {
      const keys = sel.session_keys;
      if (!Array.isArray(keys) || !keys.length || keys.length > MAX_EVALUATION_SESSIONS || keys.some((k) => typeof k !== 'string')) throw invalid('evaluation.invalid', `sessions.session_keys must hold 1 to ${MAX_EVALUATION_SESSIONS} session keys`, { 'sessions.session_keys': `1 to ${MAX_EVALUATION_SESSIONS} strings` });
      if (new Set(keys).size !== keys.length) throw invalid('evaluation.invalid', 'sessions.session_keys names a session twice', { 'sessions.session_keys': 'repeats a key' });
      for (const [i, key] of keys.entries()) {
        const row = await this.reads.get<SessionRow>(SESSIONS, `${agentId}.${key}`);
        if (!row) throw invalid('evaluation.invalid', `sessions.session_keys[${i}]: "${key}" is not a session of agent "${agentKey}"`, { [`sessions.session_keys[${i}]`]: 'no such session' });
        if (!row.turns) throw invalid('evaluation.invalid', `sessions.session_keys[${i}]: session "${key}" has no turn to replay`, { [`sessions.session_keys[${i}]`]: 'no turn to replay' });
      }
      return [...keys];
    }
    const limit = sel.limit ?? DEFAULT_EVALUATION_SESSIONS;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_EVALUATION_SESSIONS) throw invalid('evaluation.invalid', `sessions.limit must be 1 to ${MAX_EVALUATION_SESSIONS}`, { 'sessions.limit': `1 to ${MAX_EVALUATION_SESSIONS}` });
    if (sel.created_after !== undefined && (typeof sel.created_after !== 'string' || Number.isNaN(Date.parse(sel.created_after)))) throw invalid('evaluation.invalid', 'sessions.created_after must be an ISO 8601 time', { 'sessions.created_after': 'not a time' });
    let metadata;
    if (sel.metadata_filter !== undefined) {
      try {
        metadata = { filter: parseFilter(String(sel.metadata_filter)), docField: 'metadata' };
      } catch (e) {
        if (e instanceof DomainError) throw invalid('evaluation.invalid', `Invalid sessions.metadata_filter: ${e.message}`, { 'sessions.metadata_filter': e.message });
        throw e;
      }
    }
    const where = [
      { field: 'agent_id', op: 'eq' as const, value: agentId },
      { field: 'turns', op: 'gt' as const, value: 0 },
      ...(sel.created_after ? [{ field: 'created_at', op: 'gt' as const, value: new Date(sel.created_after).toISOString() }] : []),
    ];
    const keys: string[] = [];
    let pageKey: string | undefined;
    do {
      const page = await this.reads.find<SessionRow>(SESSIONS, { where, metadata, sort: { field: 'created_at', direction: 'desc' }, limit: 100, pageKey });
      for (const row of page.items) if (!row.replay_of && keys.length < limit) keys.push(row.key);
      pageKey = page.nextPageKey;
    } while (pageKey && keys.length < limit);
    if (!keys.length) throw invalid('evaluation.no_sessions', 'No session of the agent matches: nothing to evaluate', { sessions: 'matches no session with a turn' });
    return keys;
  }

  private async state(agentKey: string, id: string): Promise<ActiveEvaluation> {
    const agent = await this.agent(agentKey);
    const s = await this.streams.state(evaluationStream(agent.agentId, id), evaluationFold);
    if (s.status === 'absent') throw evaluationNotFound(id);
    return s;
  }

  async get(agentKey: string, id: string): Promise<Record<string, unknown>> {
    return evaluationView(await this.state(agentKey, id));
  }

  async list(agentKey: string, limit: number, pageKey?: string): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    const page = await this.reads.find<EvaluationRow>(EVALUATIONS, { where: [{ field: 'agent_id', op: 'eq', value: agent.agentId }], sort: { field: 'created_at', direction: 'desc' }, limit, pageKey });
    return { evaluations: page.items.map(evaluationSummaryView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  async cancel(agentKey: string, id: string, ctx: CommandContext): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    await this.streams.write<EvaluationState, EvaluationEvent>(evaluationStream(agent.agentId, id), evaluationFold, (s) => decideCancelEvaluation(s, id, ctx.now), ctx, ['agent_evaluations']);
    return this.get(agentKey, id);
  }
}

/** An evaluation as the API shows it: progress, per-session scores of both sides, aggregates. */
export function evaluationView(s: ActiveEvaluation): Record<string, unknown> {
  const r = s.request;
  const label = (i: number) => r.scorers[i].type;
  const perScorer = (turns: readonly (readonly (number | null)[])[]) => r.scorers.map((_, i) => ({ type: label(i), score: sessionScore(turns, i) }));
  return {
    id: r.evaluationId,
    agent_key: r.agentKey,
    ...(r.name !== undefined ? { name: r.name } : {}),
    status: s.status,
    candidate_revision: r.candidateRevision,
    mode: r.mode,
    scorers: r.scorers,
    progress: { total: r.sessionKeys.length, scored: s.scored.length, failed: s.failed.length },
    created_at: r.createdAt,
    ...(s.startedAt ? { started_at: s.startedAt } : {}),
    ...(s.finishedAt ? { finished_at: s.finishedAt } : {}),
    sessions: r.sessionKeys.map((key) => {
      const scored = s.scored.find((x) => x.sessionKey === key);
      if (scored) {
        return {
          session_key: key,
          status: 'scored',
          replay_session_key: scored.replaySessionKey,
          baseline: perScorer(scored.baseline),
          candidate: perScorer(scored.candidate),
          turns: { baseline: scored.baseline, candidate: scored.candidate },
          ...(scored.diff ? { diff: { turns: scored.diff.turns, same_answers: scored.diff.sameAnswers, same_tool_calls: scored.diff.sameToolCalls, diverged: scored.diff.diverged } } : {}),
          ...(scored.errors?.length ? { errors: scored.errors.map((e) => ({ scorer: label(e.scorer), side: e.side, turn: e.turn, message: e.message })) } : {}),
        };
      }
      const failed = s.failed.find((x) => x.sessionKey === key);
      if (failed) return { session_key: key, status: 'failed', error: failed.error };
      return { session_key: key, status: 'pending' };
    }),
    aggregates: aggregate(s).map((a) => ({ scorer: a.scorer, baseline: a.baseline, candidate: a.candidate, difference: a.difference })),
  };
}
