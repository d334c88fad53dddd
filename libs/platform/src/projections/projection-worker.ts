import type { EventStore } from '../event-store/event-store.port';
import type { RecordedEvent } from '../event-store/events';
import { yieldToLoop } from '../kernel/yield';
import type { PositionedOps, Projection, ProjectionSink, ProjectionStateStore } from './projection';
import type { SharedBatches } from './shared-batches';

export interface WorkerOptions {
  readonly batchSize: number;
  /**
   * For sinks that write synchronously on the event loop (SQLite): a live batch holds as many events as the last
   * batch's cost per event says can be written in about this many milliseconds (up to `batchSize`), so that one
   * write never holds the loop much longer, however large the backlog. Unset: always `batchSize`.
   */
  readonly batchBudgetMs?: number;
  /** Delays between attempts of a failing batch before the worker looks for the event to park. */
  readonly retryDelaysMs: readonly number[];
  readonly log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** Writes the batches of workers whose sinks share a transaction together (shared-batches.ts). */
  readonly shared?: SharedBatches;
}

type Sink = ProjectionSink<unknown>;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/**
 * A step's read stops after the event that brings it to this many bytes of stored JSON: a rebuild or catch-up over
 * large documents (one event each, tens of MB with their vectors) read a thousand events at once (`batchSize`)
 * before.
 */
export const PROJECTION_READ_BYTES = 32 * 2 ** 20;

/**
 * Runs one projection: reads the log after its checkpoint (filtered by the event types it handles), turns
 * events into operations and hands them to its sink with the new checkpoint. A batch that keeps failing is
 * split to find the event that fails; that event is parked as a dead letter and the projection moves on,
 * unless the sink itself is down, in which case it waits and retries without parking anything.
 */
export class ProjectionWorker {
  generation = 0;
  /** Highest position known processed (events it does not handle included); in memory. */
  processed = 0;
  lastError?: string;
  private running = false;
  private stopped = false;
  private wakeOnStop!: () => void;
  private readonly stopSignal = new Promise<void>((r) => (this.wakeOnStop = r));
  private lock: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<() => void>();
  /** Events the next live batch reads (`batchBudgetMs`). */
  private batchLimit: number;

  constructor(
    readonly projection: Projection,
    readonly sink: Sink,
    private readonly events: EventStore,
    private readonly state: ProjectionStateStore,
    private readonly options: WorkerOptions,
  ) {
    this.batchLimit = options.batchSize;
  }

  get name(): string {
    return this.projection.name;
  }

  /** Sets up the active generation; a projection whose version changed is rebuilt first. */
  async init(): Promise<void> {
    const active = await this.state.active(this.name);
    if (!active) {
      await this.sink.prepare(this.projection, 1);
      await this.sink.activate(this.projection, 1);
      await this.state.setActive(this.name, 1, this.projection.version);
      this.generation = 1;
    } else {
      this.generation = active.generation;
      await this.sink.prepare(this.projection, this.generation);
      if (active.version !== this.projection.version) {
        this.options.log('info', 'projection version changed: rebuilding', { projection: this.name, from: active.version, to: this.projection.version });
        await this.rebuild();
      }
    }
    this.processed = await this.sink.checkpoint(this.name, this.generation);
  }

