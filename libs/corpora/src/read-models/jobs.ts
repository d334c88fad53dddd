import { collection } from '@lib/platform/projections';
import { JobCounts, JobEvent, NO_COUNTS } from '../domain/job';

/** Background jobs with their state and progress, keyed by job id (projections/jobs). */
export type JobRow = {
  readonly id: string;
  readonly type: string;
  readonly corpus_key: string;
  readonly corpus_id: string;
  readonly state: 'queued' | 'started' | 'completed' | 'failed';
  readonly created_at: string;
  readonly started_at?: string;
  readonly completed_at?: string;
  readonly created_by: string | null;
  readonly cutoff_at: string | null;
  readonly total: number | null;
  readonly counts: JobCounts;
  readonly comment?: string;
};

export const JOBS = collection<JobRow>('jobs');

type JobQueued = Extract<JobEvent, { type: 'JobQueued' }>['data'];

/** The row a `JobQueued` makes. */
export const jobRow = (d: JobQueued): JobRow => ({
  id: d.jobId,
  type: d.request.type,
  corpus_key: d.corpusKey,
  corpus_id: d.corpusId,
  state: 'queued',
  created_at: d.createdAt,
  created_by: d.createdBy ?? null,
  cutoff_at: d.cutoffAt ?? null,
  total: d.total ?? null,
  counts: { ...NO_COUNTS },
});

/** The reference API's Job, with `progress` (counts so far) added. */
export function jobView(row: JobRow): Record<string, unknown> {
  return {
    id: row.id,
    type: row.type,
    corpus_keys: [row.corpus_key],
    state: row.state,
    created_at: row.created_at,
    ...(row.started_at ? { started_at: row.started_at } : {}),
    ...(row.completed_at ? { completed_at: row.completed_at } : {}),
    ...(row.created_by ? { created_by_username: row.created_by } : {}),
    ...(row.comment ? { comment: row.comment } : {}),
    progress: { ...(row.total !== null ? { total: row.total } : {}), ...row.counts },
  };
}
