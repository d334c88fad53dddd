import { assertNever, conflict, notFound } from '@lib/platform/kernel';
import type { DeadLetterRef, PageVersion, PipelineProcessingOptions } from './pipeline';

export type { DeadLetterRef, PageVersion };

/** Attempts of one record in one run: the first and two retries, within twice `record_timeout_minutes`. */
export const PIPELINE_MAX_ATTEMPTS = 3;

export type RunStatus = 'running' | 'completed' | 'failed' | 'cancelled';
export type TriggerType = 'manual' | 'scheduled' | 'retry';
export interface RunCounts {
  readonly fetched: number;
  readonly processed: number;
  readonly failed: number;
}

/** A record as fetched from the source: what the agent's session gets as its input. */
export interface FetchedRecord {
  readonly recordId: string;
  readonly title: string | null;
  readonly text: string;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/**
 * Characters of one record's text kept in its event (and given to the agent): a source's file can extract to tens
 * of MB, and one such event would hold the event loop while it is serialised, appended and read back.
 */
export const MAX_RECORD_TEXT = 1_000_000;

/** A record as a run records it: text past MAX_RECORD_TEXT cut, the cut said in `metadata.text_truncated_from`. */
export function boundRecord(record: FetchedRecord): FetchedRecord {
  if (record.text.length <= MAX_RECORD_TEXT) return record;
  return { ...record, text: record.text.slice(0, MAX_RECORD_TEXT), metadata: { ...record.metadata, text_truncated_from: record.text.length } };
}

export type PipelineRunEvent =
  /** `retry`: a retry run re-reads only these records (its dead letters); null reads the whole source. */
  | { type: 'PipelineRunCreated'; data: { runId: string; pipelineKey: string; pipelineId: string; agentKey: string; triggerType: TriggerType; syncMode: 'incremental' | 'full_refresh'; processingOptions: PipelineProcessingOptions; sourceRecordMetadata: Readonly<Record<string, unknown>>; retry: readonly DeadLetterRef[] | null; createdAt: string } }
  | { type: 'PipelineRunStarted'; data: { runId: string; agentKey: string; triggerType: TriggerType; syncMode: 'incremental' | 'full_refresh'; startedAt: string } }
  | { type: 'PipelineRecordFetched'; data: { runId: string; record: FetchedRecord; fetchedAt: string } }
  /**
   * Discovery is over: every record the run will process has a `PipelineRecordFetched` before this. `seen`: every
   * page found on the site with its version (unchanged ones included), for the sync state; `complete`: the whole
   * site was walked (no error, no `max_pages` cut, not a retry run), so a page missing from `seen` is gone.
   */
  | { type: 'PipelineRunFetchEnded'; data: { runId: string; fetched: number; error: string | null; seen: Readonly<Record<string, PageVersion>>; complete: boolean; endedAt: string } }
  /** `startedAt`: when the attempt began (the record's budget counts from its first one). `final`: a failed attempt after which the record is dead-lettered (no retry left in attempts or budget). */
  | { type: 'PipelineRecordAttempted'; data: { runId: string; pipelineId: string; recordId: string; deadLetterId: string; attempt: number; status: 'completed' | 'failed'; final: boolean; sessionKey: string | null; durationMs: number | null; reason: string | null; startedAt: string; at: string } }
  /** Once, after the record's last `failed` attempt; `attempts`: how many it had in this run. */
  | { type: 'PipelineRecordDeadLettered'; data: { runId: string; pipelineId: string; pipelineKey: string; recordId: string; deadLetterId: string; attempts: number; reason: string | null; at: string } }
  | { type: 'PipelineRunCancelRequested'; data: { runId: string; at: string } }
  /** The run's complete sync was recorded on the pipeline (`PipelineSourceSynced`): `watermark` is the pipeline's new one. */
  | { type: 'PipelineRunWatermarkAdvanced'; data: { runId: string; pipelineId: string; watermark: string; at: string } }
  /** `unreached`: records of a retry run it never finished (cancelled): their dead letters are pending again. */
  | { type: 'PipelineRunEnded'; data: { runId: string; pipelineId: string; status: Exclude<RunStatus, 'running'>; counts: RunCounts; error: string | null; unreached: readonly DeadLetterRef[]; endedAt: string } };

export interface RecordProgress {
  readonly attempts: number;
  readonly done: boolean;
  /** How it ended when done: through the agent, or dead-lettered. */
  readonly outcome?: 'completed' | 'dead_lettered';
  readonly firstAttemptAt?: string;
}

export type RunState =
  | { readonly status: 'absent' }
  | {
      readonly status: RunStatus;
      readonly created: Extract<PipelineRunEvent, { type: 'PipelineRunCreated' }>['data'];
      readonly started: boolean;
      readonly fetchEnded: boolean;
      readonly fetchResult?: Extract<PipelineRunEvent, { type: 'PipelineRunFetchEnded' }>['data'];
      readonly cancelRequested: boolean;
      /** Fetched records in fetch order, with how far each got. */
      readonly order: readonly string[];
      readonly records: Readonly<Record<string, RecordProgress>>;
      readonly counts: RunCounts;
      /** The pipeline's sync watermark this run advanced (set once its sync state is recorded). */
      readonly watermark?: string;
    };

export type ActiveRun = Exclude<RunState, { status: 'absent' }>;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type OpenRun = Mutable<Omit<ActiveRun, 'order' | 'records' | 'counts'>> & { order: string[]; records: Record<string, RecordProgress>; counts: Mutable<RunCounts> };

/**
 * The run's fold updates the state it created in place (`order` pushed, `records` and `counts` assigned): a run
 * holds up to millions of records, and copying them per event made folding quadratic (5,000 records took 28 s of
 * event loop). Safe because every reader folds a stream from `initialState` and keeps no earlier state (RunLog,
 * loadState); `initialState` itself is never changed (`PipelineRunCreated` starts a fresh object).
 */
export const runFold = {
  initialState: { status: 'absent' } as RunState,
  evolve(state: RunState, event: PipelineRunEvent): RunState {
    if (event.type === 'PipelineRunCreated') return { status: 'running', created: event.data, started: false, fetchEnded: false, cancelRequested: false, order: [], records: {}, counts: { fetched: 0, processed: 0, failed: 0 } };
    if (state.status === 'absent') return state;
    const s = state as OpenRun;
    switch (event.type) {
      case 'PipelineRunStarted':
        s.started = true;
        return s;
      case 'PipelineRecordFetched': {
        const id = event.data.record.recordId;
        if (s.records[id]) return s;
        s.order.push(id);
        s.records[id] = { attempts: 0, done: false };
        s.counts.fetched++;
        return s;
      }
      case 'PipelineRunFetchEnded':
        s.fetchEnded = true;
        s.fetchResult = event.data;
        return s;
      case 'PipelineRecordAttempted': {
        const r = s.records[event.data.recordId];
        if (!r) return s;
        const done = event.data.status === 'completed';
        s.records[event.data.recordId] = { attempts: event.data.attempt, done, ...(done ? { outcome: 'completed' as const } : {}), firstAttemptAt: r.firstAttemptAt ?? event.data.startedAt };
        if (done) s.counts.processed++;
        return s;
      }
      case 'PipelineRecordDeadLettered': {
        const r = s.records[event.data.recordId];
        if (!r) return s;
        s.records[event.data.recordId] = { ...r, done: true, outcome: 'dead_lettered' };
        s.counts.failed++;
        return s;
      }
      case 'PipelineRunWatermarkAdvanced':
        s.watermark = event.data.watermark;
        return s;
      case 'PipelineRunCancelRequested':
        s.cancelRequested = true;
        return s;
      case 'PipelineRunEnded':
        s.status = event.data.status;
        return s;
      default:
        return assertNever(event);
    }
  },
};

export const runNotFound = (pipelineKey: string, runId: string) => notFound('pipeline_run.not_found', `Pipeline "${pipelineKey}" has no run "${runId}"`, runId);

export function decideCancelRun(state: RunState, pipelineKey: string, runId: string, now: Date): PipelineRunEvent[] {
  if (state.status === 'absent' || state.created.pipelineKey !== pipelineKey) throw runNotFound(pipelineKey, runId);
  if (state.status !== 'running' || state.cancelRequested) throw conflict('pipeline_run.not_cancellable', `Run "${runId}" is ${state.cancelRequested && state.status === 'running' ? 'already being cancelled' : state.status}: it cannot be cancelled`);
  return [{ type: 'PipelineRunCancelRequested', data: { runId, at: now.toISOString() } }];
}

/** Records that still need an attempt, in fetch order. */
export const pendingRecords = (run: ActiveRun): string[] => run.order.filter((id) => !run.records[id].done);
