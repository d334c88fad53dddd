import bodyParser from 'body-parser';
import type { NextFunction, Request, Response } from 'express';
import { DomainError, invalid, ServiceConfig, yieldToLoop } from '@lib/platform';
import { DEFAULT_JSON_BODY_BYTES } from './body-limit';
import { checkJsonShape } from './json-shape';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set when the body deadline answered 408: whatever the handler does afterwards is not reported. */
    bodyTimedOut?: boolean;
    /** The body's bytes as received, on public routes (signatures are over them). */
    rawBody?: Buffer;
  }
}

/** How much body a caller may send, and how fast (docs/security.md). */
export interface BodyLimits {
  /** JSON bodies of authenticated callers on a route that declares no `@BodyLimit` (bytes after decompression). */
  readonly jsonBytes: number;
  /** Any body of a caller without credentials (public routes: the token endpoint). */
  readonly publicBytes: number;
  /** Time to receive a whole body once the route has accepted the caller. */
  readonly timeoutMs: number;
  readonly publicTimeoutMs: number;
  /** Bytes of bodies read at once, in all (REQUEST_BODIES_MAX_MB). */
  readonly inFlightBytes: number;
}

/** Authenticated JSON bodies up to 1 MB unless the route says more (`@BodyLimit`); 64 KB without credentials. */
export function bodyLimits(config: ServiceConfig): BodyLimits {
  return { jsonBytes: DEFAULT_JSON_BODY_BYTES, publicBytes: 64 * 1024, timeoutMs: config.requestBodyTimeoutMs, publicTimeoutMs: Math.min(10_000, config.requestBodyTimeoutMs), inFlightBytes: config.requestBodiesMaxBytes };
}

/** Bodies from this size on give the loop a turn between parsing, checking and validating. */
const LARGE_BODY_BYTES = 256 * 1024;

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/**
 * Reads request bodies after the guard has authenticated the caller from its headers (the service installs
 * no global body parser): an unauthenticated request is refused before a byte of its body is read, and only
 * public routes read bodies without credentials, within small limits. Decompression (gzip, deflate, br) is
 * bounded by the same limits, counted after inflating.
 */
export class RequestBodies {
  /** The parsers of authenticated bodies, one pair per route limit (a handful of values). */
  private readonly authenticated = new Map<number, Middleware[]>();
  private readonly anonymous: Middleware[];
  /** Bytes held for the bodies of requests not yet answered. */
  private inFlight = 0;

  constructor(private readonly limits: BodyLimits) {
    // Public routes keep the bytes: connector webhooks check platform signatures over the body as sent.
    this.anonymous = [bodyParser.json({ limit: limits.publicBytes, verify: (req, _res, buf) => ((req as Request).rawBody = buf) }), bodyParser.urlencoded({ extended: false, limit: limits.publicBytes })];
  }

  /**
   * Parses a JSON or form body into `req.body` and checks its shape; other bodies (multipart uploads) are
   * left to their route, under the same deadline. `jsonBytes` is the route's bound for an authenticated caller's
   * JSON (the default when it declares none).
   */
  async read(req: Request, res: Response, authenticated: boolean, jsonBytes = this.limits.jsonBytes): Promise<void> {
    if (req.complete && !hasBody(req)) return;
    const limit = authenticated ? jsonBytes : this.limits.publicBytes;
    // Refused unread: body-parser would read (and discard) a declared 40 MB before answering its 413.
    if (!compressed(req) && Number(req.headers['content-length']) > limit) throw tooLarge(limit);
    if (hasBody(req)) this.hold(req, res, limit);
    // The sender waited for this before uploading (apps/app.ts: the server leaves it to here).
    if (expectsContinue(req) && !res.headersSent) {
      res.writeContinue();
      req.continued = true;
    }
    this.startDeadline(req, res, authenticated ? this.limits.timeoutMs : this.limits.publicTimeoutMs);
    for (const parse of authenticated ? this.parsers(jsonBytes) : this.anonymous) {
      await new Promise<void>((resolve, reject) => parse(req, res, (err?: unknown) => (err ? reject(parserError(err, limit)) : resolve())));
    }
    if (req.body === undefined) return;
    // Parsing, checking and validating a 50 MB body are each a while of work: the loop gets turns between
    // (not worth a turn for the small bodies of most requests).
    const large = Number(req.headers['content-length'] ?? LARGE_BODY_BYTES) >= LARGE_BODY_BYTES;
    if (large) await yieldToLoop();
    checkJsonShape(req.body);
    if (large) await yieldToLoop();
  }

