import type { CompactionConfig } from './agent-config';
import type { MemoryChange } from './memory';

/** One summarising call of a compaction (issue 46): a piece of history, a summary condensed, or one cut (no call). */
export interface CompactionCall {
  readonly kind: 'piece' | 'condense' | 'cut';
  /** Events the piece summarised (0 for `condense` and `cut`). */
  readonly events: number;
  readonly firstEventId?: string;
  readonly lastEventId?: string;
  /** Characters left out: of events larger than a piece, or of a summary too long to condense or to keep. */
  readonly cutChars: number;
  /** The prompt's size as estimated before the call (4 characters per token). */
  readonly promptTokens: number;
  readonly usage: { readonly input_tokens: number; readonly output_tokens: number };
}

/**
 * The events of one session's stream (`session-<agentId>.<sessionKey>`): the session's state and its API
 * events are folds of it. One stored event per API event (`eventId` is the API's `aev_…` id); turn bookkeeping
 * (`SessionTurnStarted`, `SessionTurnEnded`) and changes to the session itself are not API events.
 */
/** A part of an input message: text, or a skill the user loads by name (the reference's AgentInput). */
export type AgentInput = { readonly type: 'text'; readonly content: string } | { readonly type: 'skill'; readonly skill_name: string };

/** The text of an input's parts (its skill parts are loaded by their own `skill_load` events). */
export const inputText = (messages: readonly AgentInput[]): string =>
  messages
    .filter((m): m is Extract<AgentInput, { type: 'text' }> => m.type === 'text')
    .map((m) => m.content)
    .join('\n');

export interface PendingClientCall {
  readonly event_id: string;
  readonly tool_call_id: string;
  readonly tool_configuration_name: string;
  readonly tool_name: string;
  readonly arguments: Record<string, unknown>;
}

/** Who may decide on a tool call waiting for approval (a tool configuration's `requires_approval.approvers`). */
export type ApprovalApprovers = 'agent_admins' | 'session_user';
export type ApprovalDecision = 'approve' | 'deny' | 'expired';

/** A tool call of the paused turn that waits, or waited, for a person's decision (the session's fold). */
export interface ToolApproval {
  readonly eventId: string;
  readonly turnId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly toolConfigurationName: string;
  /** As shown: secrets masked. */
  readonly arguments: Record<string, unknown>;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly approvers: ApprovalApprovers;
  readonly sessionUser: string;
  readonly decision?: ApprovalDecision;
  /** The approver's arguments, when they edited the call's. */
  readonly editedArguments?: Record<string, unknown>;
}

export interface TurnUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

/** The agent session whose `sub_agent` tool created a session (the reference's created_by_agent_key / _session_key). */
export interface SessionCreator {
  readonly agentKey: string;
  readonly sessionKey: string;
  /** The tool configuration that made it (persistent sessions are one per parent session and configuration). */
  readonly toolConfigurationName: string;
}

/** Ciphertext of secrets (the service's SecretBox), never a value in clear. */
export type Sealed = Readonly<Record<string, string>>;

export type InputBehavior = 'steer' | 'follow_up';

/** Where a forked session's history comes from: the parent's stream up to a global log position (inclusive). */
export interface ForkOrigin {
  readonly streamId: string;
  readonly agentKey: string;
  readonly sessionKey: string;
  readonly upToPosition: number;
}

/**
 * What a replay session re-runs (docs/replay.md): the original session, how (`recorded`: the record answers;
 * `live_model`: the model runs again; `live`: everything runs again), which revision, and the range of inputs.
 */
export interface ReplayOrigin {
  readonly sessionKey: string;
  readonly mode: 'recorded' | 'live_model' | 'live';
  readonly agentRevision: number;
  readonly fromEventId?: string;
  readonly untilEventId?: string;
  readonly allowSideEffects: boolean;
}

/** Where a recorded replay met a configuration that does not answer as the record did. */
export type ReplayDivergenceKind = 'tool_not_offered' | 'step' | 'prompt' | 'tools_offered' | 'more_model_calls' | 'fewer_model_calls' | 'no_recorded_output' | 'not_replayable';

export interface SessionFields {
  readonly name: string;
  readonly description?: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly enabled: boolean;
  readonly ttiMinutes: number;
}

type At = { readonly createdAt: string };
type ApiEvent = { readonly eventId: string; readonly turnId?: string } & At;
// `inputsSeen` on a model's answer: how many inputs the session held when the model was called. An input that
// arrived while the model answered (a steer) is stored before the answer but was not seen by it.

