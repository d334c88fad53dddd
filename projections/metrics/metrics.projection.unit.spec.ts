import { bucketId, METRIC_BUCKETS, MetricBucketRow } from '@lib/metrics/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { metricsProjection } from './metrics.projection';

const MINUTE = Date.parse('2026-12-01T10:00:00.000Z');

describe('metrics projection', () => {
  const log = new EventLog();
  const query = (corpusKeys: string[], latencyMillis: number, startedAt = '2026-12-01T10:00:05.000Z') =>
    log.append(`query-${log.events.length}`, 'QueryHistoryRecorded', { queryId: 'q', request: {}, query: 'q', corpusKeys, results: [], spans: [], startedAt, latencyMillis });
  query(['sea', 'land'], 40);
  query(['sea', 'sea'], 300);
  query(['sea'], 20_000, '2026-12-01T10:01:00.000Z');
  log.append('session-agt_1.s1', 'SessionTurnEnded', { turnId: 't1', outcome: 'answered', usage: { input_tokens: 10, output_tokens: 3 }, createdAt: '2026-12-01T10:00:30.000Z' });
  log.append('session-agt_1.s1', 'SessionTurnEnded', { turnId: 't2', outcome: 'failed', error: 'LLM "x" failed', usage: { input_tokens: 0, output_tokens: 0 }, createdAt: '2026-12-01T10:00:40.000Z' });
  log.append('session-agt_1.s1', 'SessionToolCalled', { eventId: 'e1', turnId: 't1', toolCallId: 'c1', createdAt: '2026-12-01T10:00:10.000Z' });
  log.append('session-agt_1.s1', 'SessionToolReturned', { eventId: 'e2', turnId: 't1', toolCallId: 'c1', error: true, toolOutput: {}, createdAt: '2026-12-01T10:00:11.000Z' });
  log.append('session-agt_1.s1', 'SessionToolReturned', { eventId: 'e3', turnId: 't1', toolCallId: 'c2', error: false, toolOutput: {}, createdAt: '2026-12-01T10:00:12.000Z' });
  log.append('llmusage-llm_1.2026-12', 'LlmUsageRecorded', { llmId: 'llm_1', llmName: 'gpt', input: 7, output: 2, estimated: false, outcome: 'failed', at: '2026-12-01T10:00:00.000Z' });
  log.append('document-sea.d1', 'DocumentIndexed', { corpusKey: 'sea', documentId: 'd1', indexedAt: '2026-12-01T10:00:00.000Z' });
  log.append('pipelinerun-run_1', 'PipelineRunEnded', { runId: 'run_1', pipelineId: 'p', status: 'failed', endedAt: '2026-12-01T10:00:00.000Z' });

  const row = async (h: Awaited<ReturnType<ReturnType<typeof given>['project']>>, family: MetricBucketRow['family'], label: string, minute = MINUTE) =>
    (await h.reads.get<MetricBucketRow>(METRIC_BUCKETS, bucketId(family, label, minute)))?.v;

  it('counts each event into its minute, in the total and under each label it names once', async () => {
    const h = await given(log.events).project(metricsProjection);
    expect(await row(h, 'query', '')).toEqual({ count: 2, latency_ms: { lt_50: 1, lt_500: 1 } });
    expect(await row(h, 'query', 'corpus:sea')).toEqual({ count: 2, latency_ms: { lt_50: 1, lt_500: 1 } });
    expect(await row(h, 'query', 'corpus:land')).toEqual({ count: 1, latency_ms: { lt_50: 1 } });
    expect(await row(h, 'query', 'corpus:sea', MINUTE + 60_000)).toEqual({ count: 1, latency_ms: { ge_10000: 1 } });
    expect(await row(h, 'agent_turn', 'agent:agt_1')).toEqual({ count: 2, failed: 1, input_tokens: 10, output_tokens: 3 });
    expect(await row(h, 'agent_tool', '')).toEqual({ calls: 1, errors: 1 });
    expect(await row(h, 'llm', 'llm:gpt')).toEqual({ count: 1, input_tokens: 7, output_tokens: 2 });
    expect(await row(h, 'document', 'corpus:sea')).toEqual({ indexed: 1 });
    expect(await row(h, 'pipeline_run', '')).toEqual({ count: 1, failed: 1 });
    h.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(metricsProjection, log.events);
    expect((once as Record<string, unknown[]>)[METRIC_BUCKETS]).toHaveLength(14);
    expect(twice).toEqual(once);
  });
});
