import type { EventStore, Subscription } from '../event-store/event-store.port';
import type { RecordedEvent } from '../event-store/events';

/** One piece of background work: `key` names it (never two runs of one key at once), `item` is what its run needs. */
export interface WokenWork<T> {
  readonly key: string;
  readonly item: T;
}

/** What a background runner does; the runner's lifecycle (wake-ups, sweep, concurrency, drain) is WokenRunner's. */
export interface WokenRunnerOptions<T> {
  /** The event types that wake the runner, followed from the head of the log (earlier ones are the sweep's). */
  readonly types: readonly string[];
  /** The work a waking event offers; it may also act on the event itself (a cancel) and offer nothing. */
  readonly woken: (event: RecordedEvent) => readonly WokenWork<T>[];
  /** The work a wake-up may have missed (a lost wake-up, a dead holder, a retry now due), read at start and every `sweepMs`. */
  readonly sweep: () => Promise<readonly WokenWork<T>[]>;
  /** Runs one piece of work, under whatever lease it takes itself. A rejection is reported, the runner goes on. */
  readonly run: (key: string, item: T) => Promise<void>;
  /** Failures, reported to the owner, who words and logs them. */
  readonly failed: {
    /** The wake-up subscription ended with an error: from then on only the sweep finds work. */
    wakeUps(error: Error): void;
    sweep(error: Error): void;
    work(key: string, error: Error): void;
  };
}

/** How a started runner follows the log; given at start, from the configuration of the process. */
export interface WokenRunnerStart {
  readonly events: Pick<EventStore, 'subscribeToAll' | 'headPosition'>;
  /** WORKER_POLL_MS. */
  readonly sweepMs: number;
  /** The most runs at once; work offered beyond it waits, in the order offered. Unbounded when absent. */
  readonly maxConcurrent?: number;
}

/**
 * The lifecycle the worker wing's background runners share (docs/architecture.md, the worker wing): woken by
 * events appended after it starts, a periodic sweep for what a wake-up missed, one run per key at a time,
 * optionally at most N runs at once, and on stop no new run while the runs in progress are awaited (each bounds
 * itself: `signal` aborts at stop). Offers are taken before `start` too (a timer handler may offer first).
 */
export class WokenRunner<T> {
  private subscription?: Subscription;
  private following?: Promise<void>;
  private sweepTimer?: NodeJS.Timeout;
  private maxConcurrent = Infinity;
  private readonly running = new Map<string, { readonly item: T; readonly done: Promise<void> }>();
  /** Offered while `maxConcurrent` runs were in progress, in the order offered. */
  private readonly waiting = new Map<string, T>();
  private readonly shutdown = new AbortController();

  constructor(private readonly options: WokenRunnerOptions<T>) {}

  /** True once `stop` was called: nothing new starts. */
  get stopping(): boolean {
    return this.shutdown.signal.aborted;
  }

  /** Aborted when `stop` is called, for runs to stop between steps. */
  get signal(): AbortSignal {
    return this.shutdown.signal;
  }

  async start({ events, sweepMs, maxConcurrent }: WokenRunnerStart): Promise<void> {
    this.maxConcurrent = maxConcurrent ?? Infinity;
    const sub = events.subscribeToAll({ after: await events.headPosition(), filter: { types: this.options.types } });
    this.subscription = sub;
    this.following = (async () => {
      for await (const e of sub) for (const w of this.options.woken(e)) this.offer(w.key, w.item);
    })().catch((e: unknown) => this.options.failed.wakeUps(e as Error));
    this.sweepTimer = setInterval(() => void this.sweep(), sweepMs);
    this.sweepTimer.unref();
    void this.sweep();
  }

  /** Stops waking and sweeping, starts nothing more (waiting work stays for the next process), awaits the runs in progress. */
  async stop(): Promise<void> {
    this.shutdown.abort();
    clearInterval(this.sweepTimer);
    await this.subscription?.close();
    await this.following;
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  async sweep(): Promise<void> {
    if (this.stopping) return;
    try {
      for (const w of await this.options.sweep()) this.offer(w.key, w.item);
    } catch (e) {
      this.options.failed.sweep(e as Error);
    }
  }

  /** Runs the work unless its key runs or waits already (the item offered first is kept), or after a run ends if at the limit. */
  offer(key: string, item: T): void {
    if (this.stopping || this.running.has(key) || this.waiting.has(key)) return;
    if (this.running.size >= this.maxConcurrent) {
      this.waiting.set(key, item);
      return;
    }
    const done = (async () => this.options.run(key, item))()
      .catch((e: unknown) => this.options.failed.work(key, e as Error))
      .finally(() => {
        this.running.delete(key);
        const next = this.waiting.entries().next();
        if (!next.done) {
          this.waiting.delete(next.value[0]);
          this.offer(next.value[0], next.value[1]);
        }
      });
    this.running.set(key, { item, done });
  }

  /** The item of the run in progress under `key`. */
  runningItem(key: string): T | undefined {
    return this.running.get(key)?.item;
  }

  /** The items of the runs in progress. */
  runningItems(): T[] {
    return [...this.running.values()].map((r) => r.item);
  }

  /** Resolves when no run is in progress or waiting (tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }
}