  onProgress(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async run(): Promise<void> {
    this.running = true;
    while (!this.stopped) {
      try {
        await this.followRebuildByOtherProcess();
        const moved = await this.exclusive(() => this.step(this.generation, this.processed, (p) => (this.processed = p), this.batchLimit));
        if (!moved) await Promise.race([this.idle(), this.stopSignal]);
      } catch (e) {
        this.lastError = e instanceof Error ? e.message : String(e);
        this.options.log('error', 'projection step failed', { projection: this.name, error: this.lastError });
        await Promise.race([sleep(1000), this.stopSignal]);
      }
    }
    this.running = false;
  }

  /**
   * Waits for an append holding one of the event types this projection handles. Appends of other types (usage
   * records, say) advance it in memory without a read, as a step finding nothing would.
   */
  private idle(): Promise<void> {
    const generation = this.generation;
    const onSkipped = (position: number) => {
      if (generation !== this.generation || position <= this.processed) return;
      this.processed = position;
      this.listeners.forEach((l) => l());
    };
    return this.events.waitForAppend(this.processed, 1000, { types: this.projection.eventTypes, onSkipped });
  }

  stop(): void {
    this.stopped = true;
    this.wakeOnStop();
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** One batch: returns whether the checkpoint moved. */
  private async step(generation: number, from: number, advance: (p: number) => void, limit = this.options.batchSize): Promise<boolean> {
    const head = await this.events.headPosition();
    if (head <= from) return false;
    // Several projections woken by one append would otherwise each read it in the same turn of the loop.
    await yieldToLoop();
    const events = await this.events.readAll({ after: from, maxCount: limit, maxBytes: PROJECTION_READ_BYTES, filter: { types: this.projection.eventTypes }, shared: true });
    // Nothing read: nothing of its types up to the head. Events read: the page may have stopped at the byte bound
    // rather than at the head, so the checkpoint is the last of them (the next step reads on, or finds no more).
    const checkpoint = events.length > 0 ? events[events.length - 1].position : head;
    // Reading, applying and writing a large batch (a document of 50,000 parts) each take a while: the loop
    // gets a turn between them.
    if (events.length > 0) {
      await yieldToLoop();
      await this.applyEvents(generation, events, checkpoint);
    }
    advance(checkpoint);
    this.listeners.forEach((l) => l());
    return true;
  }

  private async applyEvents(generation: number, events: RecordedEvent[], checkpoint: number): Promise<void> {
    const batch: PositionedOps<unknown>[] = [];
    for (const event of events) {
      try {
        batch.push({ position: event.position, ops: this.projection.apply(event) });
      } catch (e) {
        // apply() is pure: retrying cannot help, so the event is parked at once and the rest go on.
        await this.park(event, e, 1);
      }
    }
    for (const delay of [0, ...this.options.retryDelaysMs]) {
      if (delay) await sleep(delay);
      try {
        this.adaptBatch(batch.length, await this.write(generation, batch, checkpoint));
        this.lastError = undefined;
        return;
      } catch (e) {
        this.lastError = e instanceof Error ? e.message : String(e);
        this.options.log('warn', 'projection batch failed; retrying', { projection: this.name, error: this.lastError });
      }
    }
    await this.isolatePoison(generation, batch, events, checkpoint);
  }

  /** Applies a batch with its checkpoint, in the transaction shared with other projections where the sink has one; the ms it took. */
  private async write(generation: number, batch: PositionedOps<unknown>[], checkpoint: number): Promise<number> {
    if (this.sink.writeAhead) await this.sink.writeAhead(this.name, generation, batch);
    const write = () => this.sink.applyBatch(this.name, generation, batch, checkpoint);
    // The loop gets a turn between applying and writing: the shared transaction runs on the next one by itself (a
    // yield here as well would hold every batch, and each `wait_for=searchable` answer, another turn of a busy loop).
    if (this.sink.sharedTransaction && this.options.shared) return this.options.shared.write(this.sink.sharedTransaction, write);
    await yieldToLoop();
    const started = performance.now();
    await write();
    return performance.now() - started;
  }

  /** Sizes the next live batch from this one's cost per event (`batchBudgetMs`). */
  private adaptBatch(count: number, ms: number): void {
    const budget = this.options.batchBudgetMs;
    if (!budget || count === 0) return;
    const perEvent = Math.max(ms / count, 0.001);
    this.batchLimit = Math.max(1, Math.min(this.options.batchSize, Math.floor(budget / perEvent)));
  }

  /** Applies the batch event by event; one that still fails while the sink itself works is parked. */
  private async isolatePoison(generation: number, batch: PositionedOps<unknown>[], events: RecordedEvent[], checkpoint: number): Promise<void> {
    const byPosition = new Map(events.map((e) => [e.position, e]));
    for (const item of batch) {
      try {
        await this.sink.applyBatch(this.name, generation, [item], item.position);
      } catch (e) {
        // An empty batch only writes the checkpoint: if that fails too, the store is down, not the event.
        await this.sink.applyBatch(this.name, generation, [], item.position - 1);
        await this.park(byPosition.get(item.position)!, e, this.options.retryDelaysMs.length + 2);
      }
    }
    await this.sink.applyBatch(this.name, generation, [], checkpoint);
  }

  private async park(event: RecordedEvent, error: unknown, attempts: number): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    this.options.log('error', 'event parked as dead letter', { projection: this.name, position: event.position, type: event.type, error: message });
    await this.state.park({
      projection: this.name,
      position: event.position,
      eventId: event.id,
      eventType: event.type,
      streamId: event.streamId,
      error: message,
      attempts,
      parkedAt: new Date().toISOString(),
    });
  }

  /** Re-applies a parked event (after a fix) and removes it from the dead letters. */
  async replay(position: number): Promise<void> {
    const [event] = await this.events.readAll({ after: position - 1, maxCount: 1 });
    if (!event || event.position !== position) throw new Error(`No event at position ${position}`);
    await this.exclusive(async () => {
      await this.sink.applyBatch(this.name, this.generation, [{ position, ops: this.projection.apply(event) }], this.processed, { replay: true });
    });
    await this.state.unpark(this.name, position);
  }

  /** Replays the whole log into a fresh generation, then swaps it in; reads keep the old one until then. */
  async rebuild(): Promise<void> {
    const next = this.generation + 1;
    await this.sink.prepare(this.projection, next);
    let position = 0;
    while (await this.step(next, position, (p) => (position = p)));
    await this.exclusive(async () => {
      while (await this.step(next, position, (p) => (position = p)));
      await this.sink.activate(this.projection, next);
      await this.state.setActive(this.name, next, this.projection.version);
      this.generation = next;
      this.processed = position;
    });
  }

  /** Another process (the CLI) may have rebuilt and swapped this projection: follow it. */
  private async followRebuildByOtherProcess(): Promise<void> {
    const active = await this.state.active(this.name);
    if (active && active.generation !== this.generation) {
      this.generation = active.generation;
      this.processed = await this.sink.checkpoint(this.name, this.generation);
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.lock.then(fn, fn);
    this.lock = result.catch(() => undefined);
    return result;
  }
}
