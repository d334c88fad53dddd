import type { PipelineEvent, PipelineRunEvent } from '@lib/pipelines/events';
import { PIPELINE_DEAD_LETTERS, PIPELINE_RUN_EVENTS, PIPELINE_RUNS, PipelineRunEventRow } from '@lib/pipelines/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

const runEvent = (recorded: RecordedEvent, runId: string, type: string, recordId: string | null, body: Record<string, unknown>, at: string): ReadOp =>
  put(PIPELINE_RUN_EVENTS, { id: `${runId}/${String(recorded.revision).padStart(8, '0')}`, run_id: runId, seq: recorded.revision, type, source_record_id: recordId, body, occurred_at: at } satisfies PipelineRunEventRow);

/**
 * Pipeline runs with their live counts, their API events (the spec's "Pipeline run event" fields next to the
 * reference's), and dead letters (docs/pipelines.md). A pipeline's deletion drops its runs and dead letters.
 */
export const pipelineRunsProjection: ReadModelProjection = {
  name: 'pipeline_runs',
  version: 2,
  target: 'read',
  eventTypes: ['PipelineRunCreated', 'PipelineRunStarted', 'PipelineRecordFetched', 'PipelineRecordAttempted', 'PipelineRecordDeadLettered', 'PipelineRunWatermarkAdvanced', 'PipelineRunEnded', 'PipelineDeleted', 'PipelineDeadLetterAdded', 'PipelineDeadLetterRemoved'],
  collections: [
    { name: PIPELINE_RUNS, indexes: [{ fields: ['pipeline_id', 'created_at'] }, { fields: ['open'] }] },
    { name: PIPELINE_RUN_EVENTS, indexes: [{ fields: ['run_id', 'seq'] }] },
    { name: PIPELINE_DEAD_LETTERS, indexes: [{ fields: ['pipeline_id'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as PipelineRunEvent | PipelineEvent;
    switch (event.type) {
      case 'PipelineCreated':
      case 'PipelineUpdated':
      case 'PipelineRunRequested':
      case 'PipelineRunClosed':
      case 'PipelineTriggerFired':
      case 'PipelineSourceSynced':
        return [];
      case 'PipelineDeleted': {
        const where = [{ field: 'pipeline_id', op: 'eq' as const, value: event.data.pipelineId }];
        return [
          { op: 'deleteWhere', collection: PIPELINE_RUNS, where },
          { op: 'deleteWhere', collection: PIPELINE_DEAD_LETTERS, where },
        ];
      }
      case 'PipelineDeadLetterAdded': {
        const d = event.data;
        return [put(PIPELINE_DEAD_LETTERS, { id: d.deadLetterId, pipeline_id: d.pipelineId, pipeline_key: d.key, source_record_id: d.sourceRecordId, status: 'pending', error_message: d.errorMessage, last_run_id: null, attempt_count: 0, origin: 'manual', created_at: d.at, updated_at: null })];
      }
      case 'PipelineDeadLetterRemoved':
        return [remove(PIPELINE_DEAD_LETTERS, event.data.deadLetterId)];
      case 'PipelineRunCreated': {
        const d = event.data;
        return [
          put(PIPELINE_RUNS, { id: d.runId, pipeline_key: d.pipelineKey, pipeline_id: d.pipelineId, agent_key: d.agentKey, status: 'running', trigger_type: d.triggerType, records_fetched: 0, records_processed: 0, records_failed: 0, error: null, started_at: null, completed_at: null, created_at: d.createdAt, open: true }),
          ...(d.retry ?? []).map((r) => patch(PIPELINE_DEAD_LETTERS, r.deadLetterId, { set: { status: 'retrying', last_run_id: d.runId, updated_at: d.createdAt } })),
        ];
      }
      case 'PipelineRunStarted': {
        const d = event.data;
        return [patch(PIPELINE_RUNS, d.runId, { set: { started_at: d.startedAt } }), runEvent(recorded, d.runId, 'run_started', null, { agent_key: d.agentKey, trigger_type: d.triggerType, sync_mode: d.syncMode, start_watermark: null, end_watermark: null }, d.startedAt)];
      }
      case 'PipelineRecordFetched':
        return [patch(PIPELINE_RUNS, event.data.runId, { inc: { records_fetched: 1 } })];
      case 'PipelineRecordAttempted': {
        const d = event.data;
        const done = d.status === 'completed';
        const body = { status: d.status, source_record_id: d.recordId, session_key: d.sessionKey, attempt: d.attempt, duration_ms: d.durationMs, reason: d.reason, skipped: done ? false : null, error: done ? null : d.reason, dead_lettered: done ? null : d.final };
        // A record that went through is no dead letter any more (the reference: resolved ones are deleted).
        return [...(done ? [patch(PIPELINE_RUNS, d.runId, { inc: { records_processed: 1 } }), remove(PIPELINE_DEAD_LETTERS, d.deadLetterId)] : []), runEvent(recorded, d.runId, 'record_processing', d.recordId, body, d.at)];
      }
      case 'PipelineRecordDeadLettered': {
        const d = event.data;
        const body = { status: 'dead_lettered', source_record_id: d.recordId, session_key: null, attempt: null, duration_ms: null, reason: d.reason, error: d.reason, dead_lettered: true };
        return [
          patch(PIPELINE_RUNS, d.runId, { inc: { records_failed: 1 } }),
          // Upserted: a record failing again in a later run updates its one dead letter.
          put(PIPELINE_DEAD_LETTERS, { id: d.deadLetterId, pipeline_id: d.pipelineId, pipeline_key: d.pipelineKey, source_record_id: d.recordId, status: 'pending', error_message: d.reason, last_run_id: d.runId, attempt_count: d.attempts, origin: 'pipeline', created_at: d.at, updated_at: d.at }),
          runEvent(recorded, d.runId, 'record_processing', d.recordId, body, d.at),
        ];
      }
      case 'PipelineRunEnded': {
        const d = event.data;
        return [
          patch(PIPELINE_RUNS, d.runId, { set: { status: d.status, error: d.error, completed_at: d.endedAt, open: false, records_fetched: d.counts.fetched, records_processed: d.counts.processed, records_failed: d.counts.failed } }),
          ...d.unreached.map((r) => patch(PIPELINE_DEAD_LETTERS, r.deadLetterId, { set: { status: 'pending', updated_at: d.endedAt } })),
          runEvent(recorded, d.runId, 'run_completed', null, { status: d.status, records_fetched: d.counts.fetched, records_processed: d.counts.processed, records_failed: d.counts.failed, error: d.error }, d.endedAt),
        ];
      }
      case 'PipelineRunWatermarkAdvanced':
        return [runEvent(recorded, event.data.runId, 'watermark_advanced', null, { watermark: event.data.watermark }, event.data.at)];
      case 'PipelineRunCancelRequested':
      case 'PipelineRunFetchEnded':
        return [];
      default:
        return assertNever(event);
    }
  },
};
