import { conflict, DomainError, invalid } from '@lib/platform/kernel';
import type { AgentInput, ApprovalDecision, InputBehavior, PendingClientCall, SessionApiEvent, SessionEvent, ToolApproval } from './session-events';
import { ActiveSession, entryStepFor, requireSession, sessionFold, SessionState } from './session';
import { type AgentSkill, skillRefusal } from './skills';

/**
 * The inputs a session takes (`POST …/events`), decided on its folded state: a message starts a turn, steers the
 * running one or waits to follow it; an interrupt stops the running turn; client tool outputs answer the calls a
 * turn left pending; a compaction is a turn of its own. Given the state and a command, each returns the events
 * to append (and what the caller does next) or throws the DomainError the API answers with.
 */

/** Names the session in the refusals (a session deleted meanwhile is a 404). */
export interface SessionRef {
  readonly agentKey: string;
  readonly sessionKey: string;
}

/** What every decision that stores an API event needs: its id (drawn only when an event is made) and the time. */
export interface Stamp {
  readonly newEventId: () => string;
  readonly now: Date;
}

/**
 * An input message whose `external_id` the session already holds is not stored again: the caller is shown the
 * input stored under it (none when that event was deleted since). Undefined when the message is new.
 */
export function heldInput(state: SessionState, ref: SessionRef, externalId: string | undefined): { readonly held?: SessionApiEvent } | undefined {
  const s = requireSession(state, ref.agentKey, ref.sessionKey);
  if (!externalId || !s.externalIds.has(externalId)) return undefined;
  const held = s.events.find((e) => e.data.eventId === s.externalIds.get(externalId));
  return held ? { held } : {};
}

export interface InputMessageCommand extends SessionRef, Stamp {
  readonly messages: readonly AgentInput[];
  readonly behavior?: InputBehavior;
  readonly entryStep?: string;
  readonly externalId?: string;
  /** The agent's steps (for `entry_step` and `allowed_skills`) and its first step. */
  readonly steps: Readonly<Record<string, { readonly allowed_skills?: readonly string[] }>>;
  readonly firstStep: string;
  /** The agent's skills, for the input's `skill` parts. */
  readonly skills?: Readonly<Record<string, AgentSkill>>;
}

/**
 * `start`: no turn runs; the input starts one on `step`. `steer`: the input joins the running turn (stored now,
 * picked up at its next model call). `follow_up`: nothing is stored; the caller waits for the running turn and
 * decides again.
 */
export type InputMessageDecision =
  | { readonly kind: 'start'; readonly step: string; readonly events: SessionEvent[] }
  | { readonly kind: 'steer'; readonly events: SessionEvent[] }
  | { readonly kind: 'follow_up' };

export function decideInputMessage(state: SessionState, command: InputMessageCommand): InputMessageDecision {
  const s = requireSession(state, command.agentKey, command.sessionKey);
  if (s.turn) {
    if (!command.behavior) throw conflict('session.turn_running', 'A turn is already running in this session: send the input with behavior "steer" (joins the running turn) or "follow_up" (runs after it)');
    if (command.behavior === 'steer') return { kind: 'steer', events: inputEvents(command, s.turn.step) };
    return { kind: 'follow_up' };
  }
  const step = entryStepFor(s, command.steps, command.firstStep, command.entryStep);
  return { kind: 'start', step, events: inputEvents(command, step) };
}

/**
 * The input, then one `skill_load` per `skill` part (its content as the agent holds it now). A skill the agent
 * does not have, or that the step the input enters does not allow, refuses the whole input (400, nothing stored).
 */
