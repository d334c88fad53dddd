import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/** How long a close waits for the requests in flight (a streamed answer may run long) before cutting them. */
export const DRAIN_MS = 10_000;
/** While draining, connections that fell idle are closed this often (Node's close does it once, when called). */
const IDLE_SWEEP_MS = 50;

/**
 * Makes `app.close()` stop serving before anything else. Nest's close runs the modules' destroy hooks (encoders,
 * the extraction and sandbox pools) and only then closes the HTTP server, which meanwhile keeps taking requests: a
 * close that waited 9 s on a destroy hook accepted 2,905 documents meanwhile. And Node's `server.close()` never
 * ends while a keep-alive client keeps its connection busy. So, first: no new connections, `Connection: close` on
 * every answer from then on, idle connections closed as they fall idle, the requests in flight finished (at most
 * {@link DRAIN_MS}, then the connections cut); then Nest's close. Call before `listen`: the middleware must come
 * before the routes.
 */
export function stopServingFirst(app: INestApplication, server: Server, drainMs = DRAIN_MS): void {
  let stopping: Promise<void> | undefined;
  app.use((_req: Request, res: Response, next: NextFunction) => {
    if (stopping) res.setHeader('connection', 'close');
    next();
  });
  // Nest's own close, from the prototype: `app.close` read through the proxy calls whatever `close` is at call time.
  const nestClose = (Object.getPrototypeOf(app) as INestApplication).close;
  const close = async (...args: Parameters<INestApplication['close']>): Promise<void> => {
    stopping ??= drain(server, drainMs);
    await stopping;
    return nestClose.apply(app, args);
  };
  // Defined, not assigned: Nest hands out its application behind a proxy whose `set` ignores assignments; a proxy
  // without a `defineProperty` trap defines on the application itself, where the proxy's `get` finds it.
  Object.defineProperty(app, 'close', { value: close, configurable: true, writable: true });
}

function drain(server: Server, drainMs: number): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const cut = setTimeout(() => server.closeAllConnections(), drainMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(cut);
      resolve();
    });
  });
}
