import type { AgentEvent, SessionEvent } from '@lib/agents/events';
import { clip, flagKey, limitType, failureType, spanIdOf, toolSpanIdOf, traceIdOf, TRACE_PARTS, TRACES, type TracePartRow, type TraceRow } from '@lib/agents/read-models';
import { patch, put, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The kinds of part rows differ in fields, so their patches are built as plain operations. */
const patchPart = (id: string, set: Record<string, unknown>): ReadOp => ({ op: 'patch', collection: TRACE_PARTS, id, set });

/** What a failed tool call said: its output's `error` (or `message`) text, as the model read it. */
const errorText = (output: Record<string, unknown>): string => (typeof output.error === 'string' ? output.error : typeof output.message === 'string' ? output.message : 'The tool call failed');

/** A model answer's tokens as its event recorded them (events stored before they were: nothing). */
const tokens = (usage: { input_tokens: number; output_tokens: number } | undefined) => (usage ? { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens } : {});

const SESSION_PREFIX = 'session-';
const agentIdOf = (streamId: string): string => streamId.slice(SESSION_PREFIX.length).split('.')[0];
const sessionKeyOf = (streamId: string): string => streamId.slice(SESSION_PREFIX.length).split('.').slice(1).join('.');

/**
 * Agent traces (docs/traces.md): a row per turn, and what each event of the turn recorded towards its spans. Pure:
 * the spans' times and links are assembled on read from these rows, since a projection never reads what it wrote.
 * Replays from the start of the log, so sessions recorded before it have traces too.
 */
export const tracesProjection: ReadModelProjection = {
  name: 'agent_traces',
  version: 1,
  target: 'read',
  eventTypes: [
    'SessionTurnStarted',
    'SessionTurnEnded',
    'SessionToolCalled',
    'SessionToolReturned',
    'SessionAgentOutput',
    'SessionStructuredOutput',
    'SessionThinking',
    'SessionStepTransitioned',
    'SessionLimitExceeded',
    'SessionCompactionStarted',
    'SessionCompacted',
    'SessionImageRead',
    'SessionGuardrailTriggered',
    'SessionDeleted',
    'AgentDeleted',
  ],
  collections: [
    { name: TRACES, indexes: [{ fields: ['ended', 'started_seq'] }, { fields: ['agent_id', 'started_seq'] }, { fields: ['session_key', 'started_seq'] }, { fields: ['stream_id'] }] },
    { name: TRACE_PARTS, indexes: [{ fields: ['trace_id', 'seq'] }, { fields: ['stream_id'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as SessionEvent | AgentEvent;
    if (event.type === 'AgentDeleted') return [TRACES, TRACE_PARTS].map((collection) => ({ op: 'deleteWhere', collection, where: [{ field: 'agent_id', op: 'eq', value: event.data.agentId }] }));
    const streamId = recorded.streamId;
    if (!streamId.startsWith(SESSION_PREFIX)) return [];
    // The key may be used again: the session's traces go with it, as its events leave the session's reads.
    if (event.type === 'SessionDeleted') return [TRACES, TRACE_PARTS].map((collection) => ({ op: 'deleteWhere', collection, where: [{ field: 'stream_id', op: 'eq', value: streamId }] }));
    const turnId = 'turnId' in event.data ? event.data.turnId : undefined;
    // Events outside a turn (an upload, an approval decided between turns) belong to no trace.
    if (!turnId && event.type !== 'SessionToolReturned') return [];
    const traceId = turnId ? traceIdOf(streamId, turnId) : '';
    const owner = { agent_id: agentIdOf(streamId), stream_id: streamId };
    const part = (row: DistributiveOmit<TracePartRow, 'trace_id' | 'seq' | 'agent_id' | 'stream_id'>): ReadOp => put(TRACE_PARTS, { ...row, ...owner, trace_id: traceId, seq: recorded.position } as TracePartRow);
    const flags = (set: Record<string, boolean>): ReadOp => patch(TRACES, traceId, { set });
    switch (event.type) {
      case 'SessionTurnStarted': {
        const d = event.data;
        const row: TraceRow = { id: traceId, ...owner, session_key: sessionKeyOf(streamId), turn_id: d.turnId, step: d.step, started_at: d.createdAt, started_ms: Date.parse(d.createdAt), started_seq: recorded.position, ended: false, ops: { invoke_agent: true } };
        return [put(TRACES, row), part({ id: spanIdOf(traceId, 'invoke'), kind: 'turn', at: d.createdAt, step: d.step })];
      }
      case 'SessionTurnEnded': {
        const d = event.data;
        const error = d.outcome === 'failed' || d.outcome === 'limit';
        const set: Record<string, unknown> = { ended: true, ended_at: d.createdAt, ended_ms: Date.parse(d.createdAt), status: error ? 'error' : 'ok', outcome: d.outcome, input_tokens: d.usage.input_tokens, output_tokens: d.usage.output_tokens };
        if (d.error !== undefined) set.error = d.error;
        if (d.outcome === 'failed') {
          const type = failureType(d.error);
          set[`error_types.${type}`] = true;
          if (type === 'llm_generation_error') set['ops.chat'] = true;
        }
        return [patch(TRACES, traceId, { set }), patchPart(spanIdOf(traceId, 'invoke'), { ended_at: d.createdAt, outcome: d.outcome, input_tokens: d.usage.input_tokens, output_tokens: d.usage.output_tokens, ...(d.error !== undefined ? { error: d.error } : {}) })];
      }
      case 'SessionToolCalled': {
        const d = event.data;
        return [
          part({ id: toolSpanIdOf(streamId, d.toolCallId), kind: 'tool', at: d.createdAt, step: d.step, model_call_id: d.modelCallId, tool_call_id: d.toolCallId, tool_key: d.toolConfigurationName, tool_type: d.toolName, input_event_id: d.eventId, arguments: clip(JSON.stringify(d.toolInput)), ...tokens(d.usage) }),
          flags({ 'ops.chat': true, 'ops.execute_tool': true, [`tools.${flagKey(d.toolConfigurationName)}`]: true }),
        ];
      }
      case 'SessionToolReturned': {
        const d = event.data;
        const ops: ReadOp[] = [patchPart(toolSpanIdOf(streamId, d.toolCallId), { ended_at: d.createdAt, error: d.error, output_event_id: d.eventId, result: clip(JSON.stringify(d.toolOutput)), ...(d.error ? { error_message: clip(errorText(d.toolOutput)) } : {}) })];
        // The flag goes to the turn that got the result (an approved call runs in the turn after the one that asked).
        if (d.error && turnId) ops.push(flags({ 'tool_errors.execution_error': true }));
        return ops;
      }
      case 'SessionAgentOutput':
      case 'SessionStructuredOutput': {
        const d = event.data;
        const text = event.type === 'SessionAgentOutput' ? event.data.content : JSON.stringify(event.data.content);
        return [part({ id: spanIdOf(traceId, 'answer', d.eventId), kind: 'answer', at: d.createdAt, step: d.step, event_id: d.eventId, text: clip(text), structured: event.type === 'SessionStructuredOutput', ...tokens(d.usage) }), flags({ 'ops.chat': true, 'ops.output': true })];
      }
      case 'SessionThinking':
        return [part({ id: spanIdOf(traceId, 'thinking', event.data.eventId), kind: 'thinking', at: event.data.createdAt, event_id: event.data.eventId, text: clip(event.data.content) }), flags({ 'ops.thinking': true })];
      case 'SessionStepTransitioned': {
        const d = event.data;
        return [part({ id: spanIdOf(traceId, 'transition', d.eventId), kind: 'transition', at: d.createdAt, event_id: d.eventId, from_step: d.fromStep, to_step: d.toStep }), flags({ 'ops.step_transition': true })];
      }
      case 'SessionLimitExceeded': {
        const d = event.data;
        return [part({ id: spanIdOf(traceId, 'limit', d.eventId), kind: 'limit', at: d.createdAt, event_id: d.eventId, message: d.message }), flags({ [`error_types.${limitType(d.limit, d.actual)}`]: true })];
      }
      case 'SessionCompactionStarted':
        return [part({ id: spanIdOf(traceId, 'compaction_started', event.data.eventId), kind: 'compaction_started', at: event.data.createdAt, event_id: event.data.eventId })];
      case 'SessionCompacted': {
        const d = event.data;
        return [part({ id: spanIdOf(traceId, 'compaction', d.eventId), kind: 'compacted', at: d.createdAt, event_id: d.eventId, turns_compacted: d.turnsCompacted, events_compacted: d.eventsCompacted, summary_key: d.summaryKey, ...(d.pieces ? { pieces: d.pieces.length, calls: d.pieces.filter((p) => p.kind !== 'cut').length } : {}), ...(d.usage ? { input_tokens: d.usage.input_tokens, output_tokens: d.usage.output_tokens } : {}) }), flags({ 'ops.compaction': true })];
      }
      case 'SessionImageRead': {
        const d = event.data;
        return [part({ id: spanIdOf(traceId, 'image_read', d.eventId), kind: 'image_read', at: d.createdAt, event_id: d.eventId, artifact_id: d.artifactId, detail: d.detail }), flags({ 'ops.image_read': true })];
      }
      case 'SessionGuardrailTriggered': {
        const d = event.data;
        // An input's guardrail is stored with the input, before its turn starts: it belongs to no trace.
        return [
          part({ id: spanIdOf(traceId, 'guardrail', d.eventId), kind: 'guardrail', at: d.createdAt, event_id: d.eventId, guardrail: d.guardrail, guardrail_type: d.guardrailType, on: d.on, action: d.action, ...(d.score !== undefined ? { score: d.score } : {}), reason: clip(d.reason), ...(d.toolCallId ? { tool_call_id: d.toolCallId } : {}) }),
          flags({ 'ops.guardrail': true }),
        ];
      }
      default:
        return [];
    }
  },
};