  private parsers(jsonBytes: number): Middleware[] {
    let parsers = this.authenticated.get(jsonBytes);
    if (!parsers) {
      parsers = [bodyParser.json({ limit: jsonBytes }), bodyParser.urlencoded({ extended: false, limit: this.limits.publicBytes })];
      this.authenticated.set(jsonBytes, parsers);
    }
    return parsers;
  }

  /**
   * Holds the body's bytes against the process's budget until the response is done (the parsed body and an
   * upload's file live that long): what it declares (Content-Length), or the route's limit when it does not say
   * or is compressed (inflated, it may reach the limit). Past the budget the request is refused with 503 before a
   * byte of its body is read, and its connection closed (the error filter's rule for unread bodies); a request
   * alone is always read, whatever its size (the body limits bound it).
   */
  private hold(req: Request, res: Response, limit: number): void {
    const declared = Number(req.headers['content-length']);
    // A body past the limit is refused (413) when declared or as it passes it: no more than the limit is held.
    const bytes = Number.isSafeInteger(declared) && declared > 0 && !compressed(req) ? Math.min(declared, limit) : limit;
    if (this.inFlight > 0 && this.inFlight + bytes > this.limits.inFlightBytes) {
      const mb = (n: number) => Math.ceil(n / 2 ** 20);
      throw new DomainError('unavailable', 'request.busy', `The service is reading ${mb(this.inFlight)} MB of other request bodies (its bound is ${mb(this.limits.inFlightBytes)} MB); retry shortly`, { retryAfterSeconds: 1 });
    }
    this.inFlight += bytes;
    res.once('close', () => (this.inFlight -= bytes));
  }

  /** Answers 408 and closes the connection when the body has not arrived in time. */
  private startDeadline(req: Request, res: Response, ms: number): void {
    if (req.complete) return;
    const timer = setTimeout(() => {
      if (req.complete || res.headersSent) return;
      req.bodyTimedOut = true;
      res.setHeader('connection', 'close');
      res.status(408).json({ messages: [`The request body did not arrive within ${Math.round(ms / 1000)} s`], request_id: req.requestId });
      res.once('finish', () => req.socket.destroy());
    }, ms);
    timer.unref();
    const done = () => clearTimeout(timer);
    req.once('end', done);
    req.once('close', done);
    res.once('finish', done);
  }
}

/** The sender waits for "100 Continue" before it sends its body (`Expect: 100-continue`). */
export function expectsContinue(req: Request): boolean {
  return /(?:^|\W)100-continue(?:$|\W)/i.test(req.headers.expect ?? '');
}

function compressed(req: Request): boolean {
  const encoding = req.headers['content-encoding'];
  return encoding !== undefined && encoding.toLowerCase() !== 'identity';
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** body-parser's errors (and zlib's, which it passes on) as the service's typed errors. */
function parserError(err: unknown, limit: number): DomainError {
  if (err instanceof DomainError) return err;
  const e = err as { status?: unknown; type?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? e.message : 'unreadable body';
  if (e.status === 413) return tooLarge(limit);
  if (e.status === 415) return new DomainError('unsupported_media', 'request.unsupported_encoding', `The request body cannot be read: ${message}`);
  if (e.type === 'request.aborted') return invalid('request.aborted', 'The request body ended early', { body: 'ended early' });
  if (e.type === 'entity.parse.failed') return invalid('request.malformed_json', `The request body is not valid JSON: ${message}`, { body: 'not valid JSON' });
  return invalid('request.malformed_body', `The request body cannot be read: ${message}`, { body: message });
}

const tooLarge = (limit: number): DomainError =>
  new DomainError('too_large', 'request.too_large', `The request body is too large: this route takes at most ${sizeOf(limit)} (after decompression)`);

const sizeOf = (bytes: number): string => (bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MB` : `${bytes / 1024} KB`);
