import { useState } from 'preact/hooks';
import { api, forbidden, qs } from '../api';
import { ErrorBox, href, Json, Loading, Page, useLoad, when } from '../ui';

interface Trace {
  trace_id: string;
  session_key: string;
  started_at: string;
  duration_ms?: number;
  status: string;
  input_tokens: number;
  output_tokens: number;
}

interface Span {
  span_id: string;
  parent_span_id: string | null;
  operation: string;
  started_at: string;
  duration_ms?: number;
  status: string;
  error_message?: string | null;
  step_name?: string | null;
  attributes?: Record<string, unknown>;
  content?: Record<string, unknown>;
  event_id?: string;
}

const ms = (n: number | undefined) => (n === undefined ? 'running' : n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(2)} s`);

/** What a span is, in a few words: the tool it ran, the step it moved to, the guardrail that fired. */
function nameOf(s: Span): string {
  const a = s.attributes ?? {};
  if (s.operation === 'execute_tool') return `execute_tool ${String(a.tool_name ?? '')}`;
  if (s.operation === 'chat' && a.model) return `chat ${String(a.model)}`;
  if (s.operation === 'step_transition') return `step ${String(a.from_step)} → ${String(a.to_step)}`;
  if (s.operation === 'guardrail') return `guardrail ${String(a.guardrail ?? '')} (${String(a.action ?? '')})`;
  return s.operation;
}

/** Depth in the span tree, for the indent of its name. */
function depths(spans: Span[]): Map<string, number> {
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  const out = new Map<string, number>();
  const depth = (s: Span): number => {
    if (out.has(s.span_id)) return out.get(s.span_id)!;
    const parent = s.parent_span_id ? byId.get(s.parent_span_id) : undefined;
    const d = parent && parent !== s ? depth(parent) + 1 : 0;
    out.set(s.span_id, d);
    return d;
  };
  spans.forEach(depth);
  return out;
}

/**
 * A session's traces (docs/traces.md: one per turn, `GET /v2/agent_analytics/traces?agent_key&session_key`), and the
 * chosen trace as a timeline: each span a bar on the turn's time axis (left at its start, as wide as its duration),
 * with its name, duration and status; a span's attributes (and its content: tool arguments, results, the answer)
 * on demand. Reading traces needs a view role on the agent: anyone else gets the API's 403 once.
 */
export function TracesPage({ agent, session, trace }: { agent: string; session: string; trace?: string }) {
  const list = useLoad(() => api<{ traces: Trace[] }>('GET', `/v2/agent_analytics/traces${qs({ agent_key: agent, session_key: session, limit: 100 })}`), [agent, session]);
  const traces = [...(list.data?.traces ?? [])].sort((a, b) => a.started_at.localeCompare(b.started_at));
  const chosen = trace ?? traces.at(-1)?.trace_id;
  return (
    <Page title={`Traces of session ${session}`} actions={<a href={href('agents', agent, 'sessions', session, 'history')}>Timeline of events</a>}>
      <p>
        Agent <a href={href('agents', agent)}>{agent}</a>, session <a href={href('agents', agent, 'sessions', session)}>{session}</a>: one trace per turn.
      </p>
      {forbidden(list.error) ? (
        <p class="notice" role="status">
          This credential may not read traces (the service answered 403): that needs a view role on the agent.
        </p>
      ) : (
        <>
          <ErrorBox error={list.error} />
          {list.loading && !list.data && <Loading what="the traces" />}
          {list.data && !traces.length && <p>No traces yet: a turn's trace is listed once the turn has ended.</p>}
          {traces.length > 0 && (
            <nav aria-label="Turns">
              <ul class="tabs">
                {traces.map((t, i) => (
                  <li key={t.trace_id}>
                    <a href={href('agents', agent, 'sessions', session, 'traces', t.trace_id)} aria-current={t.trace_id === chosen ? 'page' : undefined}>
                      Turn {i + 1} · {ms(t.duration_ms)} · {t.status}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {chosen && <Timeline key={chosen} trace={traces.find((t) => t.trace_id === chosen)} id={chosen} />}
        </>
      )}
    </Page>
  );
}

function Timeline({ id, trace }: { id: string; trace?: Trace }) {
  const spans = useLoad(() => api<{ spans: Span[] }>('GET', `/v2/agent_analytics/traces/${encodeURIComponent(id)}/spans?limit=500&include_content=true`), [id]);
  const [open, setOpen] = useState<string>();
  const list = spans.data?.spans ?? [];
  const start = Math.min(...list.map((s) => Date.parse(s.started_at)));
  const end = Math.max(...list.map((s) => Date.parse(s.started_at) + (s.duration_ms ?? 0)));
  const total = Math.max(1, end - start);
  const depth = depths(list);
  return (
    <section aria-labelledby="trace-title">
      <h2 id="trace-title">
        Trace {id.slice(0, 8)}… {trace && <small class="meta">started {when(trace.started_at)}, {ms(trace.duration_ms)}, {trace.input_tokens} tokens in, {trace.output_tokens} out, {trace.status}</small>}
      </h2>
      <ErrorBox error={spans.error} />
      {spans.loading && !spans.data && <Loading what="the spans" />}
      {list.length > 0 && (
        <>
          <div class="axis" aria-hidden="true">
            <span>0 ms</span>
            <span>{ms(Math.round(total / 2))}</span>
            <span>{ms(total)}</span>
          </div>
          <ol class="spans" aria-label="Spans">
            {list.map((s) => {
              const left = ((Date.parse(s.started_at) - start) / total) * 100;
              const width = Math.max(0.4, ((s.duration_ms ?? 0) / total) * 100);
              return (
                <li key={s.span_id} class={`span span-${s.status}`}>
                  <button type="button" class="span-name" style={{ paddingLeft: `${(depth.get(s.span_id) ?? 0) * 14}px` }} aria-expanded={open === s.span_id} onClick={() => setOpen(open === s.span_id ? undefined : s.span_id)}>
                    {nameOf(s)}
                  </button>
                  <span class="track">
                    {/* Geometry set through the DOM's style object (CSSOM), which the CSP's style-src 'self' allows. */}
                    <span class="bar" style={{ left: `${Math.min(left, 99.6)}%`, width: `${Math.min(width, 100 - Math.min(left, 99.6))}%` }} />
                  </span>
                  <span class="span-meta">
                    {ms(s.duration_ms)} · {s.status === 'error' ? <strong class="error">error</strong> : 'ok'}
                  </span>
                  {open === s.span_id && (
                    <div class="span-detail" role="region" aria-label={`Attributes of ${nameOf(s)}`}>
                      <p class="meta">
                        started {when(s.started_at)}
                        {s.step_name ? `, step ${s.step_name}` : ''}
                        {s.error_message ? `: ${s.error_message}` : ''}
                      </p>
                      <Json value={{ ...(s.attributes ? { attributes: s.attributes } : {}), ...(s.content ? { content: s.content } : {}), span_id: s.span_id, ...(s.event_id ? { event_id: s.event_id } : {}) }} />
                    </div>
                  )}
                </li>
              );
            })}
          </ol>
        </>
      )}
    </section>
  );
}
