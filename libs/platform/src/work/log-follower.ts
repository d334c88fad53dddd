import { randomUUID } from 'node:crypto';
import type { Clock } from '../kernel/clock';
import type { EventStore, Subscription } from '../event-store/event-store.port';
import type { Actor, RecordedEvent } from '../event-store/events';

/** The checkpoint event a follower appends to its own stream: how far it has read the log. */
export interface LogFollowerCheckpoint<TType extends string = string> {
  readonly type: TType;
  readonly data: { readonly position: number; readonly at: string };
}

/** What a checkpointed follower does; the lifecycle (start, subscription, retries, checkpoints, stop) is LogFollower's. */
export interface LogFollowerOptions {
  /** The event types followed (the subscription's filter). */
  readonly types: readonly string[];
  /** Where to start without a checkpoint: a position from a read model, or the head of the log. */
  readonly start: () => Promise<number>;
  /** The work for one event, retried with backoff while it throws (the event is never skipped), until stop. */
  readonly work: (event: RecordedEvent) => Promise<void>;
  readonly checkpoint: {
    /** The follower's own stream; its last event says where a restart starts. */
    readonly stream: string;
    /** The checkpoint event's type; its data is `{position, at}`. */
    readonly type: string;
    /** Who appends it (`metadata.actor`). */
    readonly actor: Actor;
    /** A checkpoint is written at most this often while following (and once at stop). */
    readonly everyMs: number;
    /** Whether something happened that is worth a checkpoint; false: none is written (a restart starts from `start()`). */
    readonly happened: () => boolean;
  };
  /** Failures, reported to the owner, who words and logs them (`loggedFollowerFailures` words them the usual way). */
  readonly failed: {
    /** The work for `event` threw; it is tried again in `retryMs`. */
    work(event: RecordedEvent, error: Error, retryMs: number): void;
    /** A checkpoint append failed while following (a restart reads a little more again). */
    checkpoint(error: Error): void;
    /** The subscription ended with an error: the follower has stopped. */
    stopped(error: Error): void;
  };
}

/** What a started follower reads and appends with; given at start, from the process's providers. */
export interface LogFollowerStart {
  readonly events: Pick<EventStore, 'readStream' | 'subscribeToAll' | 'append' | 'headPosition'>;
  /** Stamps the checkpoint's `at`. */
  readonly clock: Clock;
}

/** Where a follower's failures are logged (a Nest `Logger` fits). */
export interface LogFollowerLogger {
  warn(message: string): void;
  error(message: string): void;
}

/**
 * The followers' usual failure lines, `<what> of event <id> failed, retrying in <n> ms: …`, `<what> checkpoint failed
 * (<afterCheckpointFailure>): …` (warnings) and `<what> stopped: …` (an error), on the owner's logger.
 */
export function loggedFollowerFailures(log: LogFollowerLogger, what: string, afterCheckpointFailure: string): LogFollowerOptions['failed'] {
  return {
    work: (e, error, retryMs) => log.warn(`${what} of event ${e.id} failed, retrying in ${retryMs} ms: ${error.message}`),
    checkpoint: (error) => log.warn(`${what} checkpoint failed (${afterCheckpointFailure}): ${error.message}`),
    stopped: (error) => log.error(`${what} stopped: ${error.message}`),
  };
}

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

/**
 * The lifecycle of the worker wing's checkpointed log followers (docs/workers.md): every event of the given types,
 * in order, from the last checkpoint of the owner's stream (else the owner's start position); the work per event
 * waited out while it fails (500 ms doubling to 30 s, never skipping the event) until stop; a checkpoint event now
 * and then, only once the log was read past the last one and the owner says something happened. On stop: no more
 * retries, the subscription closed, a last checkpoint. An event whose work stop cut short is not counted as read.
 */
export class LogFollower {
  private subscription?: Subscription;
  private following?: Promise<void>;
  private readonly shutdown = new AbortController();
  private store?: LogFollowerStart;
  private checkpointedAt = 0;
  private checkpointedPosition = 0;
  private reachedPosition = 0;

  constructor(private readonly options: LogFollowerOptions) {}

  /** The position of the last event whose work is done. */
  get reached(): number {
    return this.reachedPosition;
  }

  /** The position the last checkpoint (read at start or written since) holds. */
  get checkpointed(): number {
    return this.checkpointedPosition;
  }

  /** True once `stop` was called. */
  get stopping(): boolean {
    return this.shutdown.signal.aborted;
  }

  async start(store: LogFollowerStart): Promise<void> {
    this.store = store;
    const after = await this.startPosition(store.events);
    this.checkpointedPosition = this.reachedPosition = after;
    // Shared: the follower only reads the events, so a live one comes from the store's tail of recent appends.
    const sub = store.events.subscribeToAll({ after, filter: { types: [...this.options.types] }, shared: true });
    this.subscription = sub;
    this.following = (async () => {
      for await (const e of sub) {
        if (!(await this.persistently(e))) break;
        this.reachedPosition = e.position;
        if (Date.now() - this.checkpointedAt >= this.options.checkpoint.everyMs) await this.checkpoint().catch((error: unknown) => this.options.failed.checkpoint(error as Error));
      }
    })().catch((e: unknown) => this.options.failed.stopped(e as Error));
  }

  /** Stops retrying, closes the subscription, awaits the event in progress, writes a last checkpoint (its failure is ignored). */
  async stop(): Promise<void> {
    this.shutdown.abort();
    await this.subscription?.close();
    await this.following;
    await this.checkpoint().catch(() => undefined);
  }

  /**
   * A checkpoint now, on the same terms as the ones written while following (past the last one, when the owner says
   * something happened): for an owner whose work finishes after the event's turn (a batch written later).
   */
  async checkpointNow(): Promise<void> {
    await this.checkpoint().catch((error: unknown) => this.options.failed.checkpoint(error as Error));
  }

  /** After the last checkpoint; without one, the owner's start. */
  private async startPosition(events: LogFollowerStart['events']): Promise<number> {
    const [last] = await events.readStream(this.options.checkpoint.stream, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    if (last) return (last.data as LogFollowerCheckpoint['data']).position;
    return this.options.start();
  }

  /** Written only past the last one and once the owner says something happened. */
  private async checkpoint(): Promise<void> {
    this.checkpointedAt = Date.now();
    const { stream, type, actor, happened } = this.options.checkpoint;
    if (!this.store || this.reachedPosition <= this.checkpointedPosition || !happened()) return;
    const position = this.reachedPosition;
    const event: LogFollowerCheckpoint = { type, data: { position, at: this.store.clock.now().toISOString() } };
    await this.store.events.append(stream, [{ id: randomUUID(), ...event, metadata: { actor, correlationId: stream, schemaVersion: 1 } }], { expectedRevision: 'any' });
    this.checkpointedPosition = position;
  }

  /** True once the work is done; false when stop came first (the event then counts as not read). */
  private async persistently(e: RecordedEvent): Promise<boolean> {
    for (let wait = FIRST_RETRY_MS; !this.shutdown.signal.aborted; wait = Math.min(wait * 2, MAX_RETRY_MS)) {
      try {
        await this.options.work(e);
        return true;
      } catch (error) {
        this.options.failed.work(e, error as Error, wait);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.shutdown.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
      }
    }
    return false;
  }
}
