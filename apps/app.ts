import 'reflect-metadata';
import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AddressLookup, Clock, CLOCK, DURABLE_TIMERS, DurableTimers, ServiceConfig } from '@lib/platform';
import type { Logger } from 'pino';
import { ApiModule, ApiModuleOptions } from './api/src/api.module';
import { Bootstrap } from '@lib/auth';
import { resolveBootstrapKey, resolveSecretsKey, resolveSigningKey } from './api/src/bootstrap-key';
import { requestContext } from './api/src/http/request-context';
import { requestLog } from './api/src/http/request-log';
import { stopServingFirst } from './api/src/http/stop-serving-first';
import { PinoNestLogger } from './api/src/logger';
import { PrometheusExposition } from './api/src/ops/prometheus';
import { createInfrastructure, Infrastructure, Role } from './infrastructure/infrastructure';
import { WorkerModule } from './worker/src/worker.module';

/**
 * The process by role: `api` serves the HTTP API; `worker` runs the worker wing (projections, jobs, timers)
 * and answers the health probes only; `all` (the default, `npm start`) does both.
 */
@Module({})
class ServiceModule {
  static forRoot(options: ApiModuleOptions, role: Role): DynamicModule {
    return {
      module: ServiceModule,
      imports: [ApiModule.forRoot(options), ...(role === 'api' ? [] : [WorkerModule.forRoot({ config: options.config, log: options.log })])],
    };
  }
}

const MAX_HEADER_BYTES = 4 * 1024 * 1024;

export interface StartedApp {
  readonly app: NestExpressApplication;
  readonly infra: Infrastructure;
  readonly bootstrapKey: string;
  readonly url: string;
  /** The Prometheus exposition's base URL, when METRICS_PORT is set (docs/metrics.md). */
  readonly metricsUrl?: string;
}

/** Composes adapters, projections and HTTP for a role, and listens. Used by main.ts and by e2e tests. */
export async function startApp(
  config: ServiceConfig,
  role: Role,
  log: Logger,
  print: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  overrides: { readonly clock?: Clock; readonly lookup?: AddressLookup } = {},
): Promise<StartedApp> {
  // Garbage promoted while requests wait (an ingest's bodies, events and batches) let V8's old space grow to ~4×
  // what survived before a full collection: at 200k chunks the JS heap peaked at 535 MB, 339 MB with 50%
  // (docs/deployment.md, "Memory"). A process-wide flag, read at each collection: set before anything allocates much.
  if (config.heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
  const bootstrapKey = resolveBootstrapKey(config, print);
  const infra = await createInfrastructure(config, role, log);
  // Off unless METRICS_PORT is set: then nothing is measured and nothing more runs per request or append.
  const prometheus = config.metricsPort !== undefined ? new PrometheusExposition(infra) : undefined;
  try {
    await infra.runtime?.start();
    const app = await NestFactory.create<NestExpressApplication>(
      ServiceModule.forRoot(
        { config, infra, log, signingKey: resolveSigningKey(config), secretsKey: resolveSecretsKey(config), clock: overrides.clock, lookup: overrides.lookup, routes: role === 'worker' ? 'health' : 'all' },
        role,
      ),
      { bodyParser: false, logger: new PinoNestLogger(log) },
    );
    app.disable('x-powered-by');
    // No ETag on API answers: Express hashes every body it sends for one (SHA-1; 30-100 µs of a light request's
    // ~400 µs, more for large bodies), and no client of this API revalidates. The console's files set their own.
    app.set('etag', false);
    // A bulk update may list 10,000 document ids of up to 100 characters in its query string (spec limits):
    // Node's default 16 KB header limit would refuse it with 431.
    (app.getHttpServer() as Server & { maxHeaderSize: number }).maxHeaderSize = MAX_HEADER_BYTES;
    // `Expect: 100-continue` (curl sends it with bodies over 1 MB): Node would answer "100 Continue" at once; the guard
    // sends it when it is about to read the body (http/request-body.ts), so a request refused from its headers and
    // path (401, 403, 404, 413 declared, 429) is answered before its sender uploads a byte of it.
    const server = app.getHttpServer() as Server;
    server.on('checkContinue', (req, res) => server.emit('request', req, res));
    stopServingFirst(app, server);
    app.use(requestContext(app.get<symbol, Clock>(CLOCK)));
    app.use(requestLog(log));
    if (prometheus) app.use(prometheus.requestMetrics());
    // No body parser here: the guard reads bodies once it knows who sends them (http/request-body.ts).
    app.set('trust proxy', config.trustProxy);
    // The owner and the bootstrap key are events like any other; the auth projection must show them first.
    if (!(await app.get(Bootstrap).ensureOwner(bootstrapKey, app.get<symbol, Clock>(CLOCK).now()))) log.warn('the auth projection has not caught up yet: the bootstrap key works once it does');
    let metricsUrl: string | undefined;
    if (prometheus && config.metricsPort !== undefined) {
      const timers = role === 'api' ? undefined : app.get<symbol, DurableTimers>(DURABLE_TIMERS, { strict: false });
      if (timers) prometheus.watchTimers(() => timers.pendingIds().length);
      // Before the API listens: a METRICS_PORT already taken stops the start before anything is served.
      metricsUrl = await prometheus.listen(config.metricsHost, config.metricsPort);
      // Closed with the API's server, which app.close() closes.
      server.once('close', () => void prometheus.close());
      log.info({ url: `${metricsUrl}/metrics` }, 'Prometheus metrics listening');
    }
    await app.listen(config.port, config.host);
    const address = app.getHttpServer().address() as { port: number };
    log.info({ port: address.port, role, adapters: infra.adapters, dataDir: config.dataDir }, 'service started');
    return { app, infra, bootstrapKey, url: `http://127.0.0.1:${address.port}`, metricsUrl };
  } catch (e) {
    await prometheus?.close();
    await infra.close();
    throw e;
  }
}
