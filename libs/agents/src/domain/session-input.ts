import { conflict, invalid } from '@lib/platform/kernel';
import type { AgentInput, InputBehavior, PendingClientCall, SessionApiEvent, SessionEvent } from './session-events';
import { ActiveSession, entryStepFor, requireSession, SessionState } from './session';

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
  /** The agent's steps (for `entry_step`) and its first step. */
  readonly steps: Readonly<Record<string, unknown>>;
  readonly firstStep: string;
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
    if (command.behavior === 'steer') return { kind: 'steer', events: [inputEvent(command, s.turn.step)] };
    return { kind: 'follow_up' };
  }
  const step = entryStepFor(s, command.steps, command.firstStep, command.entryStep);
  return { kind: 'start', step, events: [inputEvent(command, step)] };
}

function inputEvent(command: InputMessageCommand, step: string): SessionEvent {
  return {
    type: 'SessionInputReceived',
    data: { eventId: command.newEventId(), createdAt: command.now.toISOString(), messages: [...command.messages], ...(command.externalId ? { externalId: command.externalId } : {}), ...(command.behavior ? { behavior: command.behavior } : {}), step },
  };
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
 * Client tool outputs, each answering a call the session waits for. `resume`: none is pending any more, so the
 * turn continues on `step` with the outputs as its first events; else they are only stored.
 */
export function decideToolOutputs(state: SessionState, command: ToolOutputsCommand): { readonly events: SessionEvent[]; readonly resume: boolean; readonly step: string } {
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
  return { events, resume: left.length === 0, step };
}

/** The client tool call the session waits for under an API event id. */
export const pendingCall = (s: ActiveSession, eventId: string): PendingClientCall | undefined => s.pending.find((p) => p.event_id === eventId);
