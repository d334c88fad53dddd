import { EventEmitter } from 'node:events';
import type { NextFunction, Request, Response } from 'express';
import pino from 'pino';
import { requestLog } from './request-log';

function capture(level: string): { lines: Record<string, unknown>[]; log: pino.Logger } {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { lines, log };
}

function serve(log: pino.Logger, url: string, statusCode: number): void {
  const req = { requestId: 'req1', method: 'GET', url, originalUrl: url } as unknown as Request;
  const res = Object.assign(new EventEmitter(), { statusCode, headersSent: true, writableFinished: true }) as unknown as Response;
  requestLog(log)(req, res, (() => undefined) as NextFunction);
  res.emit('finish');
  res.emit('close');
}

describe('requestLog', () => {
  it('writes one line per request, with credentials in the query string masked', () => {
    const { lines, log } = capture('debug');
    serve(log, '/v2/corpora?api_key=zut_secret_value&limit=10', 200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'request completed', req: { id: 'req1', method: 'GET', url: '/v2/corpora?api_key=****&limit=10' }, res: { statusCode: 200 } });
    expect(JSON.stringify(lines)).not.toContain('zut_secret_value');
  });

  it('at the default level logs client and server errors only', () => {
    const { lines, log } = capture('info');
    serve(log, '/v2/corpora', 200);
    serve(log, '/v2/corpora/missing', 404);
    serve(log, '/v2/corpora', 503);
    expect(lines.map((l) => [l.level, l.msg, (l.res as { statusCode: number }).statusCode])).toEqual([
      [30, 'request completed', 404],
      [50, 'request errored', 503],
    ]);
  });
});
