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
    };

export type ActiveRun = Exclude<RunState, { status: 'absent' }>;

export const runFold = {
  initialState: { status: 'absent' } as RunState,
  evolve(state: RunState, event: PipelineRunEvent): RunState {
    if (event.type === 'PipelineRunCreated') return { status: 'running', created: event.data, started: false, fetchEnded: false, cancelRequested: false, order: [], records: {}, counts: { fetched: 0, processed: 0, failed: 0 } };
    if (state.status === 'absent') return state;
    switch (event.type) {
      case 'PipelineRunStarted':
        return { ...state, started: true };
      case 'PipelineRecordFetched': {
        const id = event.data.record.recordId;
        if (state.records[id]) return state;
        return { ...state, order: [...state.order, id], records: { ...state.records, [id]: { attempts: 0, done: false } }, counts: { ...state.counts, fetched: state.counts.fetched + 1 } };
      }
      case 'PipelineRunFetchEnded':
        return { ...state, fetchEnded: true, fetchResult: event.data };
      case 'PipelineRecordAttempted': {
        const r = state.records[event.data.recordId];
        if (!r) return state;
        const done = event.data.status === 'completed';
        const next = { attempts: event.data.attempt, done, ...(done ? { outcome: 'completed' as const } : {}), firstAttemptAt: r.firstAttemptAt ?? event.data.startedAt };
        return { ...state, records: { ...state.records, [event.data.recordId]: next }, counts: done ? { ...state.counts, processed: state.counts.processed + 1 } : state.counts };
      }
      case 'PipelineRecordDeadLettered': {
        const r = state.records[event.data.recordId];
        return r ? { ...state, records: { ...state.records, [event.data.recordId]: { ...r, done: true, outcome: 'dead_lettered' } }, counts: { ...state.counts, failed: state.counts.failed + 1 } } : state;
      }
      case 'PipelineRunCancelRequested':
        return { ...state, cancelRequested: true };
      case 'PipelineRunEnded':
        return { ...state, status: event.data.status };
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
