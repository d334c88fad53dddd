import { CommandContext, ConcurrencyError, EventStore, NewEvent, toNewEvents } from '@lib/platform';
import { FetchedRecord, PipelineRunEvent, RunState, runFold } from '../../domain/pipeline-run';

/**
 * A run's stream as its runner holds it: folded once, then kept in memory and appended at the revision it
 * knows, so a run of many records does not re-read its stream for every step. The runner is the stream's
 * only writer under the run's lease except for cancellation (from the API): an append that finds the stream
 * moved re-reads it and decides again on what it found.
 */
const RELOAD_PAGE = 1000;

interface PendingWrite {
  readonly decide: (s: RunState) => PipelineRunEvent[];
  readonly ctx: CommandContext;
  readonly settle: (error?: unknown) => void;
}

export class RunLog {
  private constructor(
    private readonly store: EventStore,
    readonly streamId: string,
    private current: RunState,
    private revision: number,
  ) {}

  static async open(store: EventStore, streamId: string): Promise<RunLog> {
    const log = new RunLog(store, streamId, runFold.initialState, -1);
    await log.reload();
    return log;
  }

  /**
   * Where each fetched record not yet done sits in the stream: its text is read back when an attempt needs it,
   * not held for the run's life (a run of a million pages would hold every page). Forgotten once done.
   */
  private readonly recordAt = new Map<string, number>();

  private apply(e: PipelineRunEvent, revision: number): void {
    this.current = runFold.evolve(this.current, e);
    if (e.type === 'PipelineRecordFetched' && !this.recordAt.has(e.data.record.recordId)) this.recordAt.set(e.data.record.recordId, revision);
    const s = this.current;
    if ((e.type === 'PipelineRecordAttempted' || e.type === 'PipelineRecordDeadLettered') && s.status !== 'absent' && s.records[e.data.recordId]?.done) this.recordAt.delete(e.data.recordId);
  }

  /** A fetched record, read from its event; null when the run has no such record or it is already done. */
  async record(recordId: string): Promise<FetchedRecord | null> {
    await this.appending;
    const at = this.recordAt.get(recordId);
    if (at === undefined) return null;
    const [e] = await this.store.readStream(this.streamId, { fromRevision: at, maxCount: 1 });
    const event = e as unknown as PipelineRunEvent | undefined;
    return event?.type === 'PipelineRecordFetched' && event.data.record.recordId === recordId ? event.data.record : null;
  }

  get state(): RunState {
    return this.current;
  }

  /** Pages of the stream, so a resumed run of many records never holds its whole history at once. */
  private async reload(): Promise<void> {
    for (;;) {
      const page = await this.store.readStream(this.streamId, { fromRevision: this.revision + 1, maxCount: RELOAD_PAGE });
      for (const e of page) {
        this.apply(e as unknown as PipelineRunEvent, e.revision);
        this.revision = e.revision;
      }
      if (page.length < RELOAD_PAGE) return;
    }
  }

  private readonly queue: PendingWrite[] = [];
  private writing = false;
  /** The append under way: `state` already shows its events, and `record` reads only what it has stored. */
  private appending: Promise<void> = Promise.resolve();

  /**
   * Appends what `decide` returns on the current state (nothing when it returns nothing); ids derive from
   * `ctx.commandId`. Writes made while an append is under way (16 records finishing at once, the fetcher) go
   * together as the next append, each deciding on the state the ones before it leave: concurrent appends at one
   * expected revision would each lose to the first and retry, and the longer a commit takes (an fsync, the writer
   * thread) the more of them pile up, until one ran out of retries and failed its record or the fetch.
   */
  write(decide: (s: RunState) => PipelineRunEvent[], ctx: CommandContext): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ decide, ctx, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.queue.length > 0) {
      this.appending = this.writeTogether(this.queue.splice(0));
      await this.appending;
    }
    this.writing = false;
  }

  private async writeTogether(writes: PendingWrite[]): Promise<void> {
    const failed = new Map<PendingWrite, unknown>();
    for (let attempt = 1; ; attempt++) {
      // The fold mutates its state: each decision is applied at once, at the revision it will have, so the next
      // write decides on it; an append that fails leaves the state ahead of the stream, which is then read again.
      const expected = this.revision;
      const stored: NewEvent[] = [];
      for (const write of writes.filter((w) => !failed.has(w))) {
        try {
          const events = write.decide(this.current);
          events.forEach((e, i) => this.apply(e, this.revision + 1 + stored.length + i));
          stored.push(...toNewEvents(events, write.ctx, this.streamId, attempt));
        } catch (e) {
          failed.set(write, e);
        }
      }
      try {
        // Writes made under the run's lease are fenced by it (docs/workers.md "Fencing").
        const fence = writes.find((w) => w.ctx.lease)?.ctx.lease?.fence;
        if (stored.length) this.revision = (await this.store.append(this.streamId, stored, { expectedRevision: expected < 0 ? 'no_stream' : expected, ...(fence ? { condition: fence } : {}) })).nextExpectedRevision;
        writes.forEach((w) => w.settle(failed.get(w)));
        return;
      } catch (e) {
        const reloaded = await this.reloadFromStart().then(() => undefined, (reloadError: unknown) => reloadError);
        if (!(e instanceof ConcurrencyError) || attempt >= 10 || reloaded !== undefined) return writes.forEach((w) => w.settle(failed.get(w) ?? e));
      }
    }
  }

  private async reloadFromStart(): Promise<void> {
    this.current = runFold.initialState;
    this.revision = -1;
    this.recordAt.clear();
    await this.reload();
  }
}
