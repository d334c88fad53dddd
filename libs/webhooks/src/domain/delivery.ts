import { createHash } from 'node:crypto';
import { assertNever, notFound } from '@lib/platform/kernel';
import type { WebhookEventType } from './webhook';

/** The body of every delivery (Standard Webhooks): `timestamp` is when the source event happened, the same on every attempt. */
export interface WebhookPayload {
  readonly type: WebhookEventType;
  readonly timestamp: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * When attempts are made (docs/webhooks.md, "Retries"): after the n-th failed attempt the next waits
 * `baseMs × 6^(n−1)`, at most `capMs`, times a jitter factor in [0.8, 1.2); a delivery still failing `giveUpAfterMs`
 * after it was scheduled (or last redelivered) is given up.
 */
export interface RetryPolicy {
  readonly baseMs: number;
  readonly capMs: number;
  readonly giveUpAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseMs: 5_000, capMs: 10 * 3600_000, giveUpAfterMs: 3 * 24 * 3600_000 };

/** `jitter` in [0, 1): the caller's random draw (an input, so tests are exact). */
export function retryDelayMs(failedAttempts: number, policy: RetryPolicy, jitter: number): number {
  const raw = Math.min(policy.baseMs * 6 ** Math.max(0, failedAttempts - 1), policy.capMs);
  return Math.round(raw * (0.8 + 0.4 * jitter));
}

const digest = (webhookId: string, sourceEventId: string) => createHash('sha256').update(`${webhookId}|${sourceEventId}`).digest('base64url').slice(0, 27);
/** The delivery of one source event to one webhook: the same ids whichever worker schedules it, however often. */
export const deliveryIdOf = (webhookId: string, sourceEventId: string) => `whd_${digest(webhookId, sourceEventId)}`;
/** The `webhook-id` header: the same on every attempt and redelivery, so a receiver can drop duplicates. */
export const messageIdOf = (webhookId: string, sourceEventId: string) => `msg_${digest(webhookId, sourceEventId)}`;

interface DeliveryIds {
  readonly deliveryId: string;
  readonly webhookId: string;
}

export type WebhookDeliveryScheduledData = DeliveryIds & {
  messageId: string;
  sourceEventId: string;
  sourcePosition: number;
  payload: WebhookPayload;
  scheduledAt: string;
  /** The source event's W3C trace context (its metadata's, when tracing was on): the attempts continue that trace. */
  traceparent?: string;
};

/** Stream `webhook_delivery-<delivery id>`: one source event's delivery to one webhook, every attempt in order. */
export type WebhookDeliveryEvent =
  | { type: 'WebhookDeliveryScheduled'; data: WebhookDeliveryScheduledData }
  /** `statusCode` null: no answer (refused, unreachable, timed out). `nextAttemptAt` null: delivered, or given up. */
  | { type: 'WebhookDeliveryAttempted'; data: DeliveryIds & { attempt: number; delivered: boolean; statusCode: number | null; error: string | null; durationMs: number; attemptedAt: string; nextAttemptAt: string | null } }
  | { type: 'WebhookRedeliveryRequested'; data: DeliveryIds & { requestedAt: string } };

export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed';

export type DeliveryState =
  | { readonly status: 'absent' }
  | {
      readonly status: DeliveryStatus;
      readonly scheduled: WebhookDeliveryScheduledData;
      readonly attempts: number;
      /** When the current round began (scheduling or the last redelivery): the give-up window counts from it. */
      readonly since: string;
      readonly dueAt: string | null;
      readonly firstFailureAt: string | null;
    };

export const deliveryFold = {
  initialState: { status: 'absent' } as DeliveryState,
  evolve(state: DeliveryState, event: WebhookDeliveryEvent): DeliveryState {
    switch (event.type) {
      case 'WebhookDeliveryScheduled':
        return state.status === 'absent' ? { status: 'pending', scheduled: event.data, attempts: 0, since: event.data.scheduledAt, dueAt: event.data.scheduledAt, firstFailureAt: null } : state;
      case 'WebhookDeliveryAttempted': {
        if (state.status === 'absent') return state;
        const d = event.data;
        const status: DeliveryStatus = d.delivered ? 'delivered' : d.nextAttemptAt ? 'retrying' : 'failed';
        return { ...state, status, attempts: d.attempt, dueAt: d.nextAttemptAt, firstFailureAt: d.delivered ? null : (state.firstFailureAt ?? d.attemptedAt) };
      }
      case 'WebhookRedeliveryRequested':
        return state.status === 'absent' ? state : { ...state, status: state.status === 'retrying' ? 'retrying' : 'pending', since: event.data.requestedAt, dueAt: event.data.requestedAt, firstFailureAt: null };
      default:
        return assertNever(event);
    }
  },
};

export const isOpen = (state: DeliveryState) => state.status === 'pending' || state.status === 'retrying';

export const deliveryNotFound = (webhookId: string, deliveryId: string) => notFound('webhook.delivery_not_found', `Webhook "${webhookId}" has no delivery "${deliveryId}"`, deliveryId);

/** Scheduling again (another worker, a replay after a crash) adds nothing. */
export function decideSchedule(state: DeliveryState, scheduled: WebhookDeliveryScheduledData): WebhookDeliveryEvent[] {
  return state.status === 'absent' ? [{ type: 'WebhookDeliveryScheduled', data: scheduled }] : [];
}

export type AttemptOutcome = { readonly delivered: true; readonly statusCode: number; readonly durationMs: number } | { readonly delivered: false; readonly statusCode: number | null; readonly error: string; readonly durationMs: number };

/**
 * Records attempt number `attempt`; an attempt already recorded (another worker's, before a lease was lost) adds
 * nothing. A failure schedules the next attempt, or gives up once the next would fall past the give-up window.
 */
export function decideAttempt(state: DeliveryState, attempt: number, outcome: AttemptOutcome, policy: RetryPolicy, jitter: number, now: Date): WebhookDeliveryEvent[] {
  if (state.status === 'absent' || !isOpen(state) || state.attempts >= attempt) return [];
  const ids = { deliveryId: state.scheduled.deliveryId, webhookId: state.scheduled.webhookId };
  const base = { ...ids, attempt, statusCode: outcome.statusCode, durationMs: outcome.durationMs, attemptedAt: now.toISOString() };
  if (outcome.delivered) return [{ type: 'WebhookDeliveryAttempted', data: { ...base, delivered: true, error: null, nextAttemptAt: null } }];
  const next = now.getTime() + retryDelayMs(attempt, policy, jitter);
  const giveUp = next - Date.parse(state.since) > policy.giveUpAfterMs;
  return [{ type: 'WebhookDeliveryAttempted', data: { ...base, delivered: false, error: outcome.error.slice(0, 500), nextAttemptAt: giveUp ? null : new Date(next).toISOString() } }];
}

/** A redelivery is due now, with the same `webhook-id`; the give-up window starts again. */
export function decideRedeliver(state: DeliveryState, webhookId: string, deliveryId: string, now: Date): WebhookDeliveryEvent[] {
  if (state.status === 'absent' || state.scheduled.webhookId !== webhookId) throw deliveryNotFound(webhookId, deliveryId);
  return [{ type: 'WebhookRedeliveryRequested', data: { deliveryId, webhookId, requestedAt: now.toISOString() } }];
}
