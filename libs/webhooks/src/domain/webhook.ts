import { assertNever, conflict, invalid, notFound } from '@lib/platform/kernel';

/** The event types a webhook may subscribe to (docs/webhooks.md); a fixed list, each read from the log by its source's type string. */
export const WEBHOOK_EVENT_TYPES = ['session.approval_requested', 'session.turn_completed', 'session.turn_failed', 'pipeline_run.completed', 'pipeline_run.failed', 'schedule_execution.failed', 'alias.canary_decided'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** Event types that concern one agent's sessions: `agent_keys` narrows these and only these. */
export const SESSION_EVENT_TYPES: readonly WebhookEventType[] = ['session.approval_requested', 'session.turn_completed', 'session.turn_failed'];

export interface WebhookSettings {
  readonly url: string;
  readonly eventTypes: readonly WebhookEventType[];
  readonly description: string;
  /** Session events only from these agents; null: every agent's. */
  readonly agentKeys: readonly string[] | null;
  readonly enabled: boolean;
}

/**
 * Stream `webhook-<id>`. `sealed` is the SecretBox output over `{secret}`, bound to the webhook id: the signing
 * secret is never in an event in clear. `WebhookDisabled` is the service's own (repeated failure); a PATCH that
 * disables or enables is a `WebhookUpdated`.
 */
export type WebhookEvent =
  | { type: 'WebhookCreated'; data: { webhookId: string; settings: WebhookSettings; sealed: Readonly<Record<string, unknown>>; createdAt: string } }
  | { type: 'WebhookUpdated'; data: { webhookId: string; settings: WebhookSettings; updatedAt: string } }
  | { type: 'WebhookDisabled'; data: { webhookId: string; reason: string; failingSince: string; disabledAt: string } }
  | { type: 'WebhookDeleted'; data: { webhookId: string; deletedAt: string } };

/** Every type of a webhook's own stream (a Record over the union: a new type must be listed here to compile). */
const WEBHOOK_STREAM_TYPE_SET: Record<WebhookEvent['type'], true> = { WebhookCreated: true, WebhookUpdated: true, WebhookDisabled: true, WebhookDeleted: true };
export const WEBHOOK_STREAM_EVENT_TYPES = Object.keys(WEBHOOK_STREAM_TYPE_SET) as readonly WebhookEvent['type'][];

export type WebhookState =
  | { readonly status: 'absent' }
  | { readonly status: 'active'; readonly webhookId: string; readonly settings: WebhookSettings; readonly sealed: Readonly<Record<string, unknown>>; readonly disabledReason: string | null }
  | { readonly status: 'deleted' };

export const webhookFold = {
  initialState: { status: 'absent' } as WebhookState,
  evolve(state: WebhookState, event: WebhookEvent): WebhookState {
    switch (event.type) {
      case 'WebhookCreated':
        return { status: 'active', webhookId: event.data.webhookId, settings: event.data.settings, sealed: event.data.sealed, disabledReason: null };
      case 'WebhookUpdated':
        return state.status === 'active' ? { ...state, settings: event.data.settings, disabledReason: event.data.settings.enabled ? null : state.disabledReason } : state;
      case 'WebhookDisabled':
        return state.status === 'active' ? { ...state, settings: { ...state.settings, enabled: false }, disabledReason: event.data.reason } : state;
      case 'WebhookDeleted':
        return { status: 'deleted' };
      default:
        return assertNever(event);
    }
  },
};

export const webhookNotFound = (id: string) => notFound('webhook.not_found', `Webhook "${id}" not found`, id);
export const invalidWebhook = (field: string, reason: string) => invalid('webhook.invalid', `Invalid ${field}: ${reason}`, { [field]: reason });

/** What is wrong with a webhook's URL or event types, checked before any policy lookup. */
export function settingsProblem(settings: Pick<WebhookSettings, 'url' | 'eventTypes'>): [string, string] | undefined {
  let url: URL;
  try {
    url = new URL(settings.url);
  } catch {
    return ['url', 'must be an absolute http or https URL'];
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return ['url', 'must be an absolute http or https URL'];
  if (url.username || url.password) return ['url', 'must not carry credentials; the signature authenticates the sender'];
  if (settings.eventTypes.length === 0) return ['event_types', 'must name at least one event type'];
  const unknown = settings.eventTypes.find((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
  if (unknown !== undefined) return ['event_types', `"${unknown}" is not one of ${WEBHOOK_EVENT_TYPES.join(', ')}`];
  return undefined;
}

export function decideCreateWebhook(state: WebhookState, webhookId: string, settings: WebhookSettings, sealed: Readonly<Record<string, unknown>>, now: Date): WebhookEvent[] {
  if (state.status !== 'absent') throw conflict('webhook.exists', `Webhook "${webhookId}" already exists`);
  return [{ type: 'WebhookCreated', data: { webhookId, settings, sealed, createdAt: now.toISOString() } }];
}

export function decideUpdateWebhook(state: WebhookState, webhookId: string, change: (old: WebhookSettings) => WebhookSettings, now: Date): WebhookEvent[] {
  if (state.status !== 'active') throw webhookNotFound(webhookId);
  return [{ type: 'WebhookUpdated', data: { webhookId, settings: change(state.settings), updatedAt: now.toISOString() } }];
}

export function decideDeleteWebhook(state: WebhookState, webhookId: string, now: Date): WebhookEvent[] {
  if (state.status !== 'active') throw webhookNotFound(webhookId);
  return [{ type: 'WebhookDeleted', data: { webhookId, deletedAt: now.toISOString() } }];
}

/** Disabling twice adds nothing: two workers giving up at once record one. */
export function decideDisableWebhook(state: WebhookState, webhookId: string, reason: string, failingSince: string, now: Date): WebhookEvent[] {
  if (state.status !== 'active' || !state.settings.enabled) return [];
  return [{ type: 'WebhookDisabled', data: { webhookId, reason, failingSince, disabledAt: now.toISOString() } }];
}
