import { collection } from '@lib/platform/projections';
import type { DeliveryStatus, WebhookPayload } from '../domain/delivery';
import type { WebhookEventType } from '../domain/webhook';

/** One row per webhook (projections/webhooks), keyed by its id. No secret, sealed or not. */
export type WebhookRow = {
  readonly id: string;
  readonly url: string;
  readonly description: string;
  readonly event_types: readonly WebhookEventType[];
  readonly agent_keys: readonly string[] | null;
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  /** The log position of its creation: it hears events after it, never earlier ones. */
  readonly from_position: number;
  readonly last_delivered_at: string | null;
  readonly created_at: string;
  readonly updated_at: string;
};

/** One row per delivery: what `GET /v2/webhooks/{id}/deliveries` shows, and what the deliverer's sweep reads. */
export type WebhookDeliveryRow = {
  readonly id: string;
  readonly webhook_id: string;
  readonly message_id: string;
  readonly event_type: WebhookEventType;
  readonly source_event_id: string;
  readonly payload: WebhookPayload;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly last_status_code: number | null;
  readonly last_error: string | null;
  readonly last_attempt_at: string | null;
  /** Open: pending or retrying; `due_at` is when the next attempt is. */
  readonly open: boolean;
  readonly due_at: string | null;
  readonly created_at: string;
};

export const WEBHOOKS = collection<WebhookRow>('webhooks');
export const WEBHOOK_DELIVERIES = collection<WebhookDeliveryRow>('webhook_deliveries');
/** The projection both collections belong to (what writes wait for). */
export const WEBHOOKS_PROJECTION = 'webhooks';

/** The signing secret is shown once, in the create answer; afterwards only that there is one. */
export const MASKED_SECRET = 'whsec_****';

export function webhookView(row: WebhookRow, secret?: string): Record<string, unknown> {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: row.event_types,
    ...(row.agent_keys ? { agent_keys: row.agent_keys } : {}),
    enabled: row.enabled,
    ...(row.disabled_reason && !row.enabled ? { disabled_reason: row.disabled_reason } : {}),
    secret: secret ?? MASKED_SECRET,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.last_delivered_at ? { last_delivered_at: row.last_delivered_at } : {}),
  };
}

export function deliveryView(row: WebhookDeliveryRow): Record<string, unknown> {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    webhook_message_id: row.message_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_response_code: row.last_status_code,
    ...(row.last_error ? { last_error: row.last_error } : {}),
    last_attempt_at: row.last_attempt_at,
    next_retry_at: row.open ? row.due_at : null,
    created_at: row.created_at,
    payload: row.payload,
  };
}
