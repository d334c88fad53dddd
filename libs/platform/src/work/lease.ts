import { assertNever } from '../kernel/errors';

/** Events of a lease stream `lease-<name>` (docs/workers.md). */
export type LeaseEvent =
  | { type: 'LeaseAcquired'; data: { lease: string; holder: string; acquiredAt: string; expiresAt: string } }
  | { type: 'LeaseRenewed'; data: { lease: string; holder: string; expiresAt: string } }
  | { type: 'LeaseReleased'; data: { lease: string; holder: string; releasedAt: string } };

export const LEASE_EVENT_TYPES = ['LeaseAcquired', 'LeaseRenewed', 'LeaseReleased'] as const;
export const LEASE_CATEGORY = 'lease';

export type LeaseState = { readonly status: 'free' } | { readonly status: 'held'; readonly holder: string; readonly expiresAt: number };

export const leaseFold = {
  initialState: { status: 'free' } as LeaseState,
  evolve(state: LeaseState, event: LeaseEvent): LeaseState {
    switch (event.type) {
      case 'LeaseAcquired':
      case 'LeaseRenewed':
        return { status: 'held', holder: event.data.holder, expiresAt: Date.parse(event.data.expiresAt) };
      case 'LeaseReleased':
        return state.status === 'held' && state.holder === event.data.holder ? { status: 'free' } : state;
      default:
        return assertNever(event);
    }
  },
};

/** Who may hold the lease at `now`: nobody (free or expired), or its holder. */
export function leaseHolderAt(state: LeaseState, now: Date): string | undefined {
  return state.status === 'held' && state.expiresAt > now.getTime() ? state.holder : undefined;
}

/** Taking the lease: refused (returns undefined) while another holder's lease has not expired. */
export function decideAcquireLease(state: LeaseState, lease: string, holder: string, now: Date, ttlMs: number): LeaseEvent | undefined {
  const current = leaseHolderAt(state, now);
  if (current !== undefined && current !== holder) return undefined;
  return { type: 'LeaseAcquired', data: { lease, holder, acquiredAt: now.toISOString(), expiresAt: new Date(now.getTime() + ttlMs).toISOString() } };
}

/**
 * Renewing: only the last holder may renew, even past expiry (the expected revision proves nobody took it
 * in between). Undefined means the lease was lost.
 */
export function decideRenewLease(state: LeaseState, lease: string, holder: string, now: Date, ttlMs: number): LeaseEvent | undefined {
  if (state.status !== 'held' || state.holder !== holder) return undefined;
  return { type: 'LeaseRenewed', data: { lease, holder, expiresAt: new Date(now.getTime() + ttlMs).toISOString() } };
}

/** Releasing a lease one no longer holds appends nothing. */
export function decideReleaseLease(state: LeaseState, lease: string, holder: string, now: Date): LeaseEvent | undefined {
  if (state.status !== 'held' || state.holder !== holder) return undefined;
  return { type: 'LeaseReleased', data: { lease, holder, releasedAt: now.toISOString() } };
}
