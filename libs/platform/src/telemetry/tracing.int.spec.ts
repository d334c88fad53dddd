import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { EventStore } from '../event-store/event-store.port';
import type { NewEvent } from '../event-store/events';
import { OutboundHttp } from '../http/outbound-http';
import { OutboundPolicy } from '../http/outbound-policy';
import { TracedEventStore } from './traced-event-store';
import { enableTracing, inSpan, outsideTrace, traceHeaders } from './tracing';

/**
 * The span helpers against the real SDK (in-memory exporter) and a local server: parentage, a continued
 * `traceparent`, the headers every guarded outbound call gets (each header form undici and fetch take), and the
 * store wrapper's metadata stamp. Off first: nothing is made or added.
 */
describe('tracing helpers', () => {
  const exporter = new InMemorySpanExporter();
  let provider: NodeTracerProvider;
  let server: Server;
  let url = '';
  const seen: IncomingHttpHeaders[] = [];
  const http = new OutboundHttp(new OutboundPolicy({ allowPrivate: false, allowedHosts: ['127.0.0.1'], deniedHosts: [] }));
  const appended: NewEvent[][] = [];
  const store = new TracedEventStore({ append: async (_s: string, events: readonly NewEvent[]) => (appended.push([...events]), { nextExpectedRevision: 0, position: 1 }) } as unknown as EventStore);
  const event = (): NewEvent => ({ id: 'e1', type: 'Happened', data: {}, metadata: { actor: { type: 'system', id: 't' }, correlationId: 'c', schemaVersion: 1 } });

  beforeAll(async () => {
    server = createServer((req, res) => (seen.push(req.headers), res.end('ok')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    enableTracing(false);
    await provider?.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
    await http.close();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    seen.length = 0;
    appended.length = 0;
    exporter.reset();
  });

  it('off: runs the work as is, adds no header and stamps no event', async () => {
    expect(await inSpan('x', {}, async () => traceHeaders())).toBeUndefined();
    await (await http.request(`${url}/a`, { method: 'GET', headers: { 'x-a': '1' } })).body.dump();
    await (await http.fetch(`${url}/b`)).text();
    expect(seen.map((h) => h.traceparent)).toEqual([undefined, undefined]);
    await inSpan('y', {}, () => store.append('s-1', [event()]));
    expect(appended[0][0].metadata.traceparent).toBeUndefined();
  });

  it('on: nests spans, continues a given traceparent, and every outbound call carries the active span, a caller-set one kept', async () => {
    provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register({ propagator: new W3CTraceContextPropagator() });
    enableTracing();
    const given = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await inSpan('outer', { parent: given }, () =>
      inSpan('inner', { kind: 'client', attributes: { 'a.b': 1, skipped: undefined } }, async () => {
        await (await http.request(`${url}/object`, { method: 'GET', headers: { 'x-a': '1' } })).body.dump();
        await (await http.request(`${url}/flat`, { method: 'GET', headers: ['x-a', '1'] })).body.dump();
        await (await http.request(`${url}/none`, { method: 'GET' })).body.dump();
        await (await http.fetch(`${url}/fetch`, { headers: new Headers({ 'x-a': '1' }) })).text();
        await (await http.fetch(`${url}/own`, { headers: { traceparent: given } })).text();
      }),
    );
    const [inner, outer] = exporter.getFinishedSpans();
    expect([outer.name, outer.spanContext().traceId, outer.parentSpanContext?.spanId]).toEqual(['outer', '0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331']);
    expect([inner.name, inner.parentSpanContext?.spanId, inner.attributes]).toEqual(['inner', outer.spanContext().spanId, { 'a.b': 1 }]);
    const mine = `00-0af7651916cd43dd8448eb211c80319c-${inner.spanContext().spanId}-01`;
    expect(seen.map((h) => [h['x-a'], h.traceparent])).toEqual([['1', mine], ['1', mine], [undefined, mine], ['1', mine], [undefined, given]]);
  });

  it('on: a failure ends the span failed and is rethrown; appends in a trace get a span and the stamp, others pass through', async () => {
    await expect(inSpan('boom', {}, async () => Promise.reject(new Error('nope')))).rejects.toThrow('nope');
    expect(exporter.getFinishedSpans()[0].status).toEqual({ code: 2, message: 'nope' });
    exporter.reset();
    await store.append('lease-x', [event()]);
    expect([appended[0][0].metadata.traceparent, exporter.getFinishedSpans()]).toEqual([undefined, []]);
    await inSpan('work', {}, () => store.append('session-x', [event()]));
    const [append] = exporter.getFinishedSpans();
    expect([append.name, append.attributes['event_store.category'], append.attributes['event_store.event_types']]).toEqual(['event_store append', 'session', ['Happened']]);
    expect(appended[1][0].metadata.traceparent).toBe(`00-${append.spanContext().traceId}-${append.spanContext().spanId}-01`);
    // A timer set inside a span but outliving it (a lease's renewals) runs outside the trace.
    const later = await inSpan('takes a lease', {}, () => new Promise<[unknown, unknown]>((resolve) => {
      const inside = traceHeaders();
      outsideTrace(() => setTimeout(() => resolve([inside, traceHeaders()]), 1));
    }));
    expect([typeof later[0], later[1]]).toEqual(['object', undefined]);
  });
});
