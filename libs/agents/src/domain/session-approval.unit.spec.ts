import { givenEvents } from '@lib/testing';
import type { ApprovalApprovers, SessionEvent } from './session-events';
import { sessionFold, sessionStatus } from './session';
import { decideApprovalExpiry, decideToolApproval, decideToolOutputs, ToolApprovalCommand } from './session-input';

const earlier = '2026-12-02T09:00:00.000Z';
const now = new Date('2026-12-02T10:00:00.000Z');
const at = now.toISOString();
const expiresAt = '2026-12-02T11:00:00.000Z';
const ref = { agentKey: 'ag', sessionKey: 's1' };
function ids() {
  let n = 0;
  return { newEventId: () => `aev_${++n}` };
}
const admin = { principal: 'user:ada', agentAdmin: true };
const user = { principal: 'user:bob', agentAdmin: false };

const created: SessionEvent = { type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'ag', sessionKey: 's1', name: 's1', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: earlier } };
const input: SessionEvent = { type: 'SessionInputReceived', data: { eventId: 'aev_in', createdAt: earlier, messages: [{ type: 'text', content: 'pay Ada' }], step: 'main' } };
const started: SessionEvent = { type: 'SessionTurnStarted', data: { turnId: 'turn_1', step: 'review', holder: 'h1', agentRevision: 1, createdAt: earlier } };
const called = (n: number, args: string): SessionEvent => ({
  type: 'SessionToolCalled',
  data: { eventId: `aev_call${n}`, turnId: 'turn_1', createdAt: earlier, toolCallId: `tc_${n}`, modelCallId: 'mc_1', toolConfigurationName: `pay${n}`, toolName: 'web_get', toolInput: JSON.parse(args), arguments: args, step: 'review' },
});
const requested = (n: number, approvers: ApprovalApprovers = 'agent_admins'): SessionEvent => ({
  type: 'SessionToolApprovalRequested',
  data: { eventId: `aev_req${n}`, turnId: 'turn_1', createdAt: earlier, toolCallId: `tc_${n}`, toolName: 'web_get', toolConfigurationName: `pay${n}`, arguments: { url: `https://pay.example/${n}`, token: '****' }, expiresAt, approvers, sessionUser: 'user:bob', timerId: `approval-${n}` },
});
const ended: SessionEvent = { type: 'SessionTurnEnded', data: { turnId: 'turn_1', outcome: 'approval', usage: { input_tokens: 1, output_tokens: 1 }, nextStep: 'review', createdAt: earlier } };
/** A turn paused on step `review` with two calls waiting for approval (the second for the session's user). */
const waiting: SessionEvent[] = [created, input, started, called(1, '{"url":"https://pay.example/1"}'), called(2, '{"url":"https://pay.example/2"}'), requested(1), requested(2, 'session_user'), ended];
const command = (extra: Partial<ToolApprovalCommand>): ToolApprovalCommand => ({ ...ref, ...ids(), now, toolCallId: 'tc_1', decision: 'approve', decider: admin, firstStep: 'main', ...extra });
const resolved = (n: number, extra: Record<string, unknown>): SessionEvent => ({
  type: 'SessionToolApprovalResolved',
  data: { eventId: 'aev_1', turnId: 'turn_1', createdAt: at, toolCallId: `tc_${n}`, toolName: 'web_get', toolConfigurationName: `pay${n}`, edited: false, approvers: n === 2 ? 'session_user' : 'agent_admins', ...extra } as never,
});

