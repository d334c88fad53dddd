import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { JOBS } from '@lib/corpora/read-models';
import { PIPELINE_RUNS } from '@lib/pipelines/read-models';
import type { EventStore, NewEvent, ReadStore } from '@lib/platform';
import type { Infrastructure } from '../../../infrastructure/infrastructure';

/** A route that matched no handler (a 404 from the router, or a request refused before routing). */
const UNMATCHED = '(unmatched)';
const JOB_STATES = ['queued', 'started'] as const;

/**
 * The Prometheus exposition (docs/metrics.md): built only when METRICS_PORT is set, so with it unset nothing here is
 * created, no middleware is mounted and the event store is not wrapped. Its own registry (not prom-client's global
 * one), so two apps in one process (tests) never share counters. Labels are route patterns, projection names, job
 * states and model names: never a raw URL, an id or a secret.
 */
export class PrometheusExposition {
  readonly registry = new Registry();
  private readonly requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by route pattern, method and status.', labelNames: ['method', 'route', 'status'], registers: [this.registry] });
  private readonly latency = new Histogram({ name: 'http_request_duration_seconds', help: 'Time from a request arriving to its response finishing, by route pattern and method.', labelNames: ['method', 'route'], registers: [this.registry] });
  private readonly appends = new Histogram({
    name: 'event_store_append_duration_seconds',
    help: 'Time of one append to the event store (a batch of events to one stream), durable when it resolves.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  private readonly tokens = new Counter({ name: 'llm_tokens_total', help: 'Model tokens of the calls this process made through registered LLMs (their LlmUsageRecorded events), by model name and direction.', labelNames: ['llm', 'direction'], registers: [this.registry] });
  private server?: Server;

  constructor(infra: Infrastructure) {
    collectDefaultMetrics({ register: this.registry });
    const runtime = infra.runtime;
    if (runtime) {
      new Gauge({
        name: 'projection_lag_events',
        help: 'Events between a projection\'s checkpoint and the head of the log (this process\'s projection runtime).',
        labelNames: ['projection'],
        registers: [this.registry],
        async collect() {
          for (const p of await runtime.lag()) this.set({ projection: p.projection }, p.behind);
        },
      });
    }
    const reads: ReadStore = infra.reads;
    new Gauge({
      name: 'worker_jobs',
      help: 'Jobs (document updates) queued or started, from the jobs read model every process shares.',
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        for (const state of JOB_STATES) this.set({ state }, await reads.count(JOBS, [{ field: 'state', op: 'eq', value: state }]));
      },
    });
    new Gauge({
      name: 'worker_pipeline_runs_running',
      help: 'Pipeline runs running, from the pipeline runs read model.',
      registers: [this.registry],
      async collect() {
        this.set(await reads.count(PIPELINE_RUNS, [{ field: 'status', op: 'eq', value: 'running' }]));
      },
    });
    this.instrument(infra.events);
  }

  /** Exposes the timers a worker wing knows pending; an API-only process has none, and no such metric. */
  watchTimers(pending: () => number): void {
    new Gauge({
      name: 'worker_timers_pending',
      help: 'Durable timers not yet fired or cancelled, as this process\'s worker wing knows them.',
      registers: [this.registry],
      collect() {
        this.set(pending());
      },
    });
  }

  /**
   * Times every append and counts the model tokens it records. The store object is shared by everything in the
   * process (handlers, projections, leases), so its method is replaced on the instance rather than wrapped in a new
   * object that some holders would not see. Done before the app is built, once.
   */
  private instrument(events: EventStore): void {
    const append = events.append.bind(events);
    const tokens = this.tokens;
    const appends = this.appends;
    events.append = async (streamId, batch, options) => {
      const done = appends.startTimer();
      let result;
      try {
        result = await append(streamId, batch, options);
      } finally {
        done();
      }
      for (const e of batch as readonly NewEvent[]) {
        if (e.type !== 'LlmUsageRecorded') continue;
        const d = e.data as { llmName?: unknown; input?: unknown; output?: unknown };
        const llm = typeof d.llmName === 'string' ? d.llmName : 'unknown';
        if (typeof d.input === 'number') tokens.inc({ llm, direction: 'input' }, d.input);
        if (typeof d.output === 'number') tokens.inc({ llm, direction: 'output' }, d.output);
      }
      return result;
    };
  }

  /** Counts and times each request under the route pattern Express matched (`/v2/corpora/:corpus_key`). */
  requestMetrics() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const done = this.latency.startTimer();
      res.once('finish', () => {
        const route = typeof req.route?.path === 'string' ? req.route.path : UNMATCHED;
        done({ method: req.method, route });
        this.requests.inc({ method: req.method, route, status: String(res.statusCode) });
      });
      next();
    };
  }

  /** Serves GET /metrics on its own listener; resolves with the address it listens on. */
  async listen(host: string, port: number): Promise<string> {
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the exposition is GET /metrics\n');
        return;
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`collecting metrics failed: ${e instanceof Error ? e.message : String(e)}\n`),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    const address = server.address() as AddressInfo;
    return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