function inputEvents(command: InputMessageCommand, step: string): SessionEvent[] {
  const allowed = command.steps[step]?.allowed_skills;
  command.messages.forEach((m, i) => {
    if (m.type !== 'skill') return;
    const refusal = skillRefusal(command.skills, allowed, step, m.skill_name);
    if (refusal) throw invalid('session.unknown_skill', `messages[${i}].skill_name: ${refusal}`, { [`messages[${i}].skill_name`]: refusal });
  });
  const at = command.now.toISOString();
  const input: SessionEvent = {
    type: 'SessionInputReceived',
    data: { eventId: command.newEventId(), createdAt: at, messages: [...command.messages], ...(command.externalId ? { externalId: command.externalId } : {}), ...(command.behavior ? { behavior: command.behavior } : {}), step },
  };
  const loads = command.messages.flatMap((m): SessionEvent[] => (m.type === 'skill' ? [{ type: 'SessionSkillLoaded', data: { eventId: command.newEventId(), createdAt: at, skillName: m.skill_name, content: command.skills![m.skill_name].content, step } }] : []));
  return [input, ...loads];
}

/** An interrupt asked for by a request: only a running turn can be interrupted. */
export function decideInterrupt(state: SessionState, command: SessionRef & Stamp): SessionEvent[] {
  const s = requireSession(state, command.agentKey, command.sessionKey);
  if (!s.turn) throw conflict('session.not_running', 'No turn is running in this session: there is nothing to interrupt');
  return [{ type: 'SessionInterrupted', data: { eventId: command.newEventId(), turnId: s.turn.turnId, reason: 'request', createdAt: command.now.toISOString() } }];
}

/** A compaction asked for by an input runs as a turn of its own, on the step the session stands on. */
export function decideCompactionRequest(state: SessionState, command: SessionRef & { readonly firstStep: string }): { readonly step: string } {
  const s = requireSession(state, command.agentKey, command.sessionKey);
  if (s.turn) throw conflict('session.turn_running', 'A turn is running in this session; ask for the compaction when it has ended');
  return { step: s.currentStep ?? command.firstStep };
}

export type ClientToolOutput =
  | { readonly type: 'success'; readonly event_id: string; readonly output: Record<string, unknown> }
  | { readonly type: 'error'; readonly event_id: string; readonly error: unknown };

export interface ToolOutputsCommand extends SessionRef, Stamp {
  readonly outputs: readonly ClientToolOutput[];
  readonly firstStep: string;
  /**
   * Where an output does not match the `output_schema` of the client tool registered for its call, by the
   * output's index: the registered tool's id and the problems (the caller reads the registrations).
   */
  readonly schemaProblems?: ReadonlyMap<number, { readonly toolId: string; readonly problems: readonly string[] }>;
}

/**
 * What resumes a paused turn: `resume` when nothing is waited for any more (no client call, no undecided
 * approval); the turn then continues on `step`, first running `run` (the approved calls).
 */
export interface ResumeDecision {
  readonly events: SessionEvent[];
  readonly resume: boolean;
  readonly step: string;
  readonly run: readonly ApprovedCall[];
}

/** A call a person approved, as the resumed turn runs it: the approver's arguments, or the model's. */
export interface ApprovedCall {
  readonly toolCallId: string;
  readonly toolConfigurationName: string;
  readonly arguments: Record<string, unknown>;
}

/**
 * Client tool outputs, each answering a call the session waits for. `resume`: none is pending any more (and no
 * approval is), so the turn continues on `step` with the outputs as its first events; else they are only stored.
 */