describe('tool approval decisions', () => {
  it('a paused turn leaves the session stopped with its approvals pending', () => {
    const { state } = givenEvents(sessionFold, waiting);
    if (state.status !== 'active') throw new Error('absent');
    expect(sessionStatus(state)).toBe('stopped');
    expect(state.approvals.map((a) => [a.toolCallId, a.approvers, a.decision])).toEqual([
      ['tc_1', 'agent_admins', undefined],
      ['tc_2', 'session_user', undefined],
    ]);
  });

  it('an approval by an administrator is stored; the turn waits while another call is undecided', () => {
    const { state } = givenEvents(sessionFold, waiting);
    expect(decideToolApproval(state, command({}))).toEqual({ events: [resolved(1, { decision: 'approve', decidedBy: 'user:ada' })], resume: false, step: 'review', run: [] });
  });

  it('the last decision resumes the turn, running the approved calls with the edited arguments or the model’s', () => {
    const approvedFirst = [...waiting, resolved(1, { eventId: 'aev_r1', decision: 'approve', decidedBy: 'user:ada', edited: true, arguments: { url: 'https://pay.example/edited' } })];
    const { state } = givenEvents(sessionFold, approvedFirst);
    const decided = decideToolApproval(state, command({ toolCallId: 'tc_2', decider: user }));
    expect(decided).toEqual({
      events: [resolved(2, { decision: 'approve', decidedBy: 'user:bob' })],
      resume: true,
      step: 'review',
      run: [
        { toolCallId: 'tc_1', toolConfigurationName: 'pay1', arguments: { url: 'https://pay.example/edited' } },
        { toolCallId: 'tc_2', toolConfigurationName: 'pay2', arguments: { url: 'https://pay.example/2' } },
      ],
    });
  });

  it('a denial gives the model a tool error naming the decider and the reason, and runs nothing', () => {
    const { state } = givenEvents(sessionFold, [...waiting, resolved(2, { eventId: 'aev_r2', decision: 'deny', decidedBy: 'user:bob' })]);
    const decided = decideToolApproval(state, command({ decision: 'deny', reason: 'wrong payee' }));
    expect(decided.resume).toBe(true);
    expect(decided.run).toEqual([]);
    expect(decided.events).toEqual([
      resolved(1, { decision: 'deny', decidedBy: 'user:ada', reason: 'wrong payee' }),
      { type: 'SessionToolReturned', data: { eventId: 'aev_2', turnId: 'turn_1', createdAt: at, toolCallId: 'tc_1', toolName: 'web_get', toolConfigurationName: 'pay1', toolOutput: { error: 'The call was denied by user:ada: wrong payee', decision: 'deny' }, error: true, step: 'review' } },
    ]);
  });

  it('refuses a call that does not wait for approval (400) and one already decided (409)', () => {
    givenEvents(sessionFold, waiting)
      .when((s) => decideToolApproval(s, command({ toolCallId: 'tc_9' })).events)
      .thenFails({ kind: 'invalid', code: 'session.no_pending_approval', details: { fieldErrors: { tool_call_id: 'not a tool call waiting for approval' } } });
    givenEvents(sessionFold, [...waiting, resolved(1, { eventId: 'aev_r1', decision: 'deny', decidedBy: 'user:ada' })])
      .when((s) => decideToolApproval(s, command({})).events)
      .thenFails({ kind: 'conflict', code: 'session.approval_resolved', message: 'The tool call tc_1 was already resolved (deny)' });
    // Resolved, then the turn resumed (and dropped its approvals): still a 409, not "unknown".
    const resumed: SessionEvent = { type: 'SessionTurnStarted', data: { turnId: 'turn_2', step: 'review', holder: 'h1', agentRevision: 1, createdAt: at } };
    givenEvents(sessionFold, [...waiting, resolved(1, { eventId: 'aev_r1', decision: 'expired', decidedBy: 'system:approval_timeout' }), resumed])
      .when((s) => decideToolApproval(s, command({})).events)
      .thenFails({ kind: 'conflict', code: 'session.approval_resolved', message: 'The tool call tc_1 was already resolved (expired)' });
  });

  it('refuses a decision past the approval’s expiry (409), even before its timer fired', () => {
    givenEvents(sessionFold, waiting)
      .when((s) => decideToolApproval(s, command({ now: new Date(expiresAt) })).events)
      .thenFails({ kind: 'conflict', code: 'session.approval_resolved', message: `The approval of tool call tc_1 expired at ${expiresAt}` });
  });

  it('refuses a decider the approval does not name (403): a non-administrator for agent_admins, anyone but the session user for session_user', () => {
    givenEvents(sessionFold, waiting)
      .when((s) => decideToolApproval(s, command({ decider: user })).events)
      .thenFails({ kind: 'forbidden', code: 'session.approval_forbidden', message: "Only the agent's administrators may decide on tool call tc_1" });
    givenEvents(sessionFold, waiting)
      .when((s) => decideToolApproval(s, command({ toolCallId: 'tc_2', decider: admin })).events)
      .thenFails({ kind: 'forbidden', code: 'session.approval_forbidden', message: "Only the session's own user may decide on tool call tc_2" });
  });

  it('refuses edited arguments on a denial, and edited arguments that do not fit the tool (400)', () => {
    givenEvents(sessionFold, waiting)
      .when((s) => decideToolApproval(s, command({ decision: 'deny', arguments: { url: 'x' } })).events)
      .thenFails({ kind: 'invalid', code: 'session.invalid_approval', details: { fieldErrors: { arguments: 'only with decision approve' } } });
    givenEvents(sessionFold, waiting)
      .when((s) => decideToolApproval(s, command({ arguments: { url: 3 }, argumentProblems: ['/url must be string'] })).events)
      .thenFails({ kind: 'invalid', code: 'session.invalid_tool_arguments', details: { fieldErrors: { arguments: '/url must be string' } } });
  });

  it('an approval is stored with the edited arguments', () => {
    const { state } = givenEvents(sessionFold, waiting);
    expect(decideToolApproval(state, command({ arguments: { url: 'https://pay.example/edited' }, reason: 'fixed the id' })).events).toEqual([
      resolved(1, { decision: 'approve', decidedBy: 'user:ada', edited: true, arguments: { url: 'https://pay.example/edited' }, reason: 'fixed the id' }),
    ]);
  });

  it('expiry resolves an undecided call as expired (a tool error) once due, and does nothing before, after a decision, or twice', () => {
    const expiry = (s: Parameters<typeof decideApprovalExpiry>[0], when: Date, toolCallId = 'tc_1') => decideApprovalExpiry(s, { ...ref, ...ids(), now: when, toolCallId, firstStep: 'main' });
    const { state } = givenEvents(sessionFold, waiting);
    expect(expiry(state, now).events).toEqual([]);
    const due = expiry(state, new Date(expiresAt));
    expect(due.resume).toBe(false);
    expect(due.events).toMatchObject([
      { type: 'SessionToolApprovalResolved', data: { toolCallId: 'tc_1', decision: 'expired', decidedBy: 'system:approval_timeout', edited: false } },
      { type: 'SessionToolReturned', data: { toolCallId: 'tc_1', error: true, toolOutput: { error: `Nobody approved the call before ${expiresAt}: it expired and did not run`, decision: 'expired' } } },
    ]);
    const after = givenEvents(sessionFold, [...waiting, ...due.events]).state;
    expect(expiry(after, new Date(expiresAt)).events).toEqual([]);
    // The other call expiring too: nothing is waited for, the turn resumes and runs nothing.
    expect(expiry(after, new Date(expiresAt), 'tc_2')).toMatchObject({ resume: true, run: [] });
  });

  it('client tool outputs do not resume a turn whose approvals are undecided', () => {
    const pendingClient: SessionEvent = { type: 'SessionClientToolPending', data: { eventId: 'aev_p', turnId: 'turn_1', createdAt: earlier, pendingCalls: [{ event_id: 'aev_c', tool_call_id: 'tc_c', tool_configuration_name: 'ask', tool_name: 'client', arguments: {} }] } };
    const { state } = givenEvents(sessionFold, [...waiting.slice(0, -1), pendingClient, ended]);
    const decided = decideToolOutputs(state, { ...ref, ...ids(), now, outputs: [{ type: 'success', event_id: 'aev_c', output: { ok: true } }], firstStep: 'main' });
    expect(decided.resume).toBe(false);
    expect(decided.events).toHaveLength(1);
  });

  it('a new turn drops the approvals its predecessor left (as it drops pending client calls)', () => {
    const next: SessionEvent = { type: 'SessionTurnStarted', data: { turnId: 'turn_2', step: 'review', holder: 'h1', agentRevision: 1, createdAt: at } };
    const { state } = givenEvents(sessionFold, [...waiting, next]);
    if (state.status !== 'active') throw new Error('absent');
    expect(state.approvals).toEqual([]);
  });
});
