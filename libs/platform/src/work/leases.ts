import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AppendCondition, ConcurrencyError, EventStore } from '../event-store/event-store.port';
import { NewEvent, streamId } from '../event-store/events';
import type { Clock } from '../kernel/clock';
import { outsideTrace } from '../telemetry/tracing';
import { decideAcquireLease, decideReleaseLease, LEASE_CATEGORY, LeaseEvent, leaseFold, leaseHolderAt, LeaseState } from './lease';

/** A lease this process holds until it releases it, or loses it (then `signal` aborts). */
export interface Lease {
  readonly name: string;
  readonly holder: string;
  /** Aborts when the lease is released or lost; work checks it between steps. */
  readonly signal: AbortSignal;
  readonly held: boolean;
  /**
   * The fence of this holding: an append made with it as its condition is refused (`FencedError`) once another holder
   * has acquired the lease, even if this process has not noticed yet (paused, cut off from the store).
   */
  readonly fence: AppendCondition;
  /** Appends `LeaseReleased` (nothing if already lost) and stops renewing. */
  release(): Promise<void>;
}

/** One holder at a time per lease name, across processes (docs/workers.md). */
export interface Leases {
  /** This process's holder id. */
  readonly holder: string;
  /** Takes the lease if it is free or expired; undefined when another holder has it. */
  tryAcquire(name: string): Promise<Lease | undefined>;
  /** The current holder, if the lease is held and not expired. */
  holderOf(name: string): Promise<string | undefined>;
}

export const LEASES = Symbol('Leases');

export interface LeaseOptions {
  /** How long a lease holds without renewal. */
  readonly ttlMs: number;
  /** How often the holder renews; below `ttlMs`. */
  readonly renewMs: number;
  readonly holder?: string;
  readonly log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
}

/** `<hostname>:<pid>:<random>`: unique per process, so a restarted process is a new holder. */
export function processHolderId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export const leaseStream = (name: string): string => streamId(LEASE_CATEGORY, name);

/** Leases as streams `lease-<name>`, using only `readStream` and `append` with an expected revision: any adapter. */
export class EventStoreLeases implements Leases {
  readonly holder: string;

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly options: LeaseOptions,
  ) {
    if (options.renewMs >= options.ttlMs) throw new Error('A lease must be renewed more often than it expires');
    this.holder = options.holder ?? processHolderId();
  }

  async holderOf(name: string): Promise<string | undefined> {
    return leaseHolderAt((await this.load(name)).state, this.clock.now());
  }

  async tryAcquire(name: string): Promise<Lease | undefined> {
    const { state, revision } = await this.load(name);
    const event = decideAcquireLease(state, name, this.holder, this.clock.now(), this.options.ttlMs);
    if (!event) return undefined;
    try {
      const appended = await this.append(name, event, revision);
      // `appended` is the revision of this LeaseAcquired: the fence's start.
      return new HeldLease(this, name, appended, Date.parse((event.data as { expiresAt: string }).expiresAt));
    } catch (e) {
      if (e instanceof ConcurrencyError) return undefined;
      throw e;
    }
  }

  /** @internal Appends one lease event at `revision` (-1: the stream must not exist); returns the new revision. */
  async append(name: string, event: LeaseEvent, revision: number): Promise<number> {
    const stored: NewEvent = {
      id: randomUUID(),
      type: event.type,
      data: event.data,
      metadata: { actor: { type: 'system', id: this.holder }, correlationId: `lease:${name}`, schemaVersion: 1 },
    };
    const result = await this.store.append(leaseStream(name), [stored], { expectedRevision: revision < 0 ? 'no_stream' : revision });
    return result.nextExpectedRevision;
  }

  /** @internal */
  get settings(): { clock: Clock; options: LeaseOptions } {
    return { clock: this.clock, options: this.options };
  }

  private async load(name: string): Promise<{ state: LeaseState; revision: number }> {
    const history = await this.store.readStream(leaseStream(name));
    const state = history.reduce<LeaseState>((s, e) => leaseFold.evolve(s, e as unknown as LeaseEvent), leaseFold.initialState);
    return { state, revision: history.length ? history[history.length - 1].revision : -1 };
  }
}

class HeldLease implements Lease {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  /** Renewals and the release run one after another, each at the revision the previous one left. */
  private chain: Promise<unknown> = Promise.resolve();
  readonly fence: AppendCondition;

  constructor(
    private readonly leases: EventStoreLeases,
    readonly name: string,
    private revision: number,
    private expiresAt: number,
  ) {
    this.fence = { streamId: leaseStream(name), afterRevision: revision, types: ['LeaseAcquired'] };
    // Outside the trace of whatever took the lease (a request's turn): its renewals for the lease's life are not that request's.
    this.timer = outsideTrace(() => setInterval(() => void this.renew(), leases.settings.options.renewMs));
    this.timer.unref();
  }

  get holder(): string {
    return this.leases.holder;
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  get held(): boolean {
    return !this.controller.signal.aborted;
  }

  /** Extends the lease; false when it was lost. */
  renew(): Promise<boolean> {
    return this.serial(async () => {
      if (!this.held) return false;
      const { clock, options } = this.leases.settings;
      const now = clock.now();
      const expiresAt = now.getTime() + options.ttlMs;
      try {
        this.revision = await this.leases.append(this.name, { type: 'LeaseRenewed', data: { lease: this.name, holder: this.holder, expiresAt: new Date(expiresAt).toISOString() } }, this.revision);
        this.expiresAt = expiresAt;
        return true;
      } catch (e) {
        if (e instanceof ConcurrencyError) this.lose('taken over by another holder');
        else if (clock.now().getTime() >= this.expiresAt) this.lose(`not renewed before expiry: ${(e as Error).message}`);
        else options.log?.('warn', 'lease renewal failed; retrying', { lease: this.name, err: (e as Error).message });
        return this.held;
      }
    });
  }

  release(): Promise<void> {
    return this.serial(async () => {
      if (!this.held) return;
      clearInterval(this.timer);
      const event = decideReleaseLease({ status: 'held', holder: this.holder, expiresAt: this.expiresAt }, this.name, this.holder, this.leases.settings.clock.now());
      this.controller.abort(new Error(`lease ${this.name} released`));
      try {
        if (event) await this.leases.append(this.name, event, this.revision);
      } catch (e) {
        // Taken over meanwhile: nothing of ours to release.
        if (!(e instanceof ConcurrencyError)) throw e;
      }
    });
  }

  /** Stops renewing without releasing, as a holder that died would (tests). */
  abandon(): void {
    clearInterval(this.timer);
  }

  private lose(reason: string): void {
    clearInterval(this.timer);
    this.leases.settings.options.log?.('warn', 'lease lost', { lease: this.name, holder: this.holder, reason });
    this.controller.abort(new Error(`lease ${this.name} lost: ${reason}`));
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.chain.then(fn, fn);
    this.chain = result.catch(() => undefined);
    return result;
  }
}

/** The lease implementation behind `Leases`, for tests that renew or abandon by hand. */
export type ControllableLease = Lease & { renew(): Promise<boolean>; abandon(): void };
