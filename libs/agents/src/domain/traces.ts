import { createHash } from 'node:crypto';

/**
 * Agent traces (the reference's agent_analytics): one trace per turn of a session, its spans derived from the
 * session's events (docs/traces.md). Ids are hashes of what the log already names (stream, turn, event, tool
 * call), so a rebuild of the projection gives every trace and span the id it had.
 */

const hex = (text: string, length: number): string => createHash('sha256').update(text).digest('hex').slice(0, length);

/** 32 hex digits, as a W3C trace id: the session stream and the turn. */
export const traceIdOf = (streamId: string, turnId: string): string => hex(`trace|${streamId}|${turnId}`, 32);

/** 16 hex digits, as a W3C span id: the trace (or stream, for tool calls that outlive their turn) and what made it. */
export const spanIdOf = (...parts: readonly string[]): string => hex(`span|${parts.join('|')}`, 16);

/** The tool call's span: keyed by the stream and call id, so its output lands on it even from a later turn (approvals). */
export const toolSpanIdOf = (streamId: string, toolCallId: string): string => spanIdOf(streamId, 'tool', toolCallId);

/** A short key for a free-form name used as a field name of the trace row (no dots, any length). */
export const flagKey = (name: string): string => hex(`flag|${name}`, 16);

export const TRACE_OPERATIONS = ['invoke_agent', 'chat', 'execute_tool', 'thinking', 'output', 'guardrail', 'step_transition', 'image_read', 'compaction'] as const;
export type TraceOperation = (typeof TRACE_OPERATIONS)[number];

export const TRACE_ERROR_TYPES = ['context_limit_exceeded', 'step_transition_limit_exceeded', 'actions_limit_reached', 'llm_generation_error', 'stream_error', 'internal'] as const;
export type TraceErrorType = (typeof TRACE_ERROR_TYPES)[number];

export const TOOL_ERROR_TYPES = ['invalid_input', 'not_found', 'invalid_configuration', 'timeout', 'execution_error', 'dependency_failed'] as const;
export type ToolErrorType = (typeof TOOL_ERROR_TYPES)[number];

/**
 * Why a failed turn failed, from the message its end recorded: the language-model layer's errors name the model
 * (`LLM "m" …`, `Unknown model "m"`, `Model "m" is disabled`); anything else failed inside the service.
 */
export function failureType(error: string | undefined): TraceErrorType {
  return error && /^(LLM "|Unknown model "|Model ")/.test(error) ? 'llm_generation_error' : 'internal';
}

/** The error type of a limit the turn reached: a context limit has the size it measured, the model-call cap has none. */
export function limitType(limit: 'step_transition' | 'context', actual: number | undefined): TraceErrorType {
  if (limit === 'step_transition') return 'step_transition_limit_exceeded';
  return actual === undefined ? 'actions_limit_reached' : 'context_limit_exceeded';
}

/** One row per turn (read model `agent_traces`). Flags are `<group>.<flagKey>: true` for the span-level filters. */
export type TraceRow = {
  readonly id: string;
  readonly agent_id: string;
  readonly session_key: string;
  readonly stream_id: string;
  readonly turn_id: string;
  readonly step: string;
  readonly started_at: string;
  readonly started_ms: number;
  /** The log position of the turn's start: the list's order (times of turns in the same millisecond tie). */
  readonly started_seq: number;
  readonly ended: boolean;
  readonly ended_at?: string;
  readonly ended_ms?: number;
  readonly status?: 'ok' | 'error';
  readonly outcome?: string;
  readonly error?: string;
  readonly input_tokens?: number;
  readonly output_tokens?: number;
  readonly ops?: Readonly<Record<string, boolean>>;
  readonly tools?: Readonly<Record<string, boolean>>;
  readonly error_types?: Readonly<Record<string, boolean>>;
  readonly tool_errors?: Readonly<Record<string, boolean>>;
};

/** What one event recorded towards the spans of a trace (read model `agent_trace_spans`): one row per such event. */
export type TracePartRow = {
  readonly id: string;
  readonly trace_id: string;
  readonly agent_id: string;
  readonly stream_id: string;
  /** The log position of the event that wrote it: the order of the trace. */
  readonly seq: number;
  readonly at: string;
} & (
  | { readonly kind: 'turn'; readonly step: string; readonly ended_at?: string; readonly outcome?: string; readonly error?: string; readonly input_tokens?: number; readonly output_tokens?: number }
  | {
      readonly kind: 'tool';
      readonly step: string;
      readonly model_call_id: string;
      readonly tool_call_id: string;
      readonly tool_key: string;
      readonly tool_type: string;
      readonly input_event_id: string;
      readonly arguments: string;
      readonly ended_at?: string;
      readonly error?: boolean;
      readonly error_message?: string;
      readonly output_event_id?: string;
      readonly result?: string;
      /** The tokens of the model answer that asked for the call (events stored before they were recorded: none). */
      readonly input_tokens?: number;
      readonly output_tokens?: number;
    }
  | { readonly kind: 'answer'; readonly step: string; readonly event_id: string; readonly text: string; readonly structured: boolean; readonly input_tokens?: number; readonly output_tokens?: number }
  | { readonly kind: 'thinking'; readonly event_id: string; readonly text: string }
  | { readonly kind: 'transition'; readonly event_id: string; readonly from_step: string; readonly to_step: string }
  | { readonly kind: 'limit'; readonly event_id: string; readonly message: string }
  | { readonly kind: 'compaction_started'; readonly event_id: string }
  | {
      readonly kind: 'compacted';
      readonly event_id: string;
      readonly turns_compacted: number;
      readonly events_compacted: number;
      readonly summary_key: string;
      /** Since issue 46: the compaction's pieces (calls, and summaries cut without one), its model calls and their tokens. */
      readonly pieces?: number;
      readonly calls?: number;
      readonly input_tokens?: number;
      readonly output_tokens?: number;
    }
  | { readonly kind: 'image_read'; readonly event_id: string; readonly artifact_id: string; readonly detail: string }
  | { readonly kind: 'guardrail'; readonly event_id: string; readonly guardrail: string; readonly guardrail_type: string; readonly on: string; readonly action: string; readonly score?: number; readonly reason: string; readonly tool_call_id?: string }
);

/** Text kept for `include_content`: tool arguments, results and answers beyond this are cut (the session's events hold them whole). */
export const CONTENT_LIMIT = 8000;
export const clip = (text: string): string => (text.length > CONTENT_LIMIT ? `${text.slice(0, CONTENT_LIMIT)}…` : text);