export function decideToolOutputs(state: SessionState, command: ToolOutputsCommand): ResumeDecision {
  const s = requireSession(state, command.agentKey, command.sessionKey);
  if (s.turn) throw conflict('session.turn_running', 'A turn is running in this session; send tool outputs when it waits for them');
  const step = s.currentStep ?? command.firstStep;
  const events: SessionEvent[] = [];
  for (const [i, o] of command.outputs.entries()) {
    const call = pendingCall(s, o.event_id);
    if (!call) throw invalid('session.no_pending_call', `tool_outputs[${i}].event_id "${o.event_id}" is not a client tool call this session waits for`, { [`tool_outputs[${i}].event_id`]: 'not an outstanding client tool call' });
    const bad = o.type === 'success' ? command.schemaProblems?.get(i) : undefined;
    if (bad?.problems.length) throw invalid('session.invalid_tool_output', `tool_outputs[${i}].output does not match the output_schema of ${bad.toolId}: ${bad.problems.join('; ')}`, { [`tool_outputs[${i}].output`]: bad.problems.join('; ') });
    const output = o.type === 'success' ? o.output : { error: o.error };
    events.push({ type: 'SessionToolReturned', data: { eventId: command.newEventId(), createdAt: command.now.toISOString(), toolCallId: call.tool_call_id, toolConfigurationName: call.tool_configuration_name, toolName: 'client', toolOutput: output, error: o.type === 'error', step } });
  }
  const left = s.pending.filter((p) => !command.outputs.some((o) => o.event_id === p.event_id));
  return resumption(s, events, left.length, step);
}

/** The client tool call the session waits for under an API event id. */
export const pendingCall = (s: ActiveSession, eventId: string): PendingClientCall | undefined => s.pending.find((p) => p.event_id === eventId);

/** Who decides: the principal's id (as `decided_by` shows it) and whether it administers the agent. */
export interface Decider {
  readonly principal: string;
  readonly agentAdmin: boolean;
}

export interface ToolApprovalCommand extends SessionRef, Stamp {
  readonly toolCallId: string;
  readonly decision: 'approve' | 'deny';
  /** Edited arguments (an approval only), already checked against the tool's parameters: `argumentProblems`. */
  readonly arguments?: Record<string, unknown>;
  readonly argumentProblems?: readonly string[];
  readonly reason?: string;
  readonly decider: Decider;
  readonly firstStep: string;
}

/**
 * A person's decision on a tool call waiting for approval. Approve: the call runs, with the edited arguments if
 * given, when the turn resumes. Deny: the model gets a tool error naming the reason. Refused: a call not waiting
 * (400), one already decided or past its time (409), a decider the approval's `approvers` do not name (403),
 * edited arguments on a denial or that do not fit the tool's parameters (400).
 */
export function decideToolApproval(state: SessionState, command: ToolApprovalCommand): ResumeDecision {
  const s = requireSession(state, command.agentKey, command.sessionKey);
  const approval = s.approvals.find((a) => a.toolCallId === command.toolCallId);
  const earlier = approval ? undefined : s.events.findLast((e) => e.type === 'SessionToolApprovalResolved' && e.data.toolCallId === command.toolCallId);
  if (earlier?.type === 'SessionToolApprovalResolved') throw conflict('session.approval_resolved', `The tool call ${command.toolCallId} was already resolved (${earlier.data.decision})`);
  if (!approval) throw invalid('session.no_pending_approval', `tool_call_id "${command.toolCallId}" is not a tool call this session waits to have approved`, { tool_call_id: 'not a tool call waiting for approval' });
  if (approval.decision) throw conflict('session.approval_resolved', `The tool call ${command.toolCallId} was already resolved (${approval.decision})`);
  if (command.now.getTime() >= Date.parse(approval.expiresAt)) throw conflict('session.approval_resolved', `The approval of tool call ${command.toolCallId} expired at ${approval.expiresAt}`);
  if (!mayDecide(approval, command.decider)) {
    const who = approval.approvers === 'session_user' ? "the session's own user" : "the agent's administrators";
    throw new DomainError('forbidden', 'session.approval_forbidden', `Only ${who} may decide on tool call ${command.toolCallId}`);
  }
  if (command.arguments !== undefined && command.decision === 'deny') throw invalid('session.invalid_approval', 'Edited arguments go with an approval, not a denial', { arguments: 'only with decision approve' });
  if (command.argumentProblems?.length) throw invalid('session.invalid_tool_arguments', `arguments do not fit the parameters of ${approval.toolConfigurationName}: ${command.argumentProblems.join('; ')}`, { arguments: command.argumentProblems.join('; ') });
  const step = s.currentStep ?? command.firstStep;
  const events = resolution(approval, step, command, { decision: command.decision, decidedBy: command.decider.principal });
  return resumption(fold(s, events), events, s.pending.length, step);
}

