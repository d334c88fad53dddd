import type { JobEvent } from '@lib/corpora/events';
import { JOBS, jobRow } from '@lib/corpora/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

/** Background jobs with their state and progress, for `/v2/jobs` and for the job runner's queue. */
export const jobsProjection: ReadModelProjection = {
  name: 'jobs',
  version: 1,
  target: 'read',
  eventTypes: ['JobQueued', 'JobStarted', 'JobProgressed', 'JobCompleted', 'JobFailed'],
  collections: [{ name: JOBS, indexes: [{ fields: ['state'] }, { fields: ['created_at'] }, { fields: ['corpus_key'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as JobEvent;
    switch (event.type) {
      case 'JobQueued':
        return [put(JOBS, jobRow(event.data))];
      case 'JobStarted':
        return [patch(JOBS, event.data.jobId, { set: { state: 'started', started_at: event.data.startedAt } })];
      case 'JobProgressed':
        return [patch(JOBS, event.data.jobId, { set: { counts: event.data.counts } })];
      case 'JobCompleted': {
        const d = event.data;
        return [patch(JOBS, d.jobId, { set: { state: 'completed', counts: d.counts, completed_at: d.completedAt, ...(d.comment ? { comment: d.comment } : {}) } })];
      }
      case 'JobFailed':
        return [patch(JOBS, event.data.jobId, { set: { state: 'failed', counts: event.data.counts, completed_at: event.data.failedAt, comment: event.data.reason } })];
      default:
        return assertNever(event);
    }
  },
};
