/**
 * Where a running turn reports as it goes: the streaming response (SSE) or nothing for a plain JSON answer.
 * `id`, where given, is the item's place in the session's stream (a stored event's revision, else
 * `<revision>.<n>`: live-turns.ts), sent as the SSE `id:` so a client can re-attach after it with `Last-Event-ID`.
 */
export interface TurnSink {
  /** An API event, once stored. */
  event(view: Record<string, unknown>, id?: string): void;
  /** A piece of the answer text as the model streams it (not stored: the stored answer is their concatenation). */
  delta(text: string, id?: string): void;
  /** The answer whose pieces were streamed is stored as `eventId` (absent when the answer was tool calls). */
  deltaEnd(eventId: string | undefined, id?: string): void;
  /** Tokens used by the turn so far, after each model call. */
  contextConsumed(usage: { input_tokens: number; output_tokens: number; model_context_window?: number }, id?: string): void;
  compactionStarted(view: Record<string, unknown>, id?: string): void;
  /** A tool's activity while it runs (a sub-agent's events): streamed only, never stored in this session. */
  activity?(event: Record<string, unknown>, id?: string): void;
  /** The turn knows the session's stream up to this revision (its own appends and what it caught up on, shown or not). */
  reached?(revision: number): void;
}

export const NO_SINK: TurnSink = { event: () => undefined, delta: () => undefined, deltaEnd: () => undefined, contextConsumed: () => undefined, compactionStarted: () => undefined };
