import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';

/**
 * A server span per request, installed only when tracing is on (docs/telemetry.md): it continues the caller's W3C
 * `traceparent`, is the active span while the request is handled (so its store appends, turns and outbound calls
 * are its children), and is named by the route pattern once routing matched one (`POST /v2/agents/:agentKey/…`):
 * the raw URL holds keys and ids, the pattern nothing the code does not. No header, query or body is recorded.
 * Written here rather than with the HTTP auto-instrumentation, which patches `http` for the whole process
 * (outbound calls included) and names spans by raw path unless the Express instrumentation is loaded as well.
 */
export const requestSpan = () => (req: Request, res: Response, next: NextFunction): void => {
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const method = req.method.toUpperCase();
  const span = trace.getTracer('agent-retrieval-service').startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.scheme': req.protocol } }, parent);
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    const route = (req.route as { path?: unknown } | undefined)?.path;
    if (typeof route === 'string') {
      const pattern = `${req.baseUrl}${route}`;
      span.updateName(`${method} ${pattern}`);
      span.setAttribute('http.route', pattern);
    }
    if (res.headersSent) span.setAttribute('http.response.status_code', res.statusCode);
    if (!res.writableFinished) span.setAttribute('http.request.aborted', true);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  res.once('finish', end);
  res.once('close', end);
  context.with(trace.setSpan(parent, span), next);
};
