import { Inject, Injectable } from '@nestjs/common';
import { Condition, decodePageKey, encodePageKey, invalid, notFound, READ_STORE, ReadStore } from '@lib/platform';
import { traceSpans, traceView, type SpanView, type TraceAgent } from '../../domain/trace-spans';
import { flagKey, type TracePartRow, type TraceRow } from '../../domain/traces';
import { AGENTS, AgentRow, SESSIONS, SessionRow, TRACE_PARTS, TRACES } from '../../read-models';

/** The agents a caller may read the traces of: every agent, or these keys (`agent.view`, as for the session list). */
export type TraceScope = '*' | readonly string[];

export interface TraceFilters {
  readonly agentKey?: string;
  readonly sessionKey?: string;
  readonly status?: 'ok' | 'error';
  readonly errorType?: string;
  readonly operation?: string;
  readonly toolName?: string;
  readonly toolErrorType?: string;
  readonly startedAfter?: string;
  readonly startedBefore?: string;
  readonly minDurationMs?: number;
  readonly maxDurationMs?: number;
}

export interface SpanFilters {
  readonly operation?: string;
  readonly parentSpanId?: string;
  readonly includeContent: boolean;
}

/** Largest number of part rows one trace is read with (a turn makes at most 50 model calls, each with its tools). */
const MAX_PARTS = 5000;
/** Traces one list request looks at, at most, to fill a page filtered by duration. */
const MAX_EXAMINED = 2000;

/** Agent traces and their spans, as the reference's agent_analytics serves them (docs/traces.md). */
@Injectable()
export class TraceQueries {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  /** Ended turns, newest first; traces of agents the caller may not see are left out. */
  async list(filters: TraceFilters, scope: TraceScope, limit: number, pageKey?: string): Promise<{ traces: Record<string, unknown>[]; metadata: { page_key?: string } }> {
    if (pageKey !== undefined && typeof decodePageKey(pageKey)?.sortValue !== 'number') throw invalid('request.invalid', 'page_key is not a key this list returned', { page_key: 'unknown page key' });
    const where: Condition[] = [{ field: 'ended', op: 'eq', value: true }];
    const visible = await this.visibleAgentIds(scope);
    if (filters.agentKey !== undefined) {
      const agent = await this.reads.get<AgentRow>(AGENTS, filters.agentKey);
      if (!agent || (visible !== '*' && !visible.includes(agent.agent_id))) return { traces: [], metadata: {} };
      where.push({ field: 'agent_id', op: 'eq', value: agent.agent_id });
    } else if (visible !== '*') {
      if (!visible.length) return { traces: [], metadata: {} };
      where.push({ field: 'agent_id', op: 'in', value: visible });
    }
    if (filters.sessionKey !== undefined) where.push({ field: 'session_key', op: 'eq', value: filters.sessionKey });
    if (filters.status) where.push({ field: 'status', op: 'eq', value: filters.status });
    if (filters.errorType) where.push({ field: `error_types.${filters.errorType}`, op: 'eq', value: true });
    if (filters.operation) where.push({ field: `ops.${filters.operation}`, op: 'eq', value: true });
    if (filters.toolName !== undefined) where.push({ field: `tools.${flagKey(filters.toolName)}`, op: 'eq', value: true });
    if (filters.toolErrorType) where.push({ field: `tool_errors.${filters.toolErrorType}`, op: 'eq', value: true });
    if (filters.startedAfter) where.push({ field: 'started_at', op: 'gt', value: filters.startedAfter });
    if (filters.startedBefore) where.push({ field: 'started_at', op: 'lt', value: filters.startedBefore });
    const keep = (t: TraceRow) => {
      const duration = (t.ended_ms ?? t.started_ms) - t.started_ms;
      return (filters.minDurationMs === undefined || duration >= filters.minDurationMs) && (filters.maxDurationMs === undefined || duration <= filters.maxDurationMs);
    };
    const rows: TraceRow[] = [];
    let next = pageKey;
    let more: string | undefined;
    let examined = 0;
    // Durations are kept as start and end: a duration bound is applied here, reading on until the page is full, or
    // until MAX_EXAMINED rows were looked at (a bound nothing matches would read every trace in one request): the
    // page is then shorter, and its page_key goes on after the last row looked at.
    while (rows.length < limit) {
      const page = await this.reads.find<TraceRow>(TRACES, { where, sort: { field: 'started_seq', direction: 'desc' }, limit: Math.max(limit, 50), pageKey: next });
      for (const row of page.items) {
        examined++;
        if (keep(row)) rows.push(row);
        if (rows.length === limit) break;
      }
      const last = rows.at(-1);
      if (rows.length === limit && last) more = last.id !== page.items.at(-1)?.id || page.nextPageKey ? encodePageKey(last.started_seq, last.id) : undefined;
      if (!page.nextPageKey || rows.length === limit) break;
      if (examined >= MAX_EXAMINED) {
        const seen = page.items.at(-1)!;
        more = encodePageKey(seen.started_seq, seen.id);
        break;
      }
      next = page.nextPageKey;
      // Other requests get the loop between pages.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const keys = await this.agentKeys(rows.map((r) => r.agent_id));
    return { traces: rows.map((r) => traceView(r, keys.get(r.agent_id))), metadata: more ? { page_key: more } : {} };
  }

  async get(traceId: string, scope: TraceScope): Promise<Record<string, unknown>> {
    const trace = await this.visibleTrace(traceId, scope);
    const keys = await this.agentKeys([trace.agent_id]);
    return traceView(trace, keys.get(trace.agent_id));
  }

  /** Every span of a trace, in the order its events happened, filtered as asked. */
  async spans(traceId: string, scope: TraceScope, filters: SpanFilters): Promise<SpanView[]> {
    const trace = await this.visibleTrace(traceId, scope);
    const parts = await this.reads.find<TracePartRow>(TRACE_PARTS, { where: [{ field: 'trace_id', op: 'eq', value: trace.id }], sort: { field: 'seq', direction: 'asc' }, limit: MAX_PARTS });
    const spans = traceSpans(trace, parts.items, await this.agentOf(trace), filters.includeContent);
    return spans.filter((s) => (!filters.operation || s.operation === filters.operation) && (filters.parentSpanId === undefined || s.parent_span_id === filters.parentSpanId));
  }

  async span(traceId: string, spanId: string, scope: TraceScope, includeContent: boolean): Promise<SpanView> {
    const span = (await this.spans(traceId, scope, { includeContent })).find((s) => s.span_id === spanId);
    if (!span) throw notFound('trace.span_not_found', `Span "${spanId}" not found in trace "${traceId}"`, spanId);
    return span;
  }

  /** A trace of an agent the caller may not see answers as a missing one. */
  private async visibleTrace(traceId: string, scope: TraceScope): Promise<TraceRow> {
    const trace = await this.reads.get<TraceRow>(TRACES, traceId);
    const visible = trace ? await this.visibleAgentIds(scope) : [];
    if (!trace || (visible !== '*' && !visible.includes(trace.agent_id))) throw notFound('trace.not_found', `Trace "${traceId}" not found`, traceId);
    return trace;
  }

  private async visibleAgentIds(scope: TraceScope): Promise<'*' | string[]> {
    if (scope === '*') return '*';
    const rows = await Promise.all(scope.map((key) => this.reads.get<AgentRow>(AGENTS, key)));
    return rows.filter((r): r is AgentRow => r !== undefined).map((r) => r.agent_id);
  }

  private async agentKeys(agentIds: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(agentIds)];
    if (!ids.length) return new Map();
    const rows = await this.reads.find<AgentRow>(AGENTS, { where: [{ field: 'agent_id', op: 'in', value: ids }], limit: ids.length });
    return new Map(rows.items.map((r) => [r.agent_id, r.id]));
  }

