import { assertNever } from '@lib/platform/kernel';
import type { ConnectorType } from './connector';

/** Attempts to deliver one reply before it is reported as lost (`ConnectorReplyFailed` with `retryAt: null`). */
export const CONNECTOR_REPLY_ATTEMPTS = 5;

interface MessageIds {
  readonly agentId: string;
  readonly agentKey: string;
  readonly connectorId: string;
  /** The platform's id of the delivery (Slack channel+ts, a Chat message name, a Zoom message id). */
  readonly deliveryId: string;
}

/**
 * One inbound message and its reply, stream `connector_message-<connector id>.<hash of delivery id>`: the
 * stream's existence is what makes a platform's retry of the same delivery add nothing.
 */
export type ConnectorMessageEvent =
  /** `replyTo`: where the answer goes (Slack channel and thread, Chat space and thread, Zoom engagement). */
  | { type: 'ConnectorMessageReceived'; data: MessageIds & { type: ConnectorType; conversation: string; sessionKey: string; text: string; replyTo: Readonly<Record<string, string>>; receivedAt: string } }
  /** The agent's answer to post (`turnFailed`: the turn failed and the text says so to the channel). */
  | { type: 'ConnectorAnswered'; data: MessageIds & { sessionKey: string; text: string; turnFailed: boolean; answeredAt: string } }
  | { type: 'ConnectorReplyDelivered'; data: MessageIds & { attempt: number; deliveredAt: string } }
  /** `retryAt` null: no attempts left; the reply is reported lost. */
  | { type: 'ConnectorReplyFailed'; data: MessageIds & { attempt: number; error: string; retryAt: string | null; failedAt: string } };

export type ConnectorMessageState =
  | { readonly status: 'absent' }
  | {
      readonly status: 'received';
      readonly received: Extract<ConnectorMessageEvent, { type: 'ConnectorMessageReceived' }>['data'];
      readonly answer?: string;
      readonly attempts: number;
      readonly retryAt?: string;
      readonly done: boolean;
    };

export const connectorMessageFold = {
  initialState: { status: 'absent' } as ConnectorMessageState,
  evolve(state: ConnectorMessageState, event: ConnectorMessageEvent): ConnectorMessageState {
    switch (event.type) {
      case 'ConnectorMessageReceived':
        return state.status === 'absent' ? { status: 'received', received: event.data, attempts: 0, done: false } : state;
      case 'ConnectorAnswered':
        return state.status === 'received' ? { ...state, answer: event.data.text } : state;
      case 'ConnectorReplyDelivered':
        return state.status === 'received' ? { ...state, attempts: event.data.attempt, done: true } : state;
      case 'ConnectorReplyFailed':
        return state.status === 'received' ? { ...state, attempts: event.data.attempt, retryAt: event.data.retryAt ?? undefined, done: event.data.retryAt === null } : state;
      default:
        return assertNever(event);
    }
  },
};

/** A delivery the platform sends again is already here: nothing is added. */
export function decideReceive(state: ConnectorMessageState, received: Extract<ConnectorMessageEvent, { type: 'ConnectorMessageReceived' }>['data']): ConnectorMessageEvent[] {
  return state.status === 'absent' ? [{ type: 'ConnectorMessageReceived', data: received }] : [];
}

export function decideAnswer(state: ConnectorMessageState, sessionKey: string, text: string, turnFailed: boolean, now: Date): ConnectorMessageEvent[] {
  if (state.status !== 'received' || state.answer !== undefined) return [];
  const { agentId, agentKey, connectorId, deliveryId } = state.received;
  return [{ type: 'ConnectorAnswered', data: { agentId, agentKey, connectorId, deliveryId, sessionKey, text, turnFailed, answeredAt: now.toISOString() } }];
}

/** Backoff doubles from `baseMs` per failed attempt; after the last attempt the failure is final. */
export function decideDelivery(state: ConnectorMessageState, attempt: number, outcome: { ok: true } | { ok: false; error: string }, baseMs: number, now: Date): ConnectorMessageEvent[] {
  if (state.status !== 'received' || state.done || state.attempts >= attempt) return [];
  const { agentId, agentKey, connectorId, deliveryId } = state.received;
  if (outcome.ok) return [{ type: 'ConnectorReplyDelivered', data: { agentId, agentKey, connectorId, deliveryId, attempt, deliveredAt: now.toISOString() } }];
  const retryAt = attempt >= CONNECTOR_REPLY_ATTEMPTS ? null : new Date(now.getTime() + baseMs * 2 ** (attempt - 1)).toISOString();
  return [{ type: 'ConnectorReplyFailed', data: { agentId, agentKey, connectorId, deliveryId, attempt, error: outcome.error.slice(0, 500), retryAt, failedAt: now.toISOString() } }];
}
