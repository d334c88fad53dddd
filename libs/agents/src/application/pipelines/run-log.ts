import { CommandContext, ConcurrencyError, EventStore, toNewEvents } from '@lib/platform';
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
    while (this.queue.length > 0) await this.writeTogether(this.queue.splice(0));
    this.writing = false;
  }

  private async writeTogether(writes: PendingWrite[]): Promise<void> {
    const failed = new Map<PendingWrite, unknown>();
    for (let attempt = 1; ; attempt++) {
      let state = this.current;
      const decided: { events: PipelineRunEvent[]; write: PendingWrite }[] = [];
      for (const write of writes.filter((w) => !failed.has(w))) {
        try {
          const events = write.decide(state);
          events.forEach((e) => (state = runFold.evolve(state, e)));
          if (events.length) decided.push({ events, write });
        } catch (e) {
          failed.set(write, e);
        }
      }
      const events = decided.flatMap((d) => d.events);
      try {
        if (events.length) {
          const stored = decided.flatMap((d) => toNewEvents(d.events, d.write.ctx, this.streamId, attempt));
          const result = await this.store.append(this.streamId, stored, { expectedRevision: this.revision < 0 ? 'no_stream' : this.revision });
          const first = result.nextExpectedRevision - events.length + 1;
          events.forEach((e, i) => this.apply(e, first + i));
          this.revision = result.nextExpectedRevision;
        }
        writes.forEach((w) => w.settle(failed.get(w)));
        return;
      } catch (e) {
        if (!(e instanceof ConcurrencyError) || attempt >= 10) return writes.forEach((w) => w.settle(failed.get(w) ?? e));
        await this.reload().catch((reloadError: unknown) => writes.forEach((w) => failed.set(w, failed.get(w) ?? reloadError)));
      }
    }
  }
}
