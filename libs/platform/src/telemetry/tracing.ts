import { Context, context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * Spans for OpenTelemetry (docs/telemetry.md), over `@opentelemetry/api` only: the SDK and its exporter are loaded by
 * the composition root when OTEL_EXPORTER_OTLP_ENDPOINT is set, which then calls `enableTracing()`. Until it does,
 * every function here returns at its first line: no span object, no context switch, no header (no cost when off).
 */
let enabled = false;

/** Called once the SDK is registered as the global tracer provider; `false` when it is shut down. */
export function enableTracing(on = true): void {
  enabled = on;
}

export function tracingEnabled(): boolean {
  return enabled;
}

/** Attribute values a span takes; `undefined` ones are left out. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean | readonly string[] | undefined>>;

/** What the code inside a span may say about it. */
export interface SpanHandle {
  set(attributes: SpanAttributes): void;
  /** Marks the span failed without an exception (a tool that answered with an error). */
  fail(message: string): void;
}

export interface SpanOptions {
  readonly kind?: 'internal' | 'client' | 'server';
  readonly attributes?: SpanAttributes;
  /** A W3C `traceparent` to continue (one carried through the log), instead of the active span. */
  readonly parent?: string;
}

const NO_SPAN: SpanHandle = { set: () => undefined, fail: () => undefined };
const KINDS = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT, server: SpanKind.SERVER } as const;
const tracer = () => trace.getTracer('agent-retrieval-service');

function defined(attributes: SpanAttributes | undefined): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [k, v] of Object.entries(attributes ?? {})) if (v !== undefined) out[k] = v as string | number | boolean | string[];
  return out;
}

/**
 * Runs `fn` inside a span (the active one while it runs, so spans and outbound calls it makes are its children);
 * the span ends when `fn` settles, failed when it throws. Tracing off: `fn` runs as is.
 */
export async function inSpan<T>(name: string, options: SpanOptions, fn: (span: SpanHandle) => Promise<T>): Promise<T> {
  if (!enabled) return fn(NO_SPAN);
  const parent = options.parent ? contextOf(options.parent) : context.active();
  const span = tracer().startSpan(name, { kind: KINDS[options.kind ?? 'internal'], attributes: defined(options.attributes) }, parent);
  const handle: SpanHandle = {
    set: (attributes) => span.setAttributes(defined(attributes)),
    fail: (message) => span.setStatus({ code: SpanStatusCode.ERROR, message }),
  };
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(handle));
  } catch (e) {
    span.recordException(e instanceof Error ? e : String(e));
    span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
    throw e;
  } finally {
    span.end();
  }
}

/** Whether a span is active here: background work outside any trace (leases, timers) makes no spans of its own. */
export function inTrace(): boolean {
  return enabled && trace.getSpan(context.active()) !== undefined;
}

/** Runs `fn` with no active span: for timers that outlive the work that set them (a lease's renewals). */
export function outsideTrace<T>(fn: () => T): T {
  return enabled ? context.with(ROOT_CONTEXT, fn) : fn();
}

/**
 * The W3C trace context headers (`traceparent`, `tracestate` when there is one) of the active span, for a call
 * leaving the service; undefined when tracing is off or no span is active.
 */
export function traceHeaders(): Record<string, string> | undefined {
  if (!enabled) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/** The active span's `traceparent`, to carry through the log (event metadata). */
export function currentTraceparent(): string | undefined {
  return traceHeaders()?.traceparent;
}

function contextOf(traceparent: string): Context {
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}
