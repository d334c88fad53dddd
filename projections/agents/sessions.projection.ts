import type { AgentEvent, SessionEvent } from '@lib/agents/events';
import { sessionRow, SESSIONS } from '@lib/agents/read-models';
import { patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** `session-<agentId>.<sessionKey>` → the row id `<agentId>.<sessionKey>` (neither part holds a dot or a %). */
const rowIdOf = (streamId: string): string | undefined => (streamId.startsWith('session-') ? streamId.slice('session-'.length) : undefined);

/** Agent sessions, for the session list (`metadata_filter`, status) and the crash sweep. */
export const sessionsProjection: ReadModelProjection = {
  name: 'agent_sessions',
  // 2: rows hold `replay_of` (issue 45); 3: `forked_from` and `agent_revision` (issue 48: shown by the console).
  version: 3,
  target: 'read',
  eventTypes: ['SessionCreated', 'SessionUpdated', 'SessionDeleted', 'SessionTurnStarted', 'SessionTurnEnded', 'SessionStepTransitioned', 'AgentDeleted'],
  collections: [{ name: SESSIONS, indexes: [{ fields: ['agent_id', 'key'] }, { fields: ['agent_id', 'name'] }, { fields: ['status'] }, { fields: ['agent_id', 'end_user'] }, { fields: ['agent_id', 'replay_of'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as SessionEvent | AgentEvent;
    if (event.type === 'AgentDeleted') return [{ op: 'deleteWhere', collection: SESSIONS, where: [{ field: 'agent_id', op: 'eq', value: event.data.agentId }] }];
    if (event.type === 'SessionCreated') return [put(SESSIONS, sessionRow(event.data))];
    const id = rowIdOf(recorded.streamId);
    if (!id) return [];
    switch (event.type) {
      case 'SessionUpdated': {
        const c = event.data.changes;
        const set: Record<string, unknown> = { updated_at: event.data.updatedAt };
        if (c.name !== undefined) set.name = c.name;
        if (c.description !== undefined) set.description = c.description;
        if (c.metadata !== undefined) set.metadata = c.metadata;
        if (c.enabled !== undefined) set.enabled = c.enabled;
        if (c.ttiMinutes !== undefined) set.tti_minutes = c.ttiMinutes;
        if (event.data.secrets) set.secret_names = event.data.secrets.names;
        return [patch(SESSIONS, id, { set })];
      }
      case 'SessionDeleted':
        return [remove(SESSIONS, id)];
      case 'SessionTurnStarted':
        return [patch(SESSIONS, id, { set: { status: 'running', current_step_name: event.data.step, turn_id: event.data.turnId, holder: event.data.holder, updated_at: event.data.createdAt }, inc: { turns: 1 } })];
      case 'SessionStepTransitioned':
        return [patch(SESSIONS, id, { set: { current_step_name: event.data.toStep } })];
      case 'SessionTurnEnded': {
        const set: Record<string, unknown> = { status: 'stopped', turn_id: null, holder: null, updated_at: event.data.createdAt };
        if (event.data.nextStep) set.current_step_name = event.data.nextStep;
        return [patch(SESSIONS, id, { set, inc: { input_tokens: event.data.usage.input_tokens, output_tokens: event.data.usage.output_tokens } })];
      }
      default:
        return [];
    }
  },
};