  /** The agent as configured now, and the chain of sessions that made this one (sub-agents). */
  private async agentOf(trace: TraceRow): Promise<TraceAgent> {
    const agent = (await this.reads.find<AgentRow>(AGENTS, { where: [{ field: 'agent_id', op: 'eq', value: trace.agent_id }], limit: 1 })).items[0];
    const session = await this.reads.get<SessionRow>(SESSIONS, `${trace.agent_id}.${trace.session_key}`);
    let depth = 0;
    let parentAgentId: string | null = null;
    for (let at = session; at?.created_by_agent_key && depth < 10; ) {
      const parent = await this.reads.get<AgentRow>(AGENTS, at.created_by_agent_key);
      if (depth === 0) parentAgentId = parent?.agent_id ?? null;
      depth++;
      at = parent ? await this.reads.get<SessionRow>(SESSIONS, `${parent.agent_id}.${at.created_by_session_key}`) : undefined;
    }
    const toolCorpora: Record<string, string[]> = {};
    for (const [key, tool] of Object.entries(agent?.config.tool_configurations ?? {})) {
      const corpora = (tool as { query_configuration?: { search?: { corpora?: { corpus_key?: unknown }[] } } }).query_configuration?.search?.corpora;
      if (Array.isArray(corpora)) toolCorpora[key] = corpora.map((c) => c.corpus_key).filter((k): k is string => typeof k === 'string');
    }
    return {
      ...(agent ? { key: agent.id, name: agent.name, description: agent.description, model: agent.config.model.name } : {}),
      parentAgentId,
      parentSessionKey: session?.created_by_session_key ?? null,
      depth,
      toolCorpora,
    };
  }
}
