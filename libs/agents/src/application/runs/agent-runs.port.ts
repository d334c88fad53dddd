import type { CommandContext, DomainError } from '@lib/platform';
import type { ActiveSession } from '../../domain/session';
import type { AgentInput, InputBehavior, SessionCreator, SessionEvent } from '../../domain/session-events';
import type { TurnOutcome } from '../../domain/session-turn';
import type { TurnSink } from '../turn/turn-sink';

/**
 * The run-an-agent port (docs/agent-rooms.md, step 1): what schedules, pipelines, connectors, A2A, wake-ups and
 * sub-agents do with an agent's sessions — start one, send it an input and get the turn's outcome, read what a
 * session holds. Implemented over `Sessions` and `SessionInputs` (`SessionAgentRuns`); a tool on the turn's own
 * path gets it through its `ToolContext`, everything else by injection (`AGENT_RUNS`).
 *
 * The request and result shapes below are the ones `Sessions` and `SessionInputs` take and give (defined here so
 * that this port imports no use case; their old homes re-export them).
 */
export interface AgentRuns {
  /** Creates a session (a DomainError `session.key_taken` when its key is in use). */
  create(agentKey: string, req: SessionRequest, ctx: CommandContext): Promise<Record<string, unknown>>;
  /** Who created a session, when it exists (`{}` for a session no sub_agent tool made); undefined when it does not. */
  exists(agentKey: string, sessionKey: string): Promise<Partial<SessionCreator> | undefined>;
  /** Sends an input to a session: a message runs a turn, whose events and outcome come back once it ends. */
  input(agentKey: string, sessionKey: string, req: InputRequest, ctx: CommandContext, sink?: TurnSink, streaming?: boolean, signal?: AbortSignal): Promise<InputResult>;
  /** The client tool calls a session waits for. */
  outstanding(agentKey: string, sessionKey: string): Promise<Record<string, unknown>[]>;
  /** The session as it is now, and its stream (an earlier answer is read from its events, by `external_id`). */
  active(agentKey: string, sessionKey: string): Promise<{ readonly session: ActiveSession; readonly streamId: string }>;
  /** A page of the session's stored events in order, hidden ones only with `includeHidden`. */
  events(agentKey: string, sessionKey: string, opts: { limit: number; offset: number; includeHidden: boolean }): Promise<{ readonly page: readonly SessionEvent[] }>;
}

export const AGENT_RUNS = Symbol('AgentRuns');

export interface SessionRequest {
  readonly key?: string;
  readonly name?: string;
  readonly description?: string;
  readonly metadata?: Record<string, unknown>;
  readonly enabled?: boolean;
  readonly tti_minutes?: number;
  readonly secrets?: Record<string, string>;
  readonly from_session?: { readonly agent_key?: string; readonly session_key: string; readonly include_up_to_event_id?: string | null };
  /** Pins the session to this revision of the agent: every turn runs its configuration (absent: the current one). */
  readonly agent_revision?: number;
  /** Set by the sub_agent tool, never from a request body. */
  readonly created_by?: SessionCreator;
  /** Set when the session is created through an alias, never from a request body. */
  readonly alias_key?: string;
  /** Set for end-user sessions, never from a request body. */
  readonly end_user?: string;
}

export type InputRequest =
  | { readonly type: 'input_message'; readonly messages: readonly AgentInput[]; readonly behavior?: InputBehavior; readonly entry_step?: string; readonly external_id?: string; readonly since?: string }
  | { readonly type: 'interrupt' }
  | { readonly type: 'compact'; readonly compact_up_to_event_id?: string; readonly compaction_message?: string }
  /** `decider` is set by the route from the caller's credential, never from a request body. */
  | { readonly type: 'tool_approval'; readonly tool_call_id: string; readonly decision: 'approve' | 'deny'; readonly arguments?: Record<string, unknown>; readonly reason?: string; readonly decider?: { readonly principal: string; readonly agentAdmin: boolean } }
  | { readonly type: 'tool_output'; readonly tool_outputs: readonly ({ readonly type: 'success'; readonly event_id: string; readonly output: Record<string, unknown> } | { readonly type: 'error'; readonly event_id: string; readonly error: unknown })[] };

export interface InputResult {
  readonly events: Record<string, unknown>[];
  /** The turn's failure, after its events were stored (a model that failed, a structured answer that never fit). */
  readonly error?: DomainError;
  readonly outcome?: TurnOutcome;
}

export type { TurnOutcome };
