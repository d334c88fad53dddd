/**
 * Typed errors with stable codes. The core never knows HTTP statuses: the API's exception filter maps
 * `kind` to a status and writes the reference API's error body.
 */
export type ErrorKind =
  | 'invalid'
  | 'not_found'
  | 'conflict'
  | 'unauthenticated'
  | 'forbidden'
  | 'too_large'
  | 'unsupported_media'
  | 'unprocessable'
  | 'rate_limited'
  | 'unavailable'
  | 'timeout'
  /** The client did not send its request in time (HTTP 408); `timeout` is the service's own deadline. */
  | 'request_timeout'
  | 'upstream'
  | 'internal';

export interface ErrorDetails {
  /** Field path → message, for validation failures (`field_errors` in the error body). */
  readonly fieldErrors?: Readonly<Record<string, string>>;
  /** The id that could not be found (`id` in the 404 body). */
  readonly id?: string;
  /** Seconds after which a rate-limited or unavailable call may be retried. */
  readonly retryAfterSeconds?: number;
}

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalid = (code: string, message: string, fieldErrors?: Record<string, string>): DomainError =>
  new DomainError('invalid', code, message, { fieldErrors });

export const notFound = (code: string, message: string, id: string): DomainError =>
  new DomainError('not_found', code, message, { id });

export const conflict = (code: string, message: string): DomainError => new DomainError('conflict', code, message);

export const unavailable = (code: string, message: string, retryAfterSeconds?: number): DomainError =>
  new DomainError('unavailable', code, message, { retryAfterSeconds });

export function isDomainError(e: unknown): e is DomainError {
  return e instanceof DomainError;
}

/** Exhaustiveness guard for `switch` statements over discriminated unions. */
export function assertNever(value: never): never {
  throw new Error(`Unhandled case: ${JSON.stringify(value)}`);
}
