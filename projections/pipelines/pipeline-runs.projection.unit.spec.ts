import { PIPELINE_DEAD_LETTERS, PIPELINE_RUN_EVENTS, PIPELINE_RUNS } from '@lib/pipelines/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { pipelineRunsProjection } from './pipeline-runs.projection';

describe('pipeline runs projection', () => {
  const log = new EventLog();
  const at = '2026-01-01T00:00:00.000Z';
  const run = 'pipelinerun-run_1';
  const ids = { runId: 'run_1', pipelineId: 'pip_1' };
  const dl = { recordId: 'https://x.test/b', deadLetterId: 'pdl_b' };
  log.append(run, 'PipelineRunCreated', { ...ids, pipelineKey: 'docs', agentKey: 'a', triggerType: 'manual', syncMode: 'incremental', processingOptions: { record_timeout_minutes: 30, max_concurrent_records: 4 }, sourceRecordMetadata: {}, retry: null, createdAt: at });
  log.append(run, 'PipelineRunStarted', { runId: 'run_1', agentKey: 'a', triggerType: 'manual', syncMode: 'incremental', startedAt: at });
  for (const id of ['https://x.test/a', dl.recordId]) log.append(run, 'PipelineRecordFetched', { runId: 'run_1', record: { recordId: id, title: null, text: 't', metadata: {} }, fetchedAt: at });
  log.append(run, 'PipelineRecordAttempted', { ...ids, recordId: 'https://x.test/a', deadLetterId: 'pdl_a', attempt: 1, status: 'completed', final: false, sessionKey: 's1', durationMs: 5, reason: 'ok', startedAt: at, at });
  log.append(run, 'PipelineRecordAttempted', { ...ids, ...dl, attempt: 1, status: 'failed', final: true, sessionKey: 's2', durationMs: 5, reason: 'boom', startedAt: at, at });
  log.append(run, 'PipelineRecordDeadLettered', { ...ids, ...dl, pipelineKey: 'docs', attempts: 1, reason: 'boom', at });
  log.append(run, 'PipelineRunEnded', { ...ids, status: 'completed', counts: { fetched: 2, processed: 1, failed: 1 }, error: null, unreached: [], endedAt: at });

  it('counts records, lists the run’s API events in order, and upserts the dead letter', async () => {
    const harness = await given(log.events).project(pipelineRunsProjection);
    expect(await harness.reads.get(PIPELINE_RUNS, 'run_1')).toMatchObject({ status: 'completed', records_fetched: 2, records_processed: 1, records_failed: 1, open: false });
    const events = (await harness.reads.find(PIPELINE_RUN_EVENTS, { sort: { field: 'seq', direction: 'asc' }, limit: 10 })).items;
    expect(events.map((e) => [e.type, (e.body as { status?: string }).status])).toEqual([['run_started', undefined], ['record_processing', 'completed'], ['record_processing', 'failed'], ['record_processing', 'dead_lettered'], ['run_completed', 'completed']]);
    expect(await harness.reads.get(PIPELINE_DEAD_LETTERS, 'pdl_b')).toMatchObject({ status: 'pending', attempt_count: 1, origin: 'pipeline', last_run_id: 'run_1' });
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(pipelineRunsProjection, log.events);
    expect(twice).toEqual(once);
  });
});
