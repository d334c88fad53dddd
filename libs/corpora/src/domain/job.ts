import { assertNever, conflict, notFound } from '@lib/platform/kernel';
import type { FilterAttribute } from './corpus';
import type { Metadata, MetadataStrategy } from './document';

/** Job types as the reference API names them. */
export type JobType = 'bulk_update_document_metadata' | 'bulk_delete_documents' | 'replace_filter_attributes';

export type JobRequest =
  | {
      readonly type: 'bulk_update_document_metadata';
      /** Exactly these documents, in this order; or every document the filter selects (indexed before `cutoffAt`). */
      readonly documentIds?: readonly string[];
      readonly metadataFilter?: string;
      readonly metadata: Metadata;
      readonly strategy: MetadataStrategy;
    }
  | {
      readonly type: 'bulk_delete_documents';
      /** Exactly these documents; or every document the filter selects (indexed before `cutoffAt`). */
      readonly documentIds?: readonly string[];
      readonly metadataFilter?: string;
    }
  | { readonly type: 'replace_filter_attributes'; readonly filterAttributes: readonly FilterAttribute[] };

export interface JobCounts {
  readonly processed: number;
  readonly updated: number;
  readonly skipped: number;
  readonly failed: number;
}

export const NO_COUNTS: JobCounts = { processed: 0, updated: 0, skipped: 0, failed: 0 };

export type JobEvent =
  | {
      type: 'JobQueued';
      data: { jobId: string; corpusKey: string; corpusId: string; request: JobRequest; total?: number; cutoffAt?: string; createdBy?: string; createdAt: string };
    }
  | { type: 'JobStarted'; data: { jobId: string; startedAt: string } }
  /** `cursor`: where a resumed job goes on from (the index into `documentIds`, or the last document id done). */
  | { type: 'JobProgressed'; data: { jobId: string; counts: JobCounts; cursor: string | number } }
  | { type: 'JobCompleted'; data: { jobId: string; counts: JobCounts; comment?: string; completedAt: string } }
  | { type: 'JobFailed'; data: { jobId: string; counts: JobCounts; reason: string; failedAt: string } };

export const JOB_EVENT_TYPES = ['JobQueued', 'JobStarted', 'JobProgressed', 'JobCompleted', 'JobFailed'] as const;

export type JobStateName = 'queued' | 'started' | 'completed' | 'failed';

export type JobState =
  | { readonly status: 'absent' }
  | {
      readonly status: JobStateName;
      readonly jobId: string;
      readonly corpusKey: string;
      readonly corpusId: string;
      readonly request: JobRequest;
      readonly cutoffAt?: string;
      readonly counts: JobCounts;
      readonly cursor?: string | number;
    };

export const jobFold = {
  initialState: { status: 'absent' } as JobState,
  evolve(state: JobState, event: JobEvent): JobState {
    switch (event.type) {
      case 'JobQueued': {
        const d = event.data;
        return { status: 'queued', jobId: d.jobId, corpusKey: d.corpusKey, corpusId: d.corpusId, request: d.request, cutoffAt: d.cutoffAt, counts: NO_COUNTS };
      }
      case 'JobStarted':
        return state.status === 'absent' ? state : { ...state, status: 'started' };
      case 'JobProgressed':
        return state.status === 'absent' ? state : { ...state, counts: event.data.counts, cursor: event.data.cursor };
      case 'JobCompleted':
        return state.status === 'absent' ? state : { ...state, status: 'completed', counts: event.data.counts };
      case 'JobFailed':
        return state.status === 'absent' ? state : { ...state, status: 'failed', counts: event.data.counts };
      default:
        return assertNever(event);
    }
  },
};

export const jobNotFound = (jobId: string) => notFound('job.not_found', `Job "${jobId}" does not exist`, jobId);

export function decideQueueJob(
  state: JobState,
  command: { jobId: string; corpusKey: string; corpusId: string; request: JobRequest; total?: number; cutoffAt?: string; createdBy?: string },
  now: Date,
): JobEvent[] {
  if (state.status !== 'absent') throw conflict('job.exists', `Job "${command.jobId}" already exists`);
  return [{ type: 'JobQueued', data: { ...command, createdAt: now.toISOString() } }];
}

const running = (state: JobState, jobId: string) => {
  if (state.status === 'absent') throw jobNotFound(jobId);
  return state;
};

export function decideStartJob(state: JobState, jobId: string, now: Date): JobEvent[] {
  const s = running(state, jobId);
  return s.status === 'queued' ? [{ type: 'JobStarted', data: { jobId, startedAt: now.toISOString() } }] : [];
}

export function decideJobProgress(state: JobState, jobId: string, counts: JobCounts, cursor: string | number): JobEvent[] {
  const s = running(state, jobId);
  return s.status === 'started' ? [{ type: 'JobProgressed', data: { jobId, counts, cursor } }] : [];
}

export function decideFinishJob(state: JobState, jobId: string, outcome: { counts: JobCounts; failure?: string; comment?: string }, now: Date): JobEvent[] {
  const s = running(state, jobId);
  if (s.status === 'completed' || s.status === 'failed') return [];
  return outcome.failure
    ? [{ type: 'JobFailed', data: { jobId, counts: outcome.counts, reason: outcome.failure, failedAt: now.toISOString() } }]
    : [{ type: 'JobCompleted', data: { jobId, counts: outcome.counts, ...(outcome.comment ? { comment: outcome.comment } : {}), completedAt: now.toISOString() } }];
}
