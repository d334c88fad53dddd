import type { WebhookDeliveryEvent, WebhookEvent } from '@lib/webhooks/events';
import { WEBHOOK_DELIVERIES, WEBHOOKS, WEBHOOKS_PROJECTION } from '@lib/webhooks/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/**
 * Webhooks and their deliveries (docs/webhooks.md). A delivery row carries every field from its events (no
 * increments), so applying an event twice changes nothing; a deleted webhook's deliveries go with it.
 */
export const webhooksProjection: ReadModelProjection = {
  name: WEBHOOKS_PROJECTION,
  version: 1,
  target: 'read',
  eventTypes: ['WebhookCreated', 'WebhookUpdated', 'WebhookDisabled', 'WebhookDeleted', 'WebhookDeliveryScheduled', 'WebhookDeliveryAttempted', 'WebhookRedeliveryRequested'],
  collections: [
    { name: WEBHOOKS, indexes: [{ fields: ['enabled'] }, { fields: ['created_at'] }] },
    { name: WEBHOOK_DELIVERIES, indexes: [{ fields: ['open', 'due_at'] }, { fields: ['webhook_id', 'created_at'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as WebhookEvent | WebhookDeliveryEvent;
    switch (event.type) {
      case 'WebhookCreated': {
        const d = event.data;
        const s = d.settings;
        return [put(WEBHOOKS, { id: d.webhookId, url: s.url, description: s.description, event_types: s.eventTypes, agent_keys: s.agentKeys, enabled: s.enabled, disabled_reason: null, from_position: recorded.position, last_delivered_at: null, created_at: d.createdAt, updated_at: d.createdAt })];
      }
      case 'WebhookUpdated': {
        const s = event.data.settings;
        return [patch(WEBHOOKS, event.data.webhookId, { set: { url: s.url, description: s.description, event_types: s.eventTypes, agent_keys: s.agentKeys, enabled: s.enabled, ...(s.enabled ? { disabled_reason: null } : {}), updated_at: event.data.updatedAt } })];
      }
      case 'WebhookDisabled':
        return [patch(WEBHOOKS, event.data.webhookId, { set: { enabled: false, disabled_reason: event.data.reason, updated_at: event.data.disabledAt } })];
      case 'WebhookDeleted':
        return [remove(WEBHOOKS, event.data.webhookId), { op: 'deleteWhere', collection: WEBHOOK_DELIVERIES, where: [{ field: 'webhook_id', op: 'eq', value: event.data.webhookId }] }];
      case 'WebhookDeliveryScheduled': {
        const d = event.data;
        return [put(WEBHOOK_DELIVERIES, { id: d.deliveryId, webhook_id: d.webhookId, message_id: d.messageId, event_type: d.payload.type, source_event_id: d.sourceEventId, payload: d.payload, status: 'pending', attempts: 0, last_status_code: null, last_error: null, last_attempt_at: null, open: true, due_at: d.scheduledAt, created_at: d.scheduledAt })];
      }
      case 'WebhookDeliveryAttempted': {
        const d = event.data;
        const status = d.delivered ? 'delivered' : d.nextAttemptAt ? 'retrying' : 'failed';
        const ops: ReadOp[] = [patch(WEBHOOK_DELIVERIES, d.deliveryId, { set: { status, attempts: d.attempt, last_status_code: d.statusCode, last_error: d.error, last_attempt_at: d.attemptedAt, open: status === 'retrying', due_at: d.nextAttemptAt } })];
        if (d.delivered) ops.push(patch(WEBHOOKS, d.webhookId, { set: { last_delivered_at: d.attemptedAt } }));
        return ops;
      }
      case 'WebhookRedeliveryRequested': {
        const d = event.data;
        return [patch(WEBHOOK_DELIVERIES, d.deliveryId, { set: { status: 'pending', open: true, due_at: d.requestedAt } })];
      }
      default:
        return assertNever(event);
    }
  },
};
