import { CommandContext, DomainError } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore } from '@lib/platform/sqlite';
import { PipelineRunEvent } from '../../domain/pipeline-run';
import type { AgentRuns } from '@lib/agents/runs';
import { processRecord } from './record-processor';
import { RunLog } from './run-log';

/** A record's attempts against a real event store, with the agent's sessions and turns faked and the clock in hand. */
describe('processRecord', () => {
  const at = new Date('2026-01-01T00:00:00.000Z');
  const created = (timeout: number): PipelineRunEvent => ({ type: 'PipelineRunCreated', data: { runId: 'run_1', pipelineKey: 'p', pipelineId: 'pip_1', agentKey: 'a', triggerType: 'manual', syncMode: 'incremental', processingOptions: { record_timeout_minutes: timeout, max_concurrent_records: 1 }, sourceRecordMetadata: {}, retry: null, createdAt: at.toISOString() } });
  const fetched: PipelineRunEvent = { type: 'PipelineRecordFetched', data: { runId: 'run_1', record: { recordId: 'https://x.test/a', title: 'A', text: 'Alpha', metadata: {} }, fetchedAt: at.toISOString() } };

  async function setup(timeout: number) {
    const store = new SqliteEventStore(new SqliteDatabase({ path: ':memory:' }));
    let clock = at.getTime();
    const ctx = (step: string): CommandContext => ({ actor: { type: 'system', id: 't' }, requestId: 'r', commandId: `c|${step}`, now: new Date(clock) });
    const log = await RunLog.open(store, 'pipelinerun-run_1');
    await log.write(() => [created(timeout), fetched], ctx('seed'));
    const advance = (minutes: number) => (clock += minutes * 60_000);
    const types = async () => (await store.readStream('pipelinerun-run_1')).map((e) => [e.type, (e.data as { attempt?: number; final?: boolean }).attempt, (e.data as { final?: boolean }).final]);
    return { store, log, ctx, advance, clock: { now: () => new Date(clock) }, types };
  }

  it('stops retrying when the record’s budget (twice the timeout) is spent, then dead-letters it once', async () => {
    const { log, ctx, advance, clock, types } = await setup(30);
    const sessions = { create: async () => ({}) } as unknown as AgentRuns;
    // Each attempt takes 35 minutes of service time and fails: the second one ends past the 60-minute budget.
    const inputs = { input: async () => (advance(35), { events: [], error: new DomainError('unavailable', 'llm.down', 'the model is down') }) } as unknown as AgentRuns;
    await processRecord({ sessions, inputs, clock, ctx }, log, 'https://x.test/a', new AbortController().signal);
    expect((await types()).slice(2)).toEqual([
      ['PipelineRecordAttempted', 1, false],
      ['PipelineRecordAttempted', 2, true],
      ['PipelineRecordDeadLettered', undefined, undefined],
    ]);
  });

  it('an attempt resumed after a crash whose agent had answered is recorded completed without a new turn', async () => {
    const { log, ctx, clock, types } = await setup(30);
    let turns = 0;
    const sessions = {
      create: async () => {
        throw new DomainError('conflict', 'session.key_taken', 'taken');
      },
      active: async () => ({ session: { turn: undefined, events: [{ type: 'SessionAgentOutput', data: { content: 'Indexed before the crash.' } }] } }),
    } as unknown as AgentRuns;
    // The input was stored before the crash: the inputs answer nothing new (its external id is held).
    const inputs = { input: async () => (turns++, { events: [] }) } as unknown as AgentRuns;
    await processRecord({ sessions, inputs, clock, ctx }, log, 'https://x.test/a', new AbortController().signal);
    expect((await types()).slice(2)).toEqual([['PipelineRecordAttempted', 1, false]]);
    expect(turns).toBe(1);
    expect(log.state.status !== 'absent' && log.state.records['https://x.test/a']).toMatchObject({ done: true, outcome: 'completed' });
  });
});
