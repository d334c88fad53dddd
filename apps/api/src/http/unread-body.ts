import type { Request, Response } from 'express';
import { expectsContinue } from './request-body';
import { jsonAnswer } from './send-json';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set when the service answered `Expect: 100-continue` with 100 and the sender may be uploading. */
    continued?: boolean;
  }
}

/** How much of a refused body is read and thrown away so that its sender sees the answer (docs/security.md). */
export interface DrainBounds {
  readonly bytes: number;
  readonly ms: number;
}

/**
 * 64 MB: past the largest route bound (50 MB), so a document a little too large still gets its 413 read. Reading and
 * discarding costs the service less than the accepted request the same credential could send instead.
 */
export const DRAIN_BYTES = 64 * 2 ** 20;
/** At most 10 s, and never longer than a body may take to arrive (REQUEST_BODY_TIMEOUT_MS). */
export const drainBounds = (bodyTimeoutMs: number): DrainBounds => ({ bytes: DRAIN_BYTES, ms: Math.min(10_000, bodyTimeoutMs) });

/**
 * Answers a request that is refused while its body may still be on its way.
 *
 * A sender that does not wait for `100-continue` (Node's `fetch` and `http`, most SDKs) writes its whole body.
 * Closing the connection with that body unread makes the kernel reset it, and such a sender reports the reset
 * (EPIPE, ECONNRESET) instead of the answer: a 413 or 403 it never reads. So for a caller whose credential is valid
 * the answer is written at once, with `Connection: close`, and the rest of the body is read and discarded within the
 * bounds; the connection ends after it (or is cut when the bounds are passed, as before). Anyone else, a body
 * declared past the bounds, and a sender still waiting for 100 (it sends nothing until then) are answered and
 * closed at once: an unknown sender gets no more of the service than its answer.
 */
export function answerUnread(req: Request, res: Response, status: number, payload: unknown, bounds: DrainBounds): void {
  res.setHeader('connection', 'close');
  const bytes = jsonAnswer(res, status, payload);
  if (!drains(req, bounds)) {
    res.end(bytes);
    return;
  }
  // The whole answer goes now (its length is declared, so the sender has all of it); the response ends, and with
  // it the connection, once the body has been read.
  res.write(bytes);
  let read = 0;
  let done = false;
  const finish = (cut: boolean) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    req.removeListener('data', count);
    if (cut) req.socket.destroy();
    else res.end();
  };
  const count = (chunk: Buffer) => {
    read += chunk.length;
    if (read > bounds.bytes) finish(true);
  };
  const timer = setTimeout(() => finish(true), bounds.ms);
  timer.unref();
  req.on('data', count);
  req.once('end', () => finish(false));
  req.once('close', () => finish(!req.complete));
  req.resume();
}

function drains(req: Request, bounds: DrainBounds): boolean {
  if (!req.principal) return false;
  if (expectsContinue(req) && !req.continued) return false;
  const declared = Number(req.headers['content-length']);
  return !(declared > bounds.bytes);
}
