import { approvalPolicy, approvalProblem, durationMs } from './tool-approval';
import { toolProblems } from './tool-config';

describe('requires_approval', () => {
  it('reads ISO 8601 durations in weeks, days, hours, minutes and seconds, and nothing of unfixed length', () => {
    expect(durationMs('PT1S')).toBe(1000);
    expect(durationMs('P1DT2H30M')).toBe((24 + 2.5) * 3600 * 1000);
    expect(durationMs('P1W')).toBe(7 * 24 * 3600 * 1000);
    for (const bad of ['P', 'PT', 'P1M', 'P1Y', '1D', 'PT-1S', 'P1DT']) expect(durationMs(bad)).toBeUndefined();
  });

  it('takes true, false or a rule, and names the field that is wrong', () => {
    expect(approvalProblem(true)).toBeUndefined();
    expect(approvalProblem({ when: "get('$.args.amount') > 100", approvers: 'session_user', timeout: 'PT30M' })).toBeUndefined();
    expect(approvalProblem('yes')).toEqual(['requires_approval', 'must be true, false or {"when", "approvers", "timeout"}']);
    expect(approvalProblem({ approvers: 'everyone' })).toEqual(['requires_approval.approvers', 'must be agent_admins or session_user']);
    expect(approvalProblem({ timeout: 'P1M' })?.[0]).toBe('requires_approval.timeout');
    expect(approvalProblem({ timeout: 'P100D' })).toEqual(['requires_approval.timeout', 'must be from 1 second (PT1S) to 90 days (P90D)']);
    expect(approvalProblem({ who: 'me' })?.[0]).toBe('requires_approval.who');
    expect(toolProblems('tool_configurations.pay', 'pay', { type: 'web_get', requires_approval: { timeout: 'soon' } }, 'agent')).toEqual({ 'tool_configurations.pay.requires_approval.timeout': expect.stringContaining('ISO 8601') });
    expect(toolProblems('tool_configurations.ask', 'ask', { type: 'client', requires_approval: true }, 'agent')).toEqual({ 'tool_configurations.ask.requires_approval': expect.stringContaining('client tool') });
  });

  it('fills the defaults: agent administrators decide within a day', () => {
    expect(approvalPolicy({ requires_approval: true })).toEqual({ approvers: 'agent_admins', timeout: 'P1D', timeoutMs: 86_400_000 });
    expect(approvalPolicy({ requires_approval: { when: 'true', timeout: 'PT1S' } })).toEqual({ when: 'true', approvers: 'agent_admins', timeout: 'PT1S', timeoutMs: 1000 });
    expect(approvalPolicy({ requires_approval: false })).toBeUndefined();
    expect(approvalPolicy({})).toBeUndefined();
  });
});
