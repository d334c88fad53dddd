import { SCHEDULE_EXECUTIONS, SCHEDULE_RUNS, SCHEDULES } from '@lib/schedules/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { schedulesProjection } from './schedules.projection';

describe('schedules projection', () => {
  const log = new EventLog();
  const settings = { name: 'Pulse', message: [{ type: 'text', content: 'Report.' }], schedule: { type: 'interval', interval: 'PT1H' }, enabled: true, session_metadata: {}, max_executions_to_keep: 2, stall_timeout_seconds: 3600 };
  const ids = { agentId: 'ag_1', agentKey: 'reporter', key: 'pulse' };
  const stream = 'agent_schedule-ag_1.pulse';
  log.append(stream, 'ScheduleCreated', { ...ids, settings, anchorAt: '2026-01-01T00:00:00.000Z', nextDueAt: '2026-01-01T01:00:00.000Z', createdAt: '2026-01-01T00:00:00.000Z' });
  for (const [i, hour] of ['01', '02', '03'].entries()) {
    const runId = `agent_schedule:ag_1.pulse:2026-01-01T${hour}:00:00.000Z`;
    log.append(stream, 'ScheduleFired', { ...ids, runId, dueAt: `2026-01-01T${hour}:00:00.000Z`, missed: 0, nextDueAt: `2026-01-01T0${i + 2}:00:00.000Z`, firedAt: `2026-01-01T${hour}:00:00.000Z` });
    log.append(stream, 'ScheduleAttempted', { ...ids, runId, attempt: 1, status: i === 2 ? 'error' : 'success', sessionKey: `s${i}`, errorMessage: i === 2 ? 'boom' : null, executedAt: `2026-01-01T${hour}:00:05.000Z`, pruneBefore: i === 2 ? '2026-01-01T02:00:05.000Z' : null });
  }
  log.append('agent_schedule-ag_2.other', 'ScheduleCreated', { agentId: 'ag_2', agentKey: 'gone', key: 'other', settings, anchorAt: '2026-01-01T00:00:00.000Z', nextDueAt: null, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('agent-gone', 'AgentDeleted', { agentId: 'ag_2', agentKey: 'gone', deletedAt: '2026-01-02T00:00:00.000Z' });

  it('keeps the newest executions, closes finished runs, and drops a deleted agent’s schedules', async () => {
    const harness = await given(log.events).project(schedulesProjection);
    expect(await harness.reads.get(SCHEDULES, 'reporter/pulse')).toMatchObject({ next_due_at: '2026-01-01T04:00:00.000Z', last_execution_at: '2026-01-01T03:00:05.000Z' });
    expect((await harness.reads.find(SCHEDULE_EXECUTIONS, { limit: 10 })).items.map((r) => r.id)).toEqual(['agent_schedule:ag_1.pulse:2026-01-01T02:00:00.000Z#1', 'agent_schedule:ag_1.pulse:2026-01-01T03:00:00.000Z#1']);
    expect((await harness.reads.find(SCHEDULE_RUNS, { where: [{ field: 'open', op: 'eq', value: true }], limit: 10 })).items.map((r) => r.run_id)).toEqual(['agent_schedule:ag_1.pulse:2026-01-01T03:00:00.000Z']);
    expect(await harness.reads.get(SCHEDULES, 'gone/other')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(schedulesProjection, log.events);
    expect(twice).toEqual(once);
  });
});
