import { failureType, spanIdOf, TracePartRow, TraceRow } from './traces';

/** The agent a trace ran, as the read side knows it now (the log records its configuration, not per turn). */
export interface TraceAgent {
  readonly key?: string;
  readonly name?: string;
  readonly description?: string;
  readonly model?: string;
  /** For a session a `sub_agent` tool created: its parent's agent and session, and how deep it is. */
  readonly parentAgentId?: string | null;
  readonly parentSessionKey?: string | null;
  readonly depth: number;
  /** The corpora each corpora_search tool configuration searches (by configuration key). */
  readonly toolCorpora?: Readonly<Record<string, readonly string[]>>;
}

export type SpanView = Record<string, unknown> & { readonly span_id: string; readonly parent_span_id: string | null; readonly operation: string };

type Part<K extends TracePartRow['kind']> = Extract<TracePartRow, { kind: K }>;

const ms = (iso: string): number => Date.parse(iso);
const between = (from: string, to: string | undefined): number | undefined => (to === undefined ? undefined : Math.max(0, ms(to) - ms(from)));

/**
 * The spans of one trace, from what its events recorded (in log order): the turn (`invoke_agent`), one `chat` per
 * model answer (the calls one answer made share a `modelCallId`; a text or structured answer is one too; a turn that
 * failed in the model layer ends with a failed one), the tool calls under the answer that made them, and the outputs,
 * thoughts, step transitions, compactions and image reads. A model call starts where the turn's previous work ended
 * (the turn's start, the last tool result, a compaction): the log records when answers arrive, not when calls left.
 */
