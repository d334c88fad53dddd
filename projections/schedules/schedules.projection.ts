import type { AgentEvent } from '@lib/agents/events';
import type { ScheduleEvent } from '@lib/schedules/events';
import { SCHEDULE_EXECUTIONS, SCHEDULE_RUNS, scheduleIdentity, scheduleReadId, SCHEDULES } from '@lib/schedules/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';
import { SCHEDULE_MAX_ATTEMPTS } from '@lib/schedules/events';

/**
 * Agent schedules, their open runs and their executions (docs/schedules.md). Rows of a schedule whose agent was
 * deleted go with it (by agent id, so a re-created agent of the same key keeps its own).
 */
export const schedulesProjection: ReadModelProjection = {
  name: 'agent_schedules',
  version: 1,
  target: 'read',
  eventTypes: ['ScheduleCreated', 'ScheduleUpdated', 'ScheduleDeleted', 'ScheduleFired', 'ScheduleAttempted', 'AgentDeleted'],
  collections: [
    { name: SCHEDULES, indexes: [{ fields: ['agent_id'] }, { fields: ['agent_key'] }] },
    { name: SCHEDULE_RUNS, indexes: [{ fields: ['open'] }, { fields: ['agent_id'] }] },
    { name: SCHEDULE_EXECUTIONS, indexes: [{ fields: ['schedule_id', 'executed_at'] }, { fields: ['agent_id'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as ScheduleEvent | AgentEvent;
    switch (event.type) {
      case 'AgentCreated':
      case 'AgentUpdated':
        return [];
      case 'AgentDeleted': {
        const where = [{ field: 'agent_id', op: 'eq' as const, value: event.data.agentId }];
        return [
          { op: 'deleteWhere', collection: SCHEDULES, where },
          { op: 'deleteWhere', collection: SCHEDULE_RUNS, where },
          { op: 'deleteWhere', collection: SCHEDULE_EXECUTIONS, where },
        ];
      }
      case 'ScheduleCreated': {
        const d = event.data;
        return [put(SCHEDULES, { id: scheduleReadId(d.agentKey, d.key), agent_key: d.agentKey, agent_id: d.agentId, key: d.key, enabled: d.settings.enabled, settings: d.settings, next_due_at: d.nextDueAt, last_execution_at: null, created_at: d.createdAt, updated_at: d.createdAt })];
      }
      case 'ScheduleUpdated': {
        const d = event.data;
        return [patch(SCHEDULES, scheduleReadId(d.agentKey, d.key), { set: { enabled: d.settings.enabled, settings: d.settings, next_due_at: d.nextDueAt, updated_at: d.updatedAt } })];
      }
      case 'ScheduleDeleted': {
        const d = event.data;
        const identity = scheduleIdentity(d.agentId, d.key);
        return [
          remove(SCHEDULES, scheduleReadId(d.agentKey, d.key)),
          { op: 'deleteWhere', collection: SCHEDULE_RUNS, where: [{ field: 'agent_id', op: 'eq', value: d.agentId }, { field: 'schedule_key', op: 'eq', value: d.key }] },
          { op: 'deleteWhere', collection: SCHEDULE_EXECUTIONS, where: [{ field: 'schedule_id', op: 'eq', value: identity }] },
        ];
      }
      case 'ScheduleFired': {
        const d = event.data;
        return [
          patch(SCHEDULES, scheduleReadId(d.agentKey, d.key), { set: { next_due_at: d.nextDueAt } }),
          put(SCHEDULE_RUNS, { id: d.runId, agent_id: d.agentId, agent_key: d.agentKey, schedule_key: d.key, run_id: d.runId, due_at: d.dueAt, missed: d.missed, open: true }),
        ];
      }
      case 'ScheduleAttempted': {
        const d = event.data;
        const identity = scheduleIdentity(d.agentId, d.key);
        const finished = d.status === 'success' || d.attempt >= SCHEDULE_MAX_ATTEMPTS;
        return [
          put(SCHEDULE_EXECUTIONS, { id: `${d.runId}#${d.attempt}`, schedule_id: identity, agent_id: d.agentId, schedule_key: d.key, workflow_run_id: d.runId, session_key: d.sessionKey, attempt: d.attempt, status: d.status, error_message: d.errorMessage, executed_at: d.executedAt }),
          ...(d.pruneBefore ? [{ op: 'deleteWhere' as const, collection: SCHEDULE_EXECUTIONS, where: [{ field: 'schedule_id', op: 'eq' as const, value: identity }, { field: 'executed_at', op: 'lt' as const, value: d.pruneBefore }] }] : []),
          patch(SCHEDULES, scheduleReadId(d.agentKey, d.key), { set: { last_execution_at: d.executedAt } }),
          ...(finished ? [patch(SCHEDULE_RUNS, d.runId, { set: { open: false } })] : []),
        ];
      }
      default:
        return assertNever(event);
    }
  },
};
