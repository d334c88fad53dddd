import { CommandContext, ConcurrencyError, EventStore, toNewEvents } from '@lib/platform';
import { FetchedRecord, PipelineRunEvent, RunState, runFold } from '../../domain/pipeline-run';

/**
 * A run's stream as its runner holds it: folded once, then kept in memory and appended at the revision it
 * knows, so a run of many records does not re-read its stream for every step. The runner is the stream's
 * only writer under the run's lease except for cancellation (from the API): an append that finds the stream
 * moved re-reads it and decides again on what it found.
 */
const RELOAD_PAGE = 1000;

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

  /** Appends what `decide` returns on the current state (nothing when it returns nothing); ids derive from `ctx.commandId`. */
  async write(decide: (s: RunState) => PipelineRunEvent[], ctx: CommandContext): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const events = decide(this.current);
      if (!events.length) return;
      try {
        const result = await this.store.append(this.streamId, toNewEvents(events, ctx, this.streamId, attempt), { expectedRevision: this.revision < 0 ? 'no_stream' : this.revision });
        const first = result.nextExpectedRevision - events.length + 1;
        events.forEach((e, i) => this.apply(e, first + i));
        this.revision = result.nextExpectedRevision;
        return;
      } catch (e) {
        if (!(e instanceof ConcurrencyError) || attempt >= 10) throw e;
        await this.reload();
      }
    }
  }
}
