import { DomainError } from './errors';
import { isConnectionError, storeUnavailable, STORE_RETRY_AFTER_SECONDS } from './store-errors';

const withCode = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

describe('isConnectionError', () => {
  it.each([
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'terminating connection due to crash of another server process'],
    ['57P03', 'the database system is starting up'],
    ['08006', 'connection failure'],
    ['08001', 'could not connect'],
    ['08P01', 'protocol violation'],
    ['53300', 'sorry, too many clients already'],
  ])('is true for the server code %s (%s)', (code, message) => {
    expect(isConnectionError(withCode(code, message))).toBe(true);
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])('is true for the socket error %s', (code) => {
    expect(isConnectionError(withCode(code, `connect ${code} 10.0.0.2:5432`))).toBe(true);
  });

  it.each(['Connection terminated unexpectedly', 'Connection terminated', 'Connection ended unexpectedly', 'Connection terminated due to connection timeout', 'timeout exceeded when trying to connect', 'Client has encountered a connection error and is not queryable', 'Client was closed and is not queryable'])(
    "is true for node-postgres's own %j",
    (message) => {
      expect(isConnectionError(new Error(message))).toBe(true);
    },
  );

  it.each([
    ['23505', 'duplicate key value violates unique constraint'],
    ['42P01', 'relation "events" does not exist'],
    ['40001', 'could not serialize access'],
    ['22P02', 'invalid input syntax'],
    ['28P01', 'password authentication failed'],
  ])('is false for the statement or setup error %s (%s)', (code, message) => {
    expect(isConnectionError(withCode(code, message))).toBe(false);
  });

  it('is false for errors that are not about the connection', () => {
    expect(isConnectionError(new Error('Cannot use a pool after calling end on the pool'))).toBe(false);
    expect(isConnectionError(new Error('boom'))).toBe(false);
    expect(isConnectionError(new DomainError('conflict', 'x.y', 'no'))).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
    expect(isConnectionError('ECONNREFUSED')).toBe(false);
    // A database error whose text happens to start like a pg message is judged by its code.
    expect(isConnectionError(withCode('42601', 'Connection terminated near "x"'))).toBe(false);
  });

  it("looks through a cause and an AggregateError's errors (a name with several addresses)", () => {
    expect(isConnectionError(new Error('Connection terminated due to connection timeout', { cause: new Error('timeout') }))).toBe(true);
    expect(isConnectionError(new Error('append failed', { cause: withCode('ECONNRESET') }))).toBe(true);
    expect(isConnectionError(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]))).toBe(true);
    expect(isConnectionError(new AggregateError([withCode('ECONNREFUSED'), withCode('42P01')]))).toBe(false);
    expect(isConnectionError(new AggregateError([]))).toBe(false);
  });

  it('stops on a cause cycle', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    a.cause = a;
    expect(isConnectionError(a)).toBe(false);
  });
});

describe('storeUnavailable', () => {
  it('is a 503-kind error with a stable code and a retry delay, never the driver text', () => {
    const e = storeUnavailable('event_store', 'The event store');
    expect(e).toBeInstanceOf(DomainError);
    expect(e).toMatchObject({ kind: 'unavailable', code: 'event_store.unavailable', details: { retryAfterSeconds: STORE_RETRY_AFTER_SECONDS } });
    expect(e.message).toMatch(/^The event store cannot be reached/);
  });
});
