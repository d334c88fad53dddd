import { Controller, Get, Param, Query } from '@nestjs/common';
import { TRACE_ERROR_TYPES, TRACE_OPERATIONS, TraceFilters, TraceQueries, TraceScope, TOOL_ERROR_TYPES } from '@lib/agents';
import { Principal, scopesOf } from '@lib/auth';
import { invalid } from '@lib/platform';
import { Caller } from '../http/caller';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../http/paging';
import { Policy } from '../http/policy';
import { OpenApi } from '../openapi/openapi.decorator';

type Params = Record<string, string | undefined>;

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], errors: Record<string, string>): T | undefined {
  if (raw === undefined) return undefined;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  errors[name] = `must be one of ${allowed.join(', ')}`;
  return undefined;
}

function instant(name: string, raw: string | undefined, errors: Record<string, string>): string | undefined {
  if (raw === undefined) return undefined;
  const at = Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at)) {
    errors[name] = 'must be an ISO 8601 date-time';
    return undefined;
  }
  return new Date(at).toISOString();
}

function millis(name: string, raw: string | undefined, errors: Record<string, string>): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw === '' || !Number.isInteger(n) || n < 0) {
    errors[name] = 'must be a non-negative integer';
    return undefined;
  }
  return n;
}

function flag(name: string, raw: string | undefined, errors: Record<string, string>): boolean {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  errors[name] = 'must be true or false';
  return false;
}

function refuse(errors: Record<string, string>): void {
  const fields = Object.keys(errors);
  if (fields.length) throw invalid('request.invalid', `Invalid ${fields.join(', ')}: ${fields.map((f) => `${f} ${errors[f]}`).join('; ')}`, errors);
}

/** The agents whose traces the caller reads: those it views (as the session list), `*` for all. */
const scopeOf = (caller: Principal): TraceScope => scopesOf(caller.caps, 'agent.view');

/** The reference's agent_analytics: a trace per agent turn and its spans (docs/traces.md). */
@Controller('v2/agent_analytics/traces')
export class TracesController {
  constructor(private readonly traces: TraceQueries) {}

  @OpenApi({ query: ['agent_key', 'session_key', 'status', 'error_type', 'operation', 'tool_name', 'tool_error_type', 'started_after', 'started_before', 'min_duration_ms', 'max_duration_ms', 'limit', 'page_key'] })
  @Get()
  @Policy('trace.read')
  async list(@Query() q: Params, @Caller() caller: Principal) {
    const errors: Record<string, string> = {};
    const filters: TraceFilters = {
      agentKey: q.agent_key,
      sessionKey: q.session_key,
      status: oneOf('status', q.status, ['ok', 'error'] as const, errors),
      errorType: oneOf('error_type', q.error_type, TRACE_ERROR_TYPES, errors),
      operation: oneOf('operation', q.operation, TRACE_OPERATIONS, errors),
      toolName: q.tool_name,
      toolErrorType: oneOf('tool_error_type', q.tool_error_type, TOOL_ERROR_TYPES, errors),
      startedAfter: instant('started_after', q.started_after, errors),
      startedBefore: instant('started_before', q.started_before, errors),
      minDurationMs: millis('min_duration_ms', q.min_duration_ms, errors),
      maxDurationMs: millis('max_duration_ms', q.max_duration_ms, errors),
    };
    refuse(errors);
    return this.traces.list(filters, scopeOf(caller), pageLimit(q.limit, 10, 100), q.page_key || undefined);
  }

  @Get(':trace_id')
  @Policy('trace.read')
  async get(@Param('trace_id') traceId: string, @Caller() caller: Principal) {
    return this.traces.get(traceId, scopeOf(caller));
  }

  @OpenApi({ query: ['operation', 'include_content', 'exclude_subagents', 'limit', 'page_key', 'parent_span_id'] })
  @Get(':trace_id/spans')
  @Policy('trace.read')
  async spans(@Param('trace_id') traceId: string, @Query() q: Params, @Caller() caller: Principal) {
    const errors: Record<string, string> = {};
    const operation = oneOf('operation', q.operation, TRACE_OPERATIONS, errors);
    const includeContent = flag('include_content', q.include_content, errors);
    flag('exclude_subagents', q.exclude_subagents, errors);
    refuse(errors);
    const limit = pageLimit(q.limit, 100, 500);
    const offset = offsetOfPageKey(q.page_key || undefined);
    // A sub-agent's turns are traces of their own (its session's), so exclude_subagents leaves this list as it is.
    const spans = await this.traces.spans(traceId, scopeOf(caller), { operation, parentSpanId: q.parent_span_id, includeContent });
    const page = spans.slice(offset, offset + limit);
    return { spans: page, metadata: offset + limit < spans.length ? { page_key: offsetPageKey(offset + limit) } : {} };
  }

  @OpenApi({ query: ['include_content'] })
  @Get(':trace_id/spans/:span_id')
  @Policy('trace.read')
  async span(@Param('trace_id') traceId: string, @Param('span_id') spanId: string, @Query() q: Params, @Caller() caller: Principal) {
    const errors: Record<string, string> = {};
    const includeContent = flag('include_content', q.include_content, errors);
    refuse(errors);
    return this.traces.span(traceId, spanId, scopeOf(caller), includeContent);
  }
}
