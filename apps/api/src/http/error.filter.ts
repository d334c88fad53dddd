import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DomainError, ErrorKind, isConnectionError, STORE_RETRY_AFTER_SECONDS } from '@lib/platform';
import type { Logger } from 'pino';
import { answerUnread, DrainBounds, drainBounds } from './unread-body';

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  upstream: 502,
  unavailable: 503,
  timeout: 504,
  request_timeout: 408,
};

/**
 * The one place errors become HTTP: the reference API's body `{messages, request_id}`, plus `field_errors`
 * on 400 and `id` on 404. Unexpected errors are logged and answered with a bare 500, never a stack trace.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(
    private readonly log: Logger,
    /** What is read of a refused body before the connection closes (unread-body.ts). */
    private readonly drain: DrainBounds = drainBounds(60_000),
  ) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const requestId = req.requestId;
    if (req.bodyTimedOut) return;
    if (res.headersSent) {
      this.log.error({ err: error, requestId }, 'error after response started');
      res.end();
      return;
    }
    const answer = (status: number, payload: object) => {
      // Refused before its body was read (wrong credentials, too large): the connection closes after the answer.
      if (!req.complete) answerUnread(req, res, status, payload, this.drain);
      else res.status(status).json(payload);
    };
    if (error instanceof DomainError) {
      const status = STATUS[error.kind];
      const retryAfter = error.details.retryAfterSeconds ?? (storeUnreachable(error) ? STORE_RETRY_AFTER_SECONDS : undefined);
      if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
      // A store's cause (the driver's words, its password already masked) goes to the log, never to the answer.
      if (status >= 500) this.log.warn({ code: error.code, requestId, ...(error.cause instanceof Error ? { cause: error.cause.message } : {}) }, error.message);
      answer(status, {
        messages: [error.message],
        request_id: requestId,
        ...(error.details.fieldErrors ? { field_errors: error.details.fieldErrors } : {}),
        ...(error.details.id !== undefined ? { id: error.details.id } : {}),
      });
      return;
    }
    if (error instanceof HttpException) {
      const status = error.getStatus();
      answer(status, { messages: [httpMessage(error, status)], request_id: requestId });
      return;
    }
    const parserStatus = bodyParserStatus(error);
    if (parserStatus) {
      answer(parserStatus, { messages: [(error as Error).message], request_id: requestId });
      return;
    }
    // A store's driver error that its adapter did not translate: the database is down or restarting, which a retry
    // after a moment may outlive; not a defect of the request (docs/deployment.md, "Several hosts (PostgreSQL)").
    if (isConnectionError(error)) {
      this.log.warn({ code: (error as { code?: unknown }).code, requestId }, 'a store cannot be reached');
      res.setHeader('Retry-After', String(STORE_RETRY_AFTER_SECONDS));
      answer(HttpStatus.SERVICE_UNAVAILABLE, { messages: ['A store of the service cannot be reached right now (the database is down, restarting or cut off): retry in a few seconds.'], request_id: requestId });
      return;
    }
    this.log.error({ err: error, requestId }, 'unhandled error');
    answer(HttpStatus.INTERNAL_SERVER_ERROR, { messages: ['Internal server error.'], request_id: requestId });
  }
}

/**
 * A store or engine that cannot be reached (`<store>.unavailable`: `event_store.unavailable`, `search.unavailable`):
 * worth a retry in a moment, unlike a missing setting (`encoder.not_configured`), which no wait mends.
 */
function storeUnreachable(error: DomainError): boolean {
  return error.kind === 'unavailable' && /^[a-z_]+\.unavailable$/.test(error.code);
}

function httpMessage(error: HttpException, status: number): string {
  if (status === 404) return 'No such route';
  const body = error.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  return Array.isArray(message) ? message.join('; ') : typeof message === 'string' ? message : error.message;
}

/** body-parser signals malformed JSON (400) and oversize bodies (413) through `status` on a plain error. */
function bodyParserStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown; type?: unknown })?.status;
  const type = (error as { type?: unknown })?.type;
  return typeof status === 'number' && typeof type === 'string' && status >= 400 && status < 500 ? status : undefined;
}
