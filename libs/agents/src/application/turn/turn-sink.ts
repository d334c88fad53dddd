/** Where a running turn reports as it goes: the streaming response (SSE) or nothing for a plain JSON answer. */
export interface TurnSink {
  /** An API event, once stored. */
  event(view: Record<string, unknown>): void;
  /** A piece of the answer text as the model streams it (not stored: the stored answer is their concatenation). */
  delta(text: string): void;
  /** The answer whose pieces were streamed is stored as `eventId` (absent when the answer was tool calls). */
  deltaEnd(eventId: string | undefined): void;
  /** Tokens used by the turn so far, after each model call. */
  contextConsumed(usage: { input_tokens: number; output_tokens: number; model_context_window?: number }): void;
  compactionStarted(view: Record<string, unknown>): void;
  /** A tool's activity while it runs (a sub-agent's events): streamed only, never stored in this session. */
  activity?(event: Record<string, unknown>): void;
}

export const NO_SINK: TurnSink = { event: () => undefined, delta: () => undefined, deltaEnd: () => undefined, contextConsumed: () => undefined, compactionStarted: () => undefined };