/**
 * The approval's timer fired: a call still undecided at its `expiresAt` is resolved as expired (the model gets a
 * tool error saying so) and, when nothing else is waited for, the turn resumes. Nothing when it was decided.
 */
export function decideApprovalExpiry(state: SessionState, command: SessionRef & Stamp & { readonly toolCallId: string; readonly firstStep: string }): ResumeDecision {
  const s = requireSession(state, command.agentKey, command.sessionKey);
  const step = s.currentStep ?? command.firstStep;
  const approval = s.approvals.find((a) => a.toolCallId === command.toolCallId);
  if (!approval || approval.decision || s.turn || command.now.getTime() < Date.parse(approval.expiresAt)) return { events: [], resume: false, step, run: [] };
  const events = resolution(approval, step, command, { decision: 'expired', decidedBy: 'system:approval_timeout' });
  return resumption(fold(s, events), events, s.pending.length, step);
}

/** Whether the decider is one of the approval's approvers. */
export const mayDecide = (approval: ToolApproval, decider: Decider): boolean => (approval.approvers === 'session_user' ? decider.principal === approval.sessionUser : decider.agentAdmin);

function resolution(approval: ToolApproval, step: string, stamp: Stamp & { readonly arguments?: Record<string, unknown>; readonly reason?: string }, how: { decision: ApprovalDecision; decidedBy: string }): SessionEvent[] {
  const at = stamp.now.toISOString();
  const names = { toolCallId: approval.toolCallId, toolName: approval.toolName, toolConfigurationName: approval.toolConfigurationName };
  const resolved: SessionEvent = {
    type: 'SessionToolApprovalResolved',
    data: { eventId: stamp.newEventId(), turnId: approval.turnId, createdAt: at, ...names, decision: how.decision, decidedBy: how.decidedBy, edited: stamp.arguments !== undefined, ...(stamp.arguments !== undefined ? { arguments: stamp.arguments } : {}), ...(stamp.reason ? { reason: stamp.reason } : {}), approvers: approval.approvers },
  };
  if (how.decision === 'approve') return [resolved];
  const error = how.decision === 'deny' ? `The call was denied by ${how.decidedBy}${stamp.reason ? `: ${stamp.reason}` : ' (no reason given)'}` : `Nobody approved the call before ${approval.expiresAt}: it expired and did not run`;
  return [resolved, { type: 'SessionToolReturned', data: { eventId: stamp.newEventId(), turnId: approval.turnId, createdAt: at, ...names, toolOutput: { error, decision: how.decision }, error: true, step } }];
}

function resumption(s: ActiveSession, events: SessionEvent[], clientCallsLeft: number, step: string): ResumeDecision {
  const waiting = clientCallsLeft > 0 || s.approvals.some((a) => !a.decision);
  if (waiting) return { events, resume: false, step, run: [] };
  const run = s.approvals.filter((a) => a.decision === 'approve').map((a) => ({ toolCallId: a.toolCallId, toolConfigurationName: a.toolConfigurationName, arguments: a.editedArguments ?? modelArguments(s, a.toolCallId) }));
  return { events, resume: true, step, run };
}

/** The arguments the model gave a call, as it gave them (its `$ref` overrides are applied when it runs). */
function modelArguments(s: ActiveSession, toolCallId: string): Record<string, unknown> {
  const called = s.events.find((e) => e.type === 'SessionToolCalled' && e.data.toolCallId === toolCallId);
  if (called?.type !== 'SessionToolCalled') return {};
  try {
    const parsed: unknown = JSON.parse(called.data.arguments);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function fold(s: ActiveSession, events: SessionEvent[]): ActiveSession {
  return events.reduce<ActiveSession>((acc, e) => {
    const next = sessionFold.evolve(acc, e);
    return next.status === 'active' ? next : acc;
  }, s);
}
