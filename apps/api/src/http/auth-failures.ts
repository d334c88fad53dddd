import { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { DomainError } from '@lib/platform';

const REMEMBERED_FOR_MS = 24 * 60 * 60 * 1000;
const MAX_REMEMBERED = 100_000;

export const rateLimited = (res: RateLimiterRes, what: string): DomainError =>
  new DomainError('rate_limited', 'auth.rate_limited', `Too many ${what}; retry after ${Math.ceil(res.msBeforeNext / 1000)} s`, {
    retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  });

/** Counts one request in `bucket`; past the limit, the 429 of `rateLimited` naming `what`. */
export async function consumeOr429(limiter: RateLimiterAbstract, bucket: string, what: string): Promise<void> {
  try {
    await limiter.consume(bucket);
  } catch (e) {
    if (e instanceof RateLimiterRes) throw rateLimited(e, what);
    throw e;
  }
}

/**
 * Counts failed authentications per client address (API keys, tokens and the token endpoint alike) without
 * locking out the people who share that address: once an address is over its limit, its requests are
 * answered 429 unless they carry a credential that already succeeded from that address before. A valid
 * credential new to the address waits like a guess would, so the answer tells an attacker nothing; the
 * callers already working from behind the same proxy go on working. The failures count in the shared store
 * (every API process together); which credentials worked from where is remembered per process.
 */
export class AuthFailures {
  /** `address␀credential` → when it succeeded last; a Map keeps insertion order, oldest first. */
  private readonly known = new Map<string, number>();

  /** `failures` counts failed authentications per address (points per minute: the limit). */
  constructor(private readonly failures: RateLimiterAbstract, private readonly now: () => number = Date.now) {}

  /** Whether the address is over its limit now (checked before a credential is verified). */
  async blockedFor(address: string): Promise<RateLimiterRes | undefined> {
    const seen = await this.failures.get(address);
    return seen && seen.remainingPoints <= 0 ? seen : undefined;
  }

  async failed(address: string): Promise<void> {
    await this.failures.penalty(address, 1);
  }

  /**
   * Call with the outcome of a verified credential: throws 429 when the address is blocked and the credential
   * has not succeeded from it before, and remembers it otherwise.
   */
  admit(address: string, credential: string, blocked: RateLimiterRes | undefined, what: string): void {
    const key = `${address}\u0000${credential}`;
    const last = this.known.get(key);
    const now = this.now();
    const knownHere = last !== undefined && now - last < REMEMBERED_FOR_MS;
    if (blocked && !knownHere) throw rateLimited(blocked, what);
    this.known.delete(key);
    this.known.set(key, now);
    if (this.known.size > MAX_REMEMBERED) this.known.delete(this.known.keys().next().value as string);
  }
}
