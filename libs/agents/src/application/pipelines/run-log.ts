import { CommandContext, ConcurrencyError, EventStore, toNewEvents } from '@lib/platform';
import { FetchedRecord, PipelineRunEvent, RunState, runFold } from '../../domain/pipeline-run';

/**
 * A run's stream as its runner holds it: folded once, then kept in memory and appended at the revision it
 * knows, so a run of many records does not re-read its stream for every step. The runner is the stream's
 * only writer under the run's lease except for cancellation (from the API): an append that finds the stream
 * moved re-reads it and decides again on what it found.
 */
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

  /** Fetched records by id (their text is what each session gets; kept for the run's life). */
  readonly records = new Map<string, FetchedRecord>();

  private apply(e: PipelineRunEvent): void {
    this.current = runFold.evolve(this.current, e);
    if (e.type === 'PipelineRecordFetched') this.records.set(e.data.record.recordId, e.data.record);
  }

  get state(): RunState {
    return this.current;
  }

  private async reload(): Promise<void> {
    const history = await this.store.readStream(this.streamId, { fromRevision: this.revision + 1 });
    for (const e of history) {
      this.apply(e as unknown as PipelineRunEvent);
      this.revision = e.revision;
    }
  }

  /** Appends what `decide` returns on the current state (nothing when it returns nothing); ids derive from `ctx.commandId`. */
  async write(decide: (s: RunState) => PipelineRunEvent[], ctx: CommandContext): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const events = decide(this.current);
      if (!events.length) return;
      try {
        const result = await this.store.append(this.streamId, toNewEvents(events, ctx, this.streamId, attempt), { expectedRevision: this.revision < 0 ? 'no_stream' : this.revision });
        for (const e of events) this.apply(e);
        this.revision = result.nextExpectedRevision;
        return;
      } catch (e) {
        if (!(e instanceof ConcurrencyError) || attempt >= 10) throw e;
        await this.reload();
      }
    }
  }
}
