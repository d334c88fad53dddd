import type { CommandContext } from '@lib/platform';
import type { RefSources, ToolConfig, ToolDefinition, ToolResult } from '@lib/tools';
import type { PromptMessage } from '../../domain/history';
import type { ModelAnswer } from './model-call';
import type { ActiveSession } from '../../domain/session';
import type { ApprovedCall } from '../../domain/session-input';
import type { ActiveAgent } from '../sessions/sessions';
import type { AgentRuns } from '../runs/agent-runs.port';
import type { TurnSink } from './turn-sink';

export type { TurnOutcome } from '../../domain/session-turn';

/**
 * Answers a replay's turn from the record of the original (docs/replay.md), consulted before each model call and
 * each tool call: a value replaces the call, undefined lets it run. It throws a `ReplayDiverged` where the
 * configuration the replay runs cannot follow the record (the turn then fails there, before any call is paid for).
 */
export interface ReplaySource {
  /** A recorded answer (no model call, no usage record), or undefined to call the model. */
  answer(call: { readonly step: string; readonly messages: readonly PromptMessage[]; readonly tools: readonly ToolDefinition[]; readonly state: ActiveSession }): Promise<ModelAnswer | undefined>;
  /** A recorded (or refused) output for a call, or undefined to run the tool. */
  toolOutput(call: { readonly id: string; readonly name: string; readonly arguments: string; readonly tool: ToolConfig }): ToolResult | undefined;
}

/** What a turn needs that is not in the session's stream. */
export interface TurnSetup {
  readonly agent: ActiveAgent;
  readonly streamId: string;
  readonly state: ActiveSession;
  /** The session's revision once the turn's start is stored. */
  readonly revision: number;
  /**
   * Stores the turn's start (once, whoever calls first); resolves once it is durable, rejects when it was refused (the
   * session moved: the turn is then aborted and its caller gets the refusal). Given when the start is stored while the
   * turn's first model call is on its way (a turn not streamed: its caller sees nothing before the end); absent when
   * the start was stored before the turn began. Nothing the turn does that anyone sees (an append, a tool call, an
   * event out) comes before it is durable (TurnState).
   */
  readonly storeStart?: () => Promise<void>;
  readonly step: string;
  readonly refs: RefSources;
  readonly contextWindow?: number;
  readonly canReadCorpus: (corpusKey: string) => Promise<boolean>;
  readonly canUseAgent?: (agentKey: string) => Promise<boolean>;
  readonly canWriteCorpus?: (corpusKey: string) => Promise<boolean>;
  /** Runs other agents, for the turn's tools (sub_agent). */
  readonly runs?: AgentRuns;
  /** Whether the agent's model takes images (its registration's `capabilities.image_support`). */
  readonly imageSupport?: boolean;
  readonly ctx: CommandContext;
  readonly sink: TurnSink;
  /** Whether the caller reads the answer as it streams. */
  readonly streaming: boolean;
  /** Whether the turn was stopped by its in-process caller's signal (not by an interrupt input). */
  readonly cancelled?: () => boolean;
  readonly signal: AbortSignal;
  /** Who may decide the turn's approvals that name `session_user` (the caller the turn answers, or its end user). */
  readonly sessionUser?: string;
  /** Calls a person approved, which the resumed turn runs first. */
  readonly approved?: readonly ApprovedCall[];
  /** Set on a replay's turn: where model answers and tool outputs come from (no person is asked to approve). */
  readonly replay?: ReplaySource;
}
