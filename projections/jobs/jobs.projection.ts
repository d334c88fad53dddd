import type { JobEvent } from '@lib/corpora/events';
import { assertNever, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

export const JOBS_COLLECTION = 'jobs';

/** Background jobs with their state and progress, for `/v2/jobs` and for the job runner's queue. */
export const jobsProjection: ReadModelProjection = {
  name: 'jobs',
  version: 1,
  target: 'read',
  eventTypes: ['JobQueued', 'JobStarted', 'JobProgressed', 'JobCompleted', 'JobFailed'],
  collections: [{ name: JOBS_COLLECTION, indexes: [{ fields: ['state'] }, { fields: ['created_at'] }, { fields: ['corpus_key'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as JobEvent;
    const c = JOBS_COLLECTION;
    switch (event.type) {
      case 'JobQueued': {
        const d = event.data;
        return [
          {
            op: 'put',
            collection: c,
            doc: {
              id: d.jobId,
              type: d.request.type,
              corpus_key: d.corpusKey,
              corpus_id: d.corpusId,
              state: 'queued',
              created_at: d.createdAt,
              created_by: d.createdBy ?? null,
              cutoff_at: d.cutoffAt ?? null,
              total: d.total ?? null,
              counts: { processed: 0, updated: 0, skipped: 0, failed: 0 },
            },
          },
        ];
      }
      case 'JobStarted':
        return [{ op: 'patch', collection: c, id: event.data.jobId, set: { state: 'started', started_at: event.data.startedAt } }];
      case 'JobProgressed':
        return [{ op: 'patch', collection: c, id: event.data.jobId, set: { counts: event.data.counts } }];
      case 'JobCompleted':
        return [
          {
            op: 'patch',
            collection: c,
            id: event.data.jobId,
            set: { state: 'completed', counts: event.data.counts, completed_at: event.data.completedAt, ...(event.data.comment ? { comment: event.data.comment } : {}) },
          },
        ];
      case 'JobFailed':
        return [{ op: 'patch', collection: c, id: event.data.jobId, set: { state: 'failed', counts: event.data.counts, completed_at: event.data.failedAt, comment: event.data.reason } }];
      default:
        return assertNever(event);
    }
  },
};
