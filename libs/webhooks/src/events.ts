/**
 * The events entry of the webhooks context (`@lib/webhooks/events`): the event types of its streams. Domain code
 * only.
 */
export type { WebhookEvent, WebhookSettings, WebhookEventType } from './domain/webhook';
export type { WebhookDeliveryEvent, WebhookPayload } from './domain/delivery';
export type { WebhookDispatchEvent } from './domain/source-events';
export { WEBHOOK_EVENT_TYPES } from './domain/webhook';
