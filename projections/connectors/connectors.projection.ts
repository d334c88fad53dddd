import type { AgentEvent } from '@lib/agents/events';
import type { ConnectorEvent, ConnectorMessageEvent } from '@lib/connectors/events';
import { CONNECTOR_DELIVERIES, CONNECTORS } from '@lib/connectors/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/**
 * Agent connectors and their open deliveries (docs/connectors.md). A delivery row is open until its reply is
 * delivered or given up; rows of a deleted connector or agent go with it.
 */
export const connectorsProjection: ReadModelProjection = {
  name: 'agent_connectors',
  version: 1,
  target: 'read',
  eventTypes: ['ConnectorCreated', 'ConnectorUpdated', 'ConnectorDeleted', 'ConnectorMessageReceived', 'ConnectorAnswered', 'ConnectorReplyDelivered', 'ConnectorReplyFailed', 'AgentDeleted'],
  collections: [
    { name: CONNECTORS, indexes: [{ fields: ['agent_id'] }, { fields: ['agent_key'] }] },
    { name: CONNECTOR_DELIVERIES, indexes: [{ fields: ['open', 'due_at'] }, { fields: ['agent_id'] }, { fields: ['connector_id'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as ConnectorEvent | ConnectorMessageEvent | AgentEvent;
    switch (event.type) {
      case 'AgentCreated':
      case 'AgentUpdated':
      case 'ConnectorAnswered':
        return [];
      case 'AgentDeleted': {
        const where = [{ field: 'agent_id', op: 'eq' as const, value: event.data.agentId }];
        return [
          { op: 'deleteWhere', collection: CONNECTORS, where },
          { op: 'deleteWhere', collection: CONNECTOR_DELIVERIES, where },
        ];
      }
      case 'ConnectorCreated': {
        const d = event.data;
        return [put(CONNECTORS, { id: d.connectorId, agent_id: d.agentId, agent_key: d.agentKey, type: d.settings.type, enabled: d.settings.enabled, settings: d.settings, created_at: d.createdAt, updated_at: d.createdAt, last_webhook_at: null })];
      }
      case 'ConnectorUpdated': {
        const d = event.data;
        return [patch(CONNECTORS, d.connectorId, { set: { enabled: d.settings.enabled, settings: d.settings, updated_at: d.updatedAt } })];
      }
      case 'ConnectorDeleted':
        return [remove(CONNECTORS, event.data.connectorId), { op: 'deleteWhere', collection: CONNECTOR_DELIVERIES, where: [{ field: 'connector_id', op: 'eq', value: event.data.connectorId }] }];
      case 'ConnectorMessageReceived': {
        const d = event.data;
        return [
          put(CONNECTOR_DELIVERIES, { id: recorded.streamId, agent_id: d.agentId, agent_key: d.agentKey, connector_id: d.connectorId, delivery_id: d.deliveryId, open: true, due_at: d.receivedAt }),
          patch(CONNECTORS, d.connectorId, { set: { last_webhook_at: d.receivedAt } }),
        ];
      }
      case 'ConnectorReplyDelivered':
        return [patch(CONNECTOR_DELIVERIES, recorded.streamId, { set: { open: false } })];
      case 'ConnectorReplyFailed': {
        const d = event.data;
        return [patch(CONNECTOR_DELIVERIES, recorded.streamId, { set: d.retryAt ? { due_at: d.retryAt } : { open: false } })];
      }
      default:
        return assertNever(event);
    }
  },
};
