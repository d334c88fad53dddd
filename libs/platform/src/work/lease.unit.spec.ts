import { fixedClock } from '../kernel/clock';
import { decideAcquireLease, decideReleaseLease, decideRenewLease, LeaseEvent, leaseFold, leaseHolderAt, LeaseState } from './lease';

const TTL = 15_000;
const fold = (events: LeaseEvent[]): LeaseState => events.reduce(leaseFold.evolve, leaseFold.initialState);

describe('lease decider', () => {
  const clock = fixedClock('2025-01-01T00:00:00Z');

  it('a free lease is taken, with an expiry one TTL ahead', () => {
    const event = decideAcquireLease(leaseFold.initialState, 'job_1', 'a', clock.now(), TTL);
    expect(event).toEqual({ type: 'LeaseAcquired', data: { lease: 'job_1', holder: 'a', acquiredAt: '2025-01-01T00:00:00.000Z', expiresAt: '2025-01-01T00:00:15.000Z' } });
  });

  it('a held lease is refused to another holder until it expires, then taken over', () => {
    const held = fold([decideAcquireLease(leaseFold.initialState, 'job_1', 'a', clock.now(), TTL)!]);
    const later = fixedClock(clock.now());
    later.advance(TTL - 1);
    expect(decideAcquireLease(held, 'job_1', 'b', later.now(), TTL)).toBeUndefined();
    expect(leaseHolderAt(held, later.now())).toBe('a');
    later.advance(1);
    expect(leaseHolderAt(held, later.now())).toBeUndefined();
    expect(decideAcquireLease(held, 'job_1', 'b', later.now(), TTL)?.data.holder).toBe('b');
  });

  it('a renewal moves the expiry; only the holder renews', () => {
    const start = clock.now();
    const held = fold([decideAcquireLease(leaseFold.initialState, 'l', 'a', start, TTL)!]);
    const at = new Date(start.getTime() + 5_000);
    const renewed = decideRenewLease(held, 'l', 'a', at, TTL)!;
    expect(renewed).toEqual({ type: 'LeaseRenewed', data: { lease: 'l', holder: 'a', expiresAt: '2025-01-01T00:00:20.000Z' } });
    expect(leaseHolderAt(fold([decideAcquireLease(leaseFold.initialState, 'l', 'a', start, TTL)!, renewed]), new Date(start.getTime() + 19_000))).toBe('a');
    expect(decideRenewLease(held, 'l', 'b', at, TTL)).toBeUndefined();
  });

  it('a holder that was taken over has lost the lease: it can neither renew nor release', () => {
    const start = clock.now();
    const late = new Date(start.getTime() + TTL + 1);
    const takenOver = fold([decideAcquireLease(leaseFold.initialState, 'l', 'a', start, TTL)!, decideAcquireLease(fold([]), 'l', 'b', late, TTL)!]);
    expect(decideRenewLease(takenOver, 'l', 'a', late, TTL)).toBeUndefined();
    expect(decideReleaseLease(takenOver, 'l', 'a', late)).toBeUndefined();
    expect(leaseHolderAt(takenOver, late)).toBe('b');
  });

  it('a released lease is free at once', () => {
    const start = clock.now();
    const acquired = decideAcquireLease(leaseFold.initialState, 'l', 'a', start, TTL)!;
    const released = decideReleaseLease(fold([acquired]), 'l', 'a', start)!;
    expect(released.type).toBe('LeaseReleased');
    const state = fold([acquired, released]);
    expect(leaseHolderAt(state, start)).toBeUndefined();
    expect(decideAcquireLease(state, 'l', 'b', start, TTL)?.data.holder).toBe('b');
  });
});
