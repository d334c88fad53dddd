import type { WebhookPayload } from './delivery';
import type { WebhookEventType } from './webhook';

/**
 * What webhooks hear, read from the log by the other contexts' stored type strings and field names (their
 * stored contract, never renamed: CONVENTIONS §2). libs/webhooks imports no other context: the shapes below are
 * the few fields it reads, declared here.
 */
export const SOURCE_EVENT_TYPES = ['SessionTurnEnded', 'SessionToolApprovalRequested', 'PipelineRunEnded', 'ScheduleAttempted', 'AliasCanaryDecided'] as const;

/** Stream `webhook_dispatch-log`: how far the dispatch has turned source events into deliveries (a replay from it is idempotent). */
export type WebhookDispatchEvent = { type: 'WebhookDispatchAdvanced'; data: { position: number; at: string } };

/** libs/schedules' SCHEDULE_MAX_ATTEMPTS: an execution failed for good at its last attempt. */
export const SCHEDULE_ATTEMPTS = 3;

/** A source event as read from the log. */
export interface SourceEvent {
  readonly id: string;
  readonly type: string;
  readonly streamId: string;
  readonly data: unknown;
  readonly recordedAt: string;
}

/** The first event of a session or pipeline-run stream, where the keys the later events leave out are. */
export interface StreamOrigin {
  readonly type: string;
  readonly data: unknown;
}

type Fields = Readonly<Record<string, unknown>>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** The webhook event type a source event is, from the event alone; undefined for one no webhook hears. */
export function webhookTypeOf(event: Pick<SourceEvent, 'type' | 'data'>): WebhookEventType | undefined {
  const d = (event.data ?? {}) as Fields;
  switch (event.type) {
    case 'SessionToolApprovalRequested':
      return 'session.approval_requested';
    case 'SessionTurnEnded':
      // `interrupted` was asked for and `client_tool` waits on the caller: neither ends the turn's work.
      if (d.outcome === 'answered') return 'session.turn_completed';
      if (d.outcome === 'failed' || d.outcome === 'limit') return 'session.turn_failed';
      return undefined;
    case 'PipelineRunEnded':
      if (d.status === 'completed') return 'pipeline_run.completed';
      if (d.status === 'failed') return 'pipeline_run.failed';
      return undefined;
    case 'ScheduleAttempted':
      return d.status === 'error' && (num(d.attempt) ?? 0) >= SCHEDULE_ATTEMPTS ? 'schedule_execution.failed' : undefined;
    case 'AliasCanaryDecided':
      return 'alias.canary_decided';
    default:
      return undefined;
  }
}

/** Session and pipeline-run events name their agent, session or pipeline only in their stream's first event. */
export const needsOrigin = (type: WebhookEventType): boolean => type.startsWith('session.') || type.startsWith('pipeline_run.');

/** A message ready to schedule: its body, and the agent it concerns (for `agent_keys`). */
export interface WebhookMessage {
  readonly agentKey: string | null;
  readonly payload: WebhookPayload;
}

/**
 * The body of the webhook a source event makes: small, ids and outcomes a receiver acts on (it reads the rest
 * through the API), never a secret (tool arguments are left out even masked; errors are the ones the API shows).
 * Undefined when the event is not one webhooks hear or its origin is missing.
 */
export function webhookMessage(event: SourceEvent, origin: StreamOrigin | undefined): WebhookMessage | undefined {
  const type = webhookTypeOf(event);
  if (!type) return undefined;
  const d = (event.data ?? {}) as Fields;
  const o = (origin?.data ?? {}) as Fields;
  if (needsOrigin(type) && !origin) return undefined;
  // A replay's turns re-run recorded ones (docs/replay.md): no news for a receiver, and a webhook is a side effect.
  if (o.replayOf) return undefined;
  const message = (agentKey: string | null, timestamp: unknown, data: Record<string, unknown>): WebhookMessage => ({ agentKey, payload: { type, timestamp: str(timestamp) ?? event.recordedAt, data } });
  switch (type) {
    case 'session.approval_requested':
      return message(str(o.agentKey), d.createdAt, {
        agent_key: str(o.agentKey),
        session_key: str(o.sessionKey),
        event_id: str(d.eventId),
        turn_id: str(d.turnId),
        tool_call_id: str(d.toolCallId),
        tool_name: str(d.toolName),
        tool_configuration_name: str(d.toolConfigurationName),
        expires_at: str(d.expiresAt),
      });
    case 'session.turn_completed':
    case 'session.turn_failed':
      return message(str(o.agentKey), d.createdAt, {
        agent_key: str(o.agentKey),
        session_key: str(o.sessionKey),
        turn_id: str(d.turnId),
        outcome: str(d.outcome),
        ...(type === 'session.turn_failed' ? { error: str(d.error) } : {}),
      });
    case 'pipeline_run.completed':
    case 'pipeline_run.failed': {
      const counts = (d.counts ?? {}) as Fields;
      return message(str(o.agentKey), d.endedAt, {
        pipeline_key: str(o.pipelineKey),
        run_id: str(d.runId),
        agent_key: str(o.agentKey),
        trigger_type: str(o.triggerType),
        status: str(d.status),
        counts: { fetched: num(counts.fetched), processed: num(counts.processed), failed: num(counts.failed) },
        ...(type === 'pipeline_run.failed' ? { error: str(d.error) } : {}),
      });
    }
    case 'schedule_execution.failed':
      return message(str(d.agentKey), d.executedAt, {
        agent_key: str(d.agentKey),
        schedule_key: str(d.key),
        workflow_run_id: str(d.runId),
        attempt: num(d.attempt),
        session_key: str(d.sessionKey),
        error_message: str(d.errorMessage),
      });
    case 'alias.canary_decided': {
      // libs/aliases' AliasCanaryDecided: the decision and the figures it was made on (means, sessions, interval).
      const settings = (d.settings ?? {}) as Fields;
      return message(str(settings.candidateAgentKey), d.decidedAt, {
        alias_key: str(d.key),
        canary_id: str(d.canaryId),
        decision: str(d.decision),
        reason: str(d.reason),
        candidate_agent_key: str(settings.candidateAgentKey),
        control_agent_key: str(settings.controlAgentKey),
        figures: d.figures ?? null,
      });
    }
    default: {
      const _exhaustive: never = type;
      return _exhaustive;
    }
  }
}

/** Whether a webhook hears a message: its type subscribed, and for session events its agent listed (or none listed). */
export function hears(webhook: { readonly eventTypes: readonly string[]; readonly agentKeys: readonly string[] | null }, message: WebhookMessage): boolean {
  if (!webhook.eventTypes.includes(message.payload.type)) return false;
  if (!webhook.agentKeys || !message.payload.type.startsWith('session.')) return true;
  return message.agentKey !== null && webhook.agentKeys.includes(message.agentKey);
}
