import type { AgentEvent } from '@lib/agents/events';
import { agentChanges, agentRow, AGENTS } from '@lib/agents/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** Agents, for `/v2/agents` and for the checks that need to know which agent uses what. */
export const agentsProjection: ReadModelProjection = {
  name: 'agents',
  // 2: rows record the tool configurations they refer to.
  version: 2,
  target: 'read',
  eventTypes: ['AgentCreated', 'AgentUpdated', 'AgentDeleted'],
  collections: [{ name: AGENTS, indexes: [{ fields: ['name'] }, { fields: ['instruction_ids'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as AgentEvent;
    switch (event.type) {
      case 'AgentCreated':
        return [put(AGENTS, agentRow(event.data, recorded.position))];
      case 'AgentUpdated':
        return [patch(AGENTS, event.data.agentKey, { set: agentChanges(event.data, recorded.position) })];
      case 'AgentDeleted':
        return [remove(AGENTS, event.data.agentKey)];
      default:
        return assertNever(event);
    }
  },
};
