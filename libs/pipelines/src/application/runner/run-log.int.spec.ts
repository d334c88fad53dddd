import { CommandContext } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore } from '@lib/platform/sqlite';
import { PipelineRunEvent } from '../../domain/pipeline-run';
import { RunLog } from './run-log';

/** A run's stream written by its runner's concurrent steps (records finishing at once, the fetcher). */
describe('RunLog', () => {
  const at = '2026-01-01T00:00:00.000Z';
  const created: PipelineRunEvent = { type: 'PipelineRunCreated', data: { runId: 'run_1', pipelineKey: 'p', pipelineId: 'pip_1', agentKey: 'a', triggerType: 'manual', syncMode: 'incremental', processingOptions: { record_timeout_minutes: 30, max_concurrent_records: 16 }, sourceRecordMetadata: {}, retry: null, createdAt: at } };
  const fetched = (id: string): PipelineRunEvent => ({ type: 'PipelineRecordFetched', data: { runId: 'run_1', record: { recordId: id, title: id, text: id, metadata: {} }, fetchedAt: at } });
  const ctx = (step: string): CommandContext => ({ actor: { type: 'system', id: 't' }, requestId: 'r', commandId: `c|${step}`, now: new Date(at) });

  it('stores every one of 40 writes made at once, each decided on the state the others left', async () => {
    const store = new SqliteEventStore(new SqliteDatabase({ path: ':memory:' }));
    const log = await RunLog.open(store, 'pipelinerun-run_1');
    await log.write(() => [created], ctx('seed'));
    const ids = Array.from({ length: 40 }, (_, i) => `https://x.test/${i}`);
    // Two writers for each record: the second must see the first's event and decide nothing.
    const writes = [...ids, ...ids].map((id, i) => log.write((s) => (s.status !== 'absent' && !s.records[id] ? [fetched(id)] : []), ctx(`fetch|${id}|${i}`)));
    await expect(Promise.all(writes)).resolves.toBeDefined();
    const stored = await store.readStream('pipelinerun-run_1');
    expect(stored.filter((e) => e.type === 'PipelineRecordFetched').map((e) => (e.data as { record: { recordId: string } }).record.recordId).sort()).toEqual([...ids].sort());
    expect(Object.keys((log.state as { records: object }).records)).toHaveLength(40);
  });

  it('fails only the write whose decision throws; the others of its append are stored', async () => {
    const store = new SqliteEventStore(new SqliteDatabase({ path: ':memory:' }));
    const log = await RunLog.open(store, 'pipelinerun-run_1');
    await log.write(() => [created], ctx('seed'));
    const results = await Promise.allSettled([
      log.write(() => [fetched('a')], ctx('a')),
      log.write(() => {
        throw new Error('bad decision');
      }, ctx('b')),
      log.write(() => [fetched('c')], ctx('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await store.readStream('pipelinerun-run_1')).map((e) => e.type)).toEqual(['PipelineRunCreated', 'PipelineRecordFetched', 'PipelineRecordFetched']);
  });
});
