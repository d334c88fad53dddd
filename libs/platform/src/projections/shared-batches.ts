import type { SharedTransaction } from './projection';

interface Queued {
  readonly write: () => Promise<void>;
  readonly resolve: (ms: number) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Projections woken by one append reach their sinks in the same turn of the loop (each worker yields in step with
 * the others). Where those sinks share a transaction (SQLite: read models, search index and checkpoints all in
 * service.db), the batches queued in one turn are written in one transaction instead of one each: one commit per
 * wake-up instead of three, and the checkpoints' page written to the WAL once. Guarantees as before:
 * - each sink's own transaction nests as a savepoint, so a failing batch rolls back alone and its worker retries
 *   it (or parks its poison event) as it would have; the others commit;
 * - every checkpoint still commits with its projection's writes (G6): a crash before the commit loses the
 *   batches and their checkpoints together, and each projection replays them from the log;
 * - a commit that fails fails every batch in it (none was kept), and each worker retries its own.
 */
export class SharedBatches {
  private readonly queued = new Map<SharedTransaction, Queued[]>();

  /** Runs `write` in the shared transaction of the next turn; resolves with the ms it took once committed. */
  write(shared: SharedTransaction, write: () => Promise<void>): Promise<number> {
    return new Promise((resolve, reject) => {
      let queue = this.queued.get(shared);
      if (!queue) {
        this.queued.set(shared, (queue = []));
        setImmediate(() => this.flush(shared));
      }
      queue.push({ write, resolve, reject });
    });
  }

  private flush(shared: SharedTransaction): void {
    const queue = this.queued.get(shared) ?? [];
    this.queued.delete(shared);
    const written: Promise<void>[] = [];
    const ms: number[] = [];
    try {
      shared.run(() => {
        for (const q of queue) {
          const started = performance.now();
          const done = settled(q.write);
          done.catch(() => undefined); // settled below, after the commit; never an unhandled rejection meanwhile
          written.push(done);
          ms.push(performance.now() - started);
        }
      });
    } catch (e) {
      queue.forEach((q) => q.reject(e));
      return;
    }
    queue.forEach((q, i) => written[i].then(() => q.resolve(ms[i]), q.reject));
  }
}

/** A write that throws instead of rejecting fails alone too (its own transaction, a savepoint here, rolled back). */
function settled(write: () => Promise<void>): Promise<void> {
  try {
    return write();
  } catch (e) {
    return Promise.reject(e);
  }
}
