import type { SessionEvent } from './session-events';

/**
 * The guardrail that blocked the session's latest input, if one did: that input's turn answers a refusal without a
 * model call. Read from the events (the `guardrail_triggered` stored right after the input), so a turn started in
 * another process, or after a restart, decides the same.
 */
export function inputBlockedBy(events: readonly SessionEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type !== 'SessionInputReceived') continue;
    const block = events.slice(i + 1).find((g) => g.type === 'SessionGuardrailTriggered' && g.data.subjectEventId === e.data.eventId && g.data.action === 'block');
    return block?.type === 'SessionGuardrailTriggered' ? block.data.guardrail : undefined;
  }
  return undefined;
}