/** An uploaded file as a session holds it; the bytes are in the artifact store under `sha256`. */
export interface SessionArtifactRecord {
  readonly artifactId: string;
  readonly filename: string;
  readonly mimeType: string;
  readonly sizeBytes: number;
  readonly sha256: string;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export type SessionEvent =
  | {
      type: 'SessionCreated';
      /** `compaction`: the agent's compaction settings with defaults, snapshotted at creation (the reference's `effective_compaction`). */
      data: SessionFields & At & { agentId: string; agentKey: string; sessionKey: string; secrets?: { names: string[]; sealed: Sealed }; forkedFrom?: ForkOrigin; compaction?: CompactionConfig; createdBy?: SessionCreator; aliasKey?: string; endUser?: string; agentRevision?: number; replayOf?: ReplayOrigin };
    }
  | { type: 'SessionUpdated'; data: { changes: Partial<SessionFields>; secrets?: { names: string[]; sealed: Sealed }; updatedAt: string } }
  | { type: 'SessionDeleted'; data: { deletedAt: string } }
  | { type: 'SessionInputReceived'; data: ApiEvent & { messages: AgentInput[]; externalId?: string; behavior?: InputBehavior; step: string } }
  | { type: 'SessionTurnStarted'; data: At & { turnId: string; step: string; holder: string; agentRevision: number } }
  /** `usage`: the tokens of the model call(s) that made it (absent on events stored before it was recorded). */
  | { type: 'SessionAgentOutput'; data: ApiEvent & { content: string; step: string; inputsSeen?: number; usage?: TurnUsage } }
  | { type: 'SessionThinking'; data: ApiEvent & { content: string } }
  | {
      type: 'SessionToolCalled';
      /**
       * `modelCallId`: the calls one model answer made share it (they are one assistant message in the history), and
       * `usage`, that answer's tokens (the same on each of its calls; absent on events stored before it was recorded).
       */
      data: ApiEvent & { toolCallId: string; modelCallId: string; toolConfigurationName: string; toolName: string; toolInput: Record<string, unknown>; arguments: string; step: string; inputsSeen?: number; usage?: TurnUsage };
    }
  | { type: 'SessionToolReturned'; data: ApiEvent & { toolCallId: string; toolConfigurationName: string; toolName: string; toolOutput: Record<string, unknown>; error: boolean; step: string } }
  | { type: 'SessionStepTransitioned'; data: ApiEvent & { fromStep: string; toStep: string; content: string } }
  | { type: 'SessionStructuredOutput'; data: ApiEvent & { schemaName: string; content: unknown; step: string; inputsSeen?: number; usage?: TurnUsage } }
  | { type: 'SessionLimitExceeded'; data: ApiEvent & { limit: 'step_transition' | 'context'; message: string; value?: number; actual?: number } }
  | { type: 'SessionClientToolPending'; data: ApiEvent & { pendingCalls: PendingClientCall[] } }
  /**
   * A call of a tool that `requires_approval` waits for a person's decision (nothing ran). `sessionUser`: who may
   * decide when `approvers` is `session_user` (the end user of an end-user session, else the caller of the turn);
   * `timerId`: the durable timer that resolves it as expired at `expiresAt`.
   */
  | { type: 'SessionToolApprovalRequested'; data: ApiEvent & { turnId: string; toolCallId: string; toolName: string; toolConfigurationName: string; arguments: Record<string, unknown>; expiresAt: string; approvers: ApprovalApprovers; sessionUser: string; timerId: string } }
  /** The decision on it: `decidedBy` is the principal (`user:<name>`, `api_key:<id>`, an end user), or `system:approval_timeout`. */
  | { type: 'SessionToolApprovalResolved'; data: ApiEvent & { toolCallId: string; toolName: string; toolConfigurationName: string; decision: ApprovalDecision; decidedBy: string; edited: boolean; arguments?: Record<string, unknown>; reason?: string; approvers: ApprovalApprovers } }
  // `disconnect` (a streaming caller went away) is written no more since issue 43; older logs hold it.
  | { type: 'SessionInterrupted'; data: ApiEvent & { reason: 'request' | 'crash' | 'cancelled' | 'disconnect' } }
  | { type: 'SessionCompactionStarted'; data: ApiEvent }
  | {
      type: 'SessionCompacted';
      /** `pieces`, `usage`, `pinnedEventIds`: since issue 46 (absent before: one call over everything). */
      data: ApiEvent & { turnsCompacted: number; eventsCompacted: number; summaryText: string; summaryKey: string; compactedEventIds: string[]; pieces?: CompactionCall[]; usage?: { input_tokens: number; output_tokens: number }; pinnedEventIds?: string[] };
    }
  | { type: 'SessionArtifactUploaded'; data: ApiEvent & { artifacts: SessionArtifactRecord[]; message?: string } }
  /**
   * A skill's content loaded into the conversation (`skill_load`): by the model's `invoke_skill` call
   * (`toolCallId`) or by a `skill` part of an input. `content` is the skill as it was then.
   */
  | { type: 'SessionSkillLoaded'; data: ApiEvent & { skillName: string; content: string; step: string; toolCallId?: string } }
  /** An image artifact loaded into the model's view by `image_read`. */
  | { type: 'SessionImageRead'; data: ApiEvent & { artifactId: string; detail: 'auto' | 'low' | 'high' } }
  /** A guardrail fired (issue 46, ours: `guardrail_triggered`; docs/events.md has its fields). */
  | { type: 'SessionGuardrailTriggered'; data: ApiEvent & { guardrail: string; guardrailType: 'grounding' | 'judge' | 'pattern'; on: 'input' | 'output' | 'tool_call'; action: 'flag' | 'block' | 'redact' | 'regenerate'; score?: number; reason: string; subjectEventId?: string; toolCallId?: string; check?: 'answer' | 'sentence' } }
  /**
   * A replay's turn stopped where its revision diverged from the record (docs/replay.md): `inputEventId` is the
   * original's input, `kind` what diverged, `modelCall` the turn's model call (0-based) where it did. Not an API event.
   */
  | { type: 'SessionReplayDiverged'; data: At & { inputEventId: string; kind: ReplayDivergenceKind; detail: string; modelCall: number } }
  /**
   * A change of one of the session's own memory blocks (scope `session`, docs/agents.md "Memory"): in the session's
   * stream, so forks and replays carry it. Not an API event (the tool call's input and output are).
   */
  | { type: 'SessionMemoryChanged'; data: MemoryChange }
  | { type: 'SessionTurnEnded'; data: At & { turnId: string; outcome: 'answered' | 'interrupted' | 'client_tool' | 'approval' | 'failed' | 'limit'; usage: TurnUsage; error?: string; nextStep?: string } }
  | { type: 'SessionEventHidden'; data: At & { eventId: string } }
  | { type: 'SessionEventUnhidden'; data: At & { eventId: string } }
  | { type: 'SessionEventDeleted'; data: At & { eventId: string } };

export type SessionEventType = SessionEvent['type'];

export const SESSION_EVENT_TYPES: readonly SessionEventType[] = [
  'SessionCreated',
  'SessionUpdated',
  'SessionDeleted',
  'SessionInputReceived',
  'SessionTurnStarted',
  'SessionAgentOutput',
  'SessionThinking',
  'SessionToolCalled',
  'SessionToolReturned',
  'SessionStepTransitioned',
  'SessionStructuredOutput',
  'SessionLimitExceeded',
  'SessionClientToolPending',
  'SessionToolApprovalRequested',
  'SessionToolApprovalResolved',
  'SessionInterrupted',
  'SessionCompactionStarted',
  'SessionCompacted',
  'SessionArtifactUploaded',
  'SessionImageRead',
  'SessionSkillLoaded',
  'SessionGuardrailTriggered',
  'SessionReplayDiverged',
  'SessionMemoryChanged',
  'SessionTurnEnded',
  'SessionEventHidden',
  'SessionEventUnhidden',
  'SessionEventDeleted',
];

/** The stored events that are API events (they carry an `eventId`). */
export type SessionApiEvent = Extract<SessionEvent, { data: { eventId: string; createdAt: string } }> & { type: Exclude<SessionEventType, 'SessionEventHidden' | 'SessionEventUnhidden' | 'SessionEventDeleted'> };

const API_TYPES = new Set<string>([
  'SessionInputReceived',
  'SessionAgentOutput',
  'SessionThinking',
  'SessionToolCalled',
  'SessionToolReturned',
  'SessionStepTransitioned',
  'SessionStructuredOutput',
  'SessionLimitExceeded',
  'SessionClientToolPending',
  'SessionToolApprovalRequested',
  'SessionToolApprovalResolved',
  'SessionInterrupted',
  'SessionCompacted',
  'SessionArtifactUploaded',
  'SessionImageRead',
  'SessionSkillLoaded',
  'SessionGuardrailTriggered',
]);

export const isApiEvent = (e: SessionEvent): e is SessionApiEvent => API_TYPES.has(e.type);

/**
 * An API event as the reference's AgentEvent shows it, with `agent_revision` (ours, issue 45) on an event that belongs
 * to a turn: the agent revision that turn ran (`agentRevisionOf` in session-revisions.ts). Secrets in tool inputs were masked
 * before they were stored.
 */
export function apiEventView(e: SessionApiEvent, sessionKey: string, agentRevision?: number): Record<string, unknown> {
  const view = referenceEventView(e, sessionKey);
  return agentRevision === undefined ? view : { ...view, agent_revision: agentRevision };
}

function referenceEventView(e: SessionApiEvent, sessionKey: string): Record<string, unknown> {
  const base = { id: e.data.eventId, session_key: sessionKey, created_at: e.data.createdAt };
  switch (e.type) {
    case 'SessionInputReceived':
      return { ...base, type: 'input_message', messages: e.data.messages, ...(e.data.externalId ? { external_id: e.data.externalId } : {}), ...(e.data.behavior ? { behavior: e.data.behavior } : {}) };
    case 'SessionAgentOutput':
      return { ...base, type: 'agent_output', content: e.data.content };
    case 'SessionThinking':
      return { ...base, type: 'thinking', content: e.data.content };
    case 'SessionToolCalled':
      return { ...base, type: 'tool_input', tool_call_id: e.data.toolCallId, tool_configuration_name: e.data.toolConfigurationName, tool_name: e.data.toolName, tool_input: e.data.toolInput };
    case 'SessionToolReturned':
      return { ...base, type: 'tool_output', tool_call_id: e.data.toolCallId, tool_configuration_name: e.data.toolConfigurationName, tool_name: e.data.toolName, tool_output: e.data.toolOutput, error: e.data.error };
    case 'SessionStepTransitioned':
      return { ...base, type: 'step_transition', from_step: e.data.fromStep, to_step: e.data.toStep, content: e.data.content };
    case 'SessionStructuredOutput':
      return { ...base, type: 'structured_output', schema_name: e.data.schemaName, content: e.data.content };
    case 'SessionLimitExceeded':
      return e.data.limit === 'step_transition'
        ? { ...base, type: 'step_transition_limit_exceeded', transition_limit: e.data.value, message: e.data.message }
        : { ...base, type: 'context_limit_exceeded', context_limit: e.data.value, actual_tokens: e.data.actual, message: e.data.message };
    case 'SessionClientToolPending':
      return { ...base, type: 'client_tool_pending', pending_calls: e.data.pendingCalls.map(({ tool_call_id: _t, ...c }) => c) };
    case 'SessionToolApprovalRequested':
      return { ...base, type: 'tool_approval_requested', tool_call_id: e.data.toolCallId, tool_name: e.data.toolName, tool_configuration_name: e.data.toolConfigurationName, arguments: e.data.arguments, approvers: e.data.approvers, expires_at: e.data.expiresAt };
    case 'SessionToolApprovalResolved':
      return {
        ...base,
        type: 'tool_approval_resolved',
        tool_call_id: e.data.toolCallId,
        tool_name: e.data.toolName,
        tool_configuration_name: e.data.toolConfigurationName,
        decision: e.data.decision,
        decided_by: e.data.decidedBy,
        edited: e.data.edited,
        ...(e.data.arguments ? { arguments: e.data.arguments } : {}),
        ...(e.data.reason ? { reason: e.data.reason } : {}),
        approvers: e.data.approvers,
      };
    case 'SessionInterrupted':
      return { ...base, type: 'session_interrupted', reason: e.data.reason };
    case 'SessionCompacted':
      return { ...base, type: 'compaction', turns_compacted: e.data.turnsCompacted, events_compacted: e.data.eventsCompacted, summary_text: e.data.summaryText, summary_key: e.data.summaryKey };
    case 'SessionArtifactUploaded':
      return {
        ...base,
        type: 'artifact_upload',
        artifacts: e.data.artifacts.map((a) => ({ artifact_id: a.artifactId, filename: a.filename, mime_type: a.mimeType, size_bytes: a.sizeBytes })),
        ...(e.data.message ? { agent_upload_message: e.data.message } : {}),
      };
    case 'SessionImageRead':
      return { ...base, type: 'image_read', artifact_id: e.data.artifactId, detail: e.data.detail };
    case 'SessionSkillLoaded':
      return { ...base, type: 'skill_load', skill_name: e.data.skillName, content: e.data.content };
    case 'SessionGuardrailTriggered': {
      const { guardrail, guardrailType, on, action, score, reason, subjectEventId, toolCallId, check } = e.data;
      return { ...base, type: 'guardrail_triggered', guardrail, guardrail_type: guardrailType, on, action, score: score ?? null, reason, ...(subjectEventId ? { input_event_id: subjectEventId } : {}), ...(toolCallId ? { tool_call_id: toolCallId } : {}), ...(check ? { check } : {}) };
    }
    default:
      return { ...base, type: 'unknown' };
  }
}