export function traceSpans(trace: TraceRow, parts: readonly TracePartRow[], agent: TraceAgent, includeContent: boolean): SpanView[] {
  const root = parts.find((p): p is Part<'turn'> => p.kind === 'turn');
  const rootId = spanIdOf(trace.id, 'invoke');
  const spans: SpanView[] = [];
  const chats: SpanView[] = [];
  /** Chat spans whose answer recorded its own tokens (turns stored before that have only the turn's total). */
  let chatsWithTokens = 0;
  const chatOfCall = new Map<string, string>();
  const toolsOfCall = new Map<string, Part<'tool'>[]>();
  let boundary = trace.started_at;
  let compactionStart: string | undefined;
  const content = (value: Record<string, unknown>) => (includeContent ? { content: value } : {});
  const base = (id: string, parent: string | null, startedAt: string, endedAt: string | undefined, step: string | undefined, error?: string) => ({
    span_id: id,
    parent_span_id: parent,
    trace_id: trace.id,
    started_at: startedAt,
    ...(endedAt !== undefined ? { duration_ms: between(startedAt, endedAt) } : {}),
    status: error === undefined ? 'ok' : 'error',
    error_message: error ?? null,
    step_name: step ?? null,
    has_children: false,
  });
  const chat = (id: string, startedAt: string, endedAt: string, step: string | undefined, error?: string, tokens?: { input_tokens?: number; output_tokens?: number }): SpanView => {
    const recorded = tokens?.input_tokens !== undefined ? { input_tokens: tokens.input_tokens, output_tokens: tokens.output_tokens ?? 0 } : {};
    if (recorded.input_tokens !== undefined) chatsWithTokens += 1;
    const span = { ...base(id, rootId, startedAt, endedAt, step, error), operation: 'chat', attributes: { ...(agent.model ? { model: agent.model } : {}), ...recorded } };
    chats.push(span);
    spans.push(span);
    return span;
  };
  for (const part of parts) {
    switch (part.kind) {
      case 'turn':
        break;
      case 'tool': {
        let chatId = chatOfCall.get(part.model_call_id);
        if (!chatId) {
          chatId = spanIdOf(trace.id, 'chat', part.model_call_id);
          chatOfCall.set(part.model_call_id, chatId);
          chat(chatId, boundary, part.at, part.step, undefined, part);
        }
        toolsOfCall.set(part.model_call_id, [...(toolsOfCall.get(part.model_call_id) ?? []), part]);
        const done = toolsOfCall.get(part.model_call_id)!.map((t) => t.ended_at ?? t.at);
        boundary = done.reduce((a, b) => (ms(b) > ms(a) ? b : a), boundary);
        spans.push({
          ...base(part.id, chatId, part.at, part.ended_at, part.step, part.error ? (part.error_message ?? 'The tool call failed') : undefined),
          operation: 'execute_tool',
          attributes: {
            tool_name: part.tool_key,
            tool_key: part.tool_key,
            tool_call_id: part.tool_call_id,
            tool_type: part.tool_type,
            tool_input_event_id: part.input_event_id,
            ...(part.output_event_id ? { tool_output_event_id: part.output_event_id } : {}),
            ...(agent.toolCorpora?.[part.tool_key]?.length ? { corpus_keys: agent.toolCorpora[part.tool_key] } : {}),
          },
          ...content({ tool_arguments: part.arguments, ...(part.result !== undefined ? { tool_result: part.result } : {}) }),
        });
        break;
      }
      case 'answer':
        chat(spanIdOf(trace.id, 'chat', part.event_id), boundary, part.at, part.step, undefined, part);
        spans.push({ ...base(spanIdOf(trace.id, 'output', part.event_id), rootId, part.at, part.at, part.step), operation: 'output', event_id: part.event_id, ...content({ output_text: part.text }) });
        boundary = part.at;
        break;
      case 'thinking':
        spans.push({ ...base(part.id, rootId, part.at, part.at, undefined), operation: 'thinking', ...content({ thinking: part.text }) });
        break;
      case 'transition':
        spans.push({ ...base(part.id, rootId, part.at, part.at, part.from_step), operation: 'step_transition', event_id: part.event_id, attributes: { from_step: part.from_step, to_step: part.to_step } });
        boundary = part.at;
        break;
      case 'limit':
        break;
      case 'compaction_started':
        compactionStart = part.at;
        break;
      case 'compacted':
        spans.push({
          ...base(part.id, rootId, compactionStart ?? boundary, part.at, undefined),
          operation: 'compaction',
          event_id: part.event_id,
          attributes: {
            turns_compacted: part.turns_compacted,
            events_compacted: part.events_compacted,
            summary_key: part.summary_key,
            ...(part.pieces !== undefined ? { pieces: part.pieces, calls: part.calls, input_tokens: part.input_tokens ?? 0, output_tokens: part.output_tokens ?? 0 } : {}),
          },
        });
        compactionStart = undefined;
        boundary = part.at;
        break;
      case 'image_read':
        spans.push({ ...base(part.id, rootId, part.at, part.at, undefined), operation: 'image_read', event_id: part.event_id, attributes: { artifact_id: part.artifact_id, detail: part.detail } });
        break;
      case 'guardrail':
        // A guardrail's decision (issue 46): a point in time under the turn, not an error of it (the turn answered).
        spans.push({
          ...base(part.id, rootId, part.at, part.at, undefined),
          operation: 'guardrail',
          event_id: part.event_id,
          attributes: { guardrail: part.guardrail, guardrail_type: part.guardrail_type, on: part.on, action: part.action, score: part.score ?? null, reason: part.reason, ...(part.tool_call_id ? { tool_call_id: part.tool_call_id } : {}) },
        });
        break;
      default: {
        const _exhaustive: never = part;
        return _exhaustive;
      }
    }
  }
  const limit = parts.filter((p): p is Part<'limit'> => p.kind === 'limit').at(-1);
  const error = trace.status === 'error' ? (trace.error ?? limit?.message ?? `The turn ended: ${trace.outcome}`) : undefined;
  // A model call that failed left no answer: its span runs from the last work to the turn's end.
  if (trace.outcome === 'failed' && trace.ended_at && failureType(trace.error) === 'llm_generation_error') chat(spanIdOf(trace.id, 'chat', 'failed'), boundary, trace.ended_at, undefined, trace.error);
  // Each answer records its tokens; a turn stored before that has only its total: its chat span has them when it is
  // the turn's only model call.
  if (chatsWithTokens === 0 && chats.length === 1 && trace.ended) Object.assign(chats[0].attributes as object, { input_tokens: trace.input_tokens ?? 0, output_tokens: trace.output_tokens ?? 0 });
  const invoke: SpanView = {
    ...base(rootId, null, trace.started_at, trace.ended_at, root?.step ?? trace.step, error),
    operation: 'invoke_agent',
    attributes: {
      ...(agent.model ? { model: agent.model } : {}),
      ...(trace.ended ? { input_tokens: trace.input_tokens ?? 0, output_tokens: trace.output_tokens ?? 0 } : {}),
      ...(agent.name !== undefined ? { agent_name: agent.name } : {}),
      ...(agent.description ? { agent_description: agent.description } : {}),
      output_type: answers(parts).some((p) => p.structured) ? 'json' : 'text',
      ...(answers(parts).at(-1) ? { output_event_id: answers(parts).at(-1)!.event_id } : {}),
      parent_agent_id: agent.parentAgentId ?? null,
      parent_session_id: agent.parentSessionKey ?? null,
      depth: agent.depth,
    },
  };
  const all = [invoke, ...spans];
  const parents = new Set(all.map((s) => s.parent_span_id).filter((p): p is string => p !== null));
  return all.map((s) => (parents.has(s.span_id) ? { ...s, has_children: true } : s));
}

const answers = (parts: readonly TracePartRow[]) => parts.filter((p): p is Part<'answer'> => p.kind === 'answer');

/** The reference's AgentTrace. */
export function traceView(trace: TraceRow, agentKey: string | undefined): Record<string, unknown> {
  return {
    trace_id: trace.id,
    ...(agentKey ? { agent_key: agentKey } : {}),
    session_key: trace.session_key,
    started_at: trace.started_at,
    ...(trace.ended_at ? { duration_ms: between(trace.started_at, trace.ended_at) } : {}),
    status: trace.status ?? 'ok',
    input_tokens: trace.input_tokens ?? 0,
    output_tokens: trace.output_tokens ?? 0,
  };
}
