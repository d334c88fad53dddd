import { setMaxListeners } from 'node:events';
import type { Lease, Leases } from './leases';

/** The lease a process holds while it is alive and may run work it marked with its holder id. */
export const livenessLeaseName = (holder: string): string => `alive:${holder}`;

/**
 * One lease per process instead of one per piece of work: work a process starts is marked with its holder id (in
 * the work's own event, e.g. a turn's start), and another process tells whether that work can still be running by
 * asking whether the holder's liveness lease is held. Taking and releasing a lease around each piece of work cost
 * two durable commits per piece; this costs one renewal per `renewMs` per process, whatever the load
 * (docs/agents.md, "What a turn commits").
 *
 * Exclusivity is not this class's job: the work's own append with an expected revision gives it.
 */
export class ProcessLiveness {
  private held?: Promise<Lease>;

  constructor(private readonly leases: Leases) {}

  get holder(): string {
    return this.leases.holder;
  }

  /**
   * This process's liveness lease, taken on first use (and again after it was lost). Its signal aborts when the
   * lease is lost (not renewed in time: another process may already treat this one's work as dead).
   */
  async lease(): Promise<Lease> {
    for (;;) {
      const current = this.held;
      if (current) {
        const lease = await current.catch(() => undefined);
        if (lease?.held) return lease;
        if (this.held === current) this.held = undefined;
        continue;
      }
      const next = this.acquire();
      this.held = next;
      return next;
    }
  }

  /** Whether the process `holder` is alive (its liveness lease held and not expired). */
  async isAlive(holder: string): Promise<boolean> {
    return (await this.leases.holderOf(livenessLeaseName(holder))) === holder;
  }

  /** Releases the lease (shutdown): this process's marked work then reads as dead to the others at once. */
  async release(): Promise<void> {
    const current = this.held;
    this.held = undefined;
    const lease = await current?.catch(() => undefined);
    await lease?.release().catch(() => undefined);
  }

  private async acquire(): Promise<Lease> {
    // Nobody else takes a lease named after this process (and its own holder may take it again, even held): a
    // refusal is a race with a renewal of an earlier lease of this process, judged lost meanwhile. Try again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const lease = await this.leases.tryAcquire(livenessLeaseName(this.holder));
      if (lease) {
        // Every running turn of the process listens on it.
        setMaxListeners(0, lease.signal);
        return lease;
      }
    }
    throw new Error(`the liveness lease of ${this.holder} could not be taken`);
  }
}
