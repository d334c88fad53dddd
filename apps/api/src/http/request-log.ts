import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { redactUrl } from './redact';

type Level = 'debug' | 'info' | 'error';

/**
 * One log line per finished request: `debug` when it succeeded, `info` for a 4xx, `error` for a 5xx or a failed
 * response, with the request id, method, redacted URL, status and time. Why not pino-http: it builds a child
 * logger per request (serialising and redacting the request up front) even when the level then drops the line,
 * as it does for every success at the default `info`: 6 µs a request against 0.5 µs here (docs/benchmarks/2026-11-25-session-14.md,
 * session 14). Nothing is built unless the line is written.
 */
export const requestLog = (log: Logger) => (req: Request, res: Response, next: NextFunction): void => {
  const started = Date.now();
  const done = (err?: Error): void => {
    res.off('finish', done);
    res.off('close', done);
    res.off('error', done);
    const failed = err ?? (res.statusCode >= 500 ? new Error(`failed with status code ${res.statusCode}`) : undefined);
    const level: Level = failed ? 'error' : res.statusCode >= 400 ? 'info' : 'debug';
    if (!log.isLevelEnabled(level)) return;
    const fields = {
      req: { id: req.requestId, method: req.method, url: redactUrl(req.originalUrl ?? req.url) },
      res: { statusCode: res.headersSent ? res.statusCode : null },
      responseTime: Date.now() - started,
    };
    if (failed) log[level]({ ...fields, err: failed }, 'request errored');
    else log[level](fields, res.writableFinished ? 'request completed' : 'request aborted');
  };
  res.on('finish', done);
  res.on('close', done);
  res.on('error', done);
  next();
};
