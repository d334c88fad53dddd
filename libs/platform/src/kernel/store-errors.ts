import { DomainError } from './errors';

/**
 * PostgreSQL server codes that mean "the server cannot serve this connection now", not "the statement is wrong":
 * class 08 (connection exception) and the shutdown/startup states of class 57 (a restart or failover), plus 53300
 * (too many connections), which a client can only wait out.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
/** Socket errors of a server that went away, or of a link that went down (node's system error codes). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN']);
/**
 * The errors node-postgres raises itself, without a code, when a connection ends or cannot be made (pg/lib/client.js,
 * pg-pool/index.js). "Cannot use a pool after calling end" is left out: that is this process shutting down.
 */
const PG_MESSAGES = [/^Connection terminated\b/, /^Connection ended\b/, /^timeout exceeded when trying to connect$/, /is not queryable$/, /^Query read timeout$/];

/**
 * Whether `e` says the database could not be reached (down, restarting, link cut) rather than that the request was
 * wrong: such a failure is worth a retry after a moment, so the edge answers it 503 with Retry-After, not 500.
 * Looks through `cause` and an AggregateError's `errors` (node's connect to a name with several addresses).
 */
export function isConnectionError(e: unknown, depth = 0): boolean {
  if (depth > 4 || typeof e !== 'object' || e === null) return false;
  const { code, message, cause, errors } = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && (SERVER_CODES.has(code) || code.startsWith('08') || SOCKET_CODES.has(code))) return true;
  if (typeof message === 'string' && typeof code !== 'string' && PG_MESSAGES.some((m) => m.test(message))) return true;
  if (cause !== undefined && isConnectionError(cause, depth + 1)) return true;
  return Array.isArray(errors) && errors.length > 0 && errors.every((inner) => isConnectionError(inner, depth + 1));
}

/** How long a client should wait before retrying a request refused because a store is unreachable. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/**
 * The error a store adapter raises for a connection failure (503 with Retry-After at the edge). `store` names the
 * store (`event_store`, `read_store`, `artifact_store`) for the stable code `<store>.unavailable`; the driver's words
 * are not repeated, since a connection error may name the server's address.
 */
export function storeUnavailable(store: string, what: string): DomainError {
  return new DomainError('unavailable', `${store}.unavailable`, `${what} cannot be reached right now (the database is down, restarting or cut off): retry in a few seconds`, {
    retryAfterSeconds: STORE_RETRY_AFTER_SECONDS,
  });
}
