import { SESSIONS } from '@lib/agents/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { sessionsProjection } from './sessions.projection';

describe('agent sessions projection', () => {
  const log = new EventLog();
  const at = '2026-01-01T00:00:00.000Z';
  const created = (key: string) => ({ agentId: 'agt_1', agentKey: 'a', sessionKey: key, name: key, metadata: { tier: 'gold' }, enabled: true, ttiMinutes: 0, createdAt: at });
  log.append('session-agt_1.s1', 'SessionCreated', created('s1'));
  log.append('session-agt_1.s1', 'SessionTurnStarted', { turnId: 't1', step: 'main', holder: 'h', agentRevision: 0, createdAt: at });
  log.append('session-agt_1.s1', 'SessionStepTransitioned', { eventId: 'aev_1', turnId: 't1', fromStep: 'main', toStep: 'next', content: '', createdAt: at });
  log.append('session-agt_1.s1', 'SessionTurnEnded', { turnId: 't1', outcome: 'answered', usage: { input_tokens: 10, output_tokens: 3 }, nextStep: 'main', createdAt: '2026-01-02T00:00:00.000Z' });
  log.append('session-agt_1.s1', 'SessionUpdated', { changes: { name: 'renamed', metadata: { tier: 'silver' } }, updatedAt: '2026-01-03T00:00:00.000Z' });
  log.append('session-agt_1.s2', 'SessionCreated', created('s2'));
  log.append('session-agt_1.s2', 'SessionDeleted', { deletedAt: at });
  log.append('session-agt_2.s3', 'SessionCreated', { ...created('s3'), agentId: 'agt_2', agentKey: 'b' });
  log.append('agent-b', 'AgentDeleted', { agentId: 'agt_2', agentKey: 'b', deletedAt: at });

  it('keeps each session with its status, step and usage, and drops deleted sessions and agents', async () => {
    const harness = await given(log.events).project(sessionsProjection);
    expect(await harness.reads.get(SESSIONS, 'agt_1.s1')).toMatchObject({ name: 'renamed', metadata: { tier: 'silver' }, status: 'stopped', current_step_name: 'main', input_tokens: 10, output_tokens: 3, turns: 1, turn_id: null });
    expect(await harness.reads.get(SESSIONS, 'agt_1.s2')).toBeUndefined();
    expect(await harness.reads.get(SESSIONS, 'agt_2.s3')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(sessionsProjection, log.events);
    expect(once).toMatchObject({ [SESSIONS]: [{ id: 'agt_1.s1', input_tokens: 10 }] });
    expect(twice).toEqual(once);
  });
});
