import { EventLog } from '@lib/testing';
import { hears, webhookMessage, webhookTypeOf } from './source-events';

/** Source events built by hand as their contexts store them (type strings and fields), never imported. */
describe('what webhooks hear in the log', () => {
  const log = new EventLog();
  const session = log.append('session-agt_1.s1', 'SessionCreated', { agentId: 'agt_1', agentKey: 'desk', sessionKey: 's1', createdAt: '2026-01-01T00:00:00.000Z', secrets: { names: ['tok'], sealed: { tok: 'x' } } });
  const ended = (outcome: string, error?: string) => log.append('session-agt_1.s1', 'SessionTurnEnded', { turnId: 'trn_1', outcome, usage: { input_tokens: 3 }, ...(error ? { error } : {}), createdAt: '2026-01-01T00:00:05.000Z' });
  const run = log.append('pipelinerun-run_1', 'PipelineRunCreated', { runId: 'run_1', pipelineKey: 'docs', pipelineId: 'pip_1', agentKey: 'indexer', triggerType: 'manual', createdAt: '2026-01-01T00:00:00.000Z' });

  it('maps a turn that answered to session.turn_completed with the keys from the session’s first event', () => {
    const message = webhookMessage(ended('answered'), session);
    expect(message).toEqual({ agentKey: 'desk', payload: { type: 'session.turn_completed', timestamp: '2026-01-01T00:00:05.000Z', data: { agent_key: 'desk', session_key: 's1', turn_id: 'trn_1', outcome: 'answered' } } });
    expect(JSON.stringify(message)).not.toContain('sealed');
  });

  it('sends nothing for the turns of a replay session (issue 45: a re-run, not news)', () => {
    const replay = log.append('session-agt_1.rpl_1', 'SessionCreated', { agentId: 'agt_1', agentKey: 'desk', sessionKey: 'rpl_1', createdAt: '2026-01-01T00:00:00.000Z', replayOf: { sessionKey: 's1', mode: 'recorded', agentRevision: 0, allowSideEffects: false } });
    expect(webhookMessage(ended('answered'), replay)).toBeUndefined();
    expect(webhookMessage(ended('failed', 'diverged'), replay)).toBeUndefined();
  });

  it('maps failed and limit outcomes to session.turn_failed with the error, and hears nothing of an interrupt or a client tool call', () => {
    expect(webhookMessage(ended('failed', 'the model answered 500'), session)?.payload).toMatchObject({ type: 'session.turn_failed', data: { outcome: 'failed', error: 'the model answered 500' } });
    expect(webhookTypeOf(ended('limit'))).toBe('session.turn_failed');
    expect(webhookTypeOf(ended('interrupted'))).toBeUndefined();
    expect(webhookTypeOf(ended('client_tool'))).toBeUndefined();
  });

  it('maps SessionToolApprovalRequested (issue 43, part 2) to session.approval_requested, leaving the arguments out', () => {
    const asked = log.append('session-agt_1.s1', 'SessionToolApprovalRequested', { eventId: 'aev_9', turnId: 'trn_2', toolCallId: 'call_1', toolName: 'send_mail', toolConfigurationName: 'mailer', arguments: { to: 'a@example.com', token: '****' }, createdAt: '2026-01-01T00:01:00.000Z', expiresAt: '2026-01-02T00:01:00.000Z' });
    expect(webhookMessage(asked, session)?.payload).toEqual({
      type: 'session.approval_requested',
      timestamp: '2026-01-01T00:01:00.000Z',
      data: { agent_key: 'desk', session_key: 's1', event_id: 'aev_9', turn_id: 'trn_2', tool_call_id: 'call_1', tool_name: 'send_mail', tool_configuration_name: 'mailer', expires_at: '2026-01-02T00:01:00.000Z' },
    });
  });

  it('maps pipeline runs that completed or failed, not cancelled ones', () => {
    const end = (status: string, error: string | null) => log.append('pipelinerun-run_1', 'PipelineRunEnded', { runId: 'run_1', pipelineId: 'pip_1', status, counts: { fetched: 4, processed: 3, failed: 1 }, error, unreached: [], endedAt: '2026-01-01T00:02:00.000Z' });
    expect(webhookMessage(end('completed', null), run)?.payload).toEqual({ type: 'pipeline_run.completed', timestamp: '2026-01-01T00:02:00.000Z', data: { pipeline_key: 'docs', run_id: 'run_1', agent_key: 'indexer', trigger_type: 'manual', status: 'completed', counts: { fetched: 4, processed: 3, failed: 1 } } });
    expect(webhookMessage(end('failed', 'source unreachable'), run)?.payload.data).toMatchObject({ status: 'failed', error: 'source unreachable' });
    expect(webhookTypeOf(end('cancelled', null))).toBeUndefined();
  });

  it('maps a schedule execution that failed its last attempt only', () => {
    const attempt = (n: number, status: string) => log.append('schedule-agt_1.nightly', 'ScheduleAttempted', { agentId: 'agt_1', agentKey: 'desk', key: 'nightly', runId: 'wfr_1', attempt: n, status, sessionKey: 'sch-1', errorMessage: status === 'error' ? 'turn failed' : null, executedAt: '2026-01-01T03:00:00.000Z', pruneBefore: null });
    expect(webhookTypeOf(attempt(1, 'error'))).toBeUndefined();
    expect(webhookTypeOf(attempt(3, 'success'))).toBeUndefined();
    expect(webhookMessage(attempt(3, 'error'), undefined)?.payload).toEqual({ type: 'schedule_execution.failed', timestamp: '2026-01-01T03:00:00.000Z', data: { agent_key: 'desk', schedule_key: 'nightly', workflow_run_id: 'wfr_1', attempt: 3, session_key: 'sch-1', error_message: 'turn failed' } });
  });

  it('narrows session events, and only those, to the agents a webhook lists', () => {
    const turn = webhookMessage(ended('answered'), session)!;
    expect(hears({ eventTypes: ['session.turn_completed'], agentKeys: null }, turn)).toBe(true);
    expect(hears({ eventTypes: ['session.turn_completed'], agentKeys: ['desk'] }, turn)).toBe(true);
    expect(hears({ eventTypes: ['session.turn_completed'], agentKeys: ['other'] }, turn)).toBe(false);
    expect(hears({ eventTypes: ['session.turn_failed'], agentKeys: null }, turn)).toBe(false);
    const runEnd = webhookMessage(log.append('pipelinerun-run_1', 'PipelineRunEnded', { runId: 'run_1', status: 'completed', counts: {}, error: null, endedAt: 'x' }), run)!;
    expect(hears({ eventTypes: ['pipeline_run.completed'], agentKeys: ['other'] }, runEnd)).toBe(true);
  });

  it('sends nothing for a session event whose session’s first event is missing', () => {
    expect(webhookMessage(ended('answered'), undefined)).toBeUndefined();
  });

  it('tells an alias canary decision with the figures it was made on, to any webhook of its type', () => {
    const figures = { candidate: { sessions: 3, mean: 0.9 }, control: { sessions: 2, mean: 0.8 }, difference: 0.1, interval95: null };
    const decided = log.append('agent_alias-support', 'AliasCanaryDecided', { key: 'support', canaryId: 'cny_1', decision: 'promoted', reason: 'fine', figures, settings: { candidateAgentKey: 'new', controlAgentKey: 'old' }, decidedAt: '2026-01-01T04:00:00.000Z' });
    const message = webhookMessage(decided, undefined)!;
    expect(message.payload).toEqual({ type: 'alias.canary_decided', timestamp: '2026-01-01T04:00:00.000Z', data: { alias_key: 'support', canary_id: 'cny_1', decision: 'promoted', reason: 'fine', candidate_agent_key: 'new', control_agent_key: 'old', figures } });
    expect(hears({ eventTypes: ['alias.canary_decided'], agentKeys: ['other'] }, message)).toBe(true);
  });
});
