import type { AgentEvent, EvaluationEvent } from '@lib/agents/events';
import { EVALUATIONS } from '@lib/agents/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

/**
 * Agent evaluations (docs/evaluations.md): one row each, for the list and the runner's sweep; the view of one is
 * the fold of its stream. Rows of a deleted agent go with it (by agent id).
 */
export const evaluationsProjection: ReadModelProjection = {
  name: 'agent_evaluations',
  version: 1,
  target: 'read',
  eventTypes: ['AgentEvaluationRequested', 'AgentEvaluationStarted', 'AgentEvaluationSessionScored', 'AgentEvaluationSessionFailed', 'AgentEvaluationCompleted', 'AgentEvaluationCancelled', 'AgentDeleted'],
  collections: [{ name: EVALUATIONS, indexes: [{ fields: ['agent_id', 'created_at'] }, { fields: ['status'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as EvaluationEvent | AgentEvent;
    switch (event.type) {
      case 'AgentCreated':
      case 'AgentUpdated':
        return [];
      case 'AgentDeleted':
        return [{ op: 'deleteWhere', collection: EVALUATIONS, where: [{ field: 'agent_id', op: 'eq', value: event.data.agentId }] }];
      case 'AgentEvaluationRequested': {
        const d = event.data;
        return [put(EVALUATIONS, { id: d.evaluationId, agent_id: d.agentId, agent_key: d.agentKey, name: d.name ?? null, status: 'queued', candidate_revision: d.candidateRevision, mode: d.mode, total: d.sessionKeys.length, scored: 0, failed: 0, created_at: d.createdAt, started_at: null, finished_at: null })];
      }
      case 'AgentEvaluationStarted':
        return [patch(EVALUATIONS, event.data.evaluationId, { set: { status: 'running', started_at: event.data.startedAt } })];
      case 'AgentEvaluationSessionScored':
        return [patch(EVALUATIONS, event.data.evaluationId, { inc: { scored: 1 } })];
      case 'AgentEvaluationSessionFailed':
        return [patch(EVALUATIONS, event.data.evaluationId, { inc: { failed: 1 } })];
      case 'AgentEvaluationCompleted':
        return [patch(EVALUATIONS, event.data.evaluationId, { set: { status: 'completed', finished_at: event.data.completedAt } })];
      case 'AgentEvaluationCancelled':
        return [patch(EVALUATIONS, event.data.evaluationId, { set: { status: 'cancelled', finished_at: event.data.cancelledAt } })];
      default:
        return assertNever(event);
    }
  },
};
