import { assertNever, invalid, notFound } from '@lib/platform/kernel';
import type { CompactionConfig } from './agent-config';
import { EMPTY_GROWING_MAP, GrowingMap, withEntries } from './growing-map';
import { withTurnRevision } from './session-revisions';
import type { MemoryChange } from './memory';
import { ForkOrigin, isApiEvent, ReplayOrigin, PendingClientCall, Sealed, SessionApiEvent, SessionArtifactRecord, SessionCreator, SessionEvent, SessionFields, ToolApproval, TurnUsage } from './session-events';

/** A turn in progress: who runs it (a lease holder) and since when. */
export interface RunningTurn {
  readonly turnId: string;
  readonly holder: string;
  readonly step: string;
  readonly startedAt: string;
  /** The agent revision the turn runs (`SessionTurnStarted.agentRevision`). */
  readonly agentRevision: number;
}

export type SessionState =
  | { readonly status: 'absent' }
  | {
      readonly status: 'active';
      readonly agentId: string;
      readonly agentKey: string;
      readonly key: string;
      readonly fields: SessionFields;
      readonly secretNames: readonly string[];
      readonly sealedSecrets?: Sealed;
      readonly forkedFrom?: ForkOrigin;
      /** Compaction settings snapshotted at creation (absent for sessions created before they were). */
      readonly compaction?: CompactionConfig;
      readonly createdBy?: SessionCreator;
      /** The alias the session was created through (its routing was resolved then, once). */
      readonly aliasKey?: string;
      /** The end user who created it through an alias (`<app client id>/<end user>` or the caller's id). */
      readonly endUser?: string;
      /** The agent revision every turn runs (a pinned session); absent: the agent's current one. */
      readonly agentRevision?: number;
      /** Set on a replay session: what it re-runs. */
      readonly replayOf?: ReplayOrigin;
      readonly createdAt: string;
      readonly updatedAt: string;
      /** The step the next input enters (the reentry step of the step the last turn ended on). */
      readonly currentStep?: string;
      readonly turn?: RunningTurn;
      readonly turns: number;
      /** API events in order (hidden ones flagged; deleted ones gone): the history and the events list. */
      readonly events: readonly SessionApiEvent[];
      readonly hidden: ReadonlySet<string>;
      readonly externalIds: ReadonlyMap<string, string>;
      readonly pending: readonly PendingClientCall[];
      /** The paused turn's tool calls that wait (or waited) for approval, with their decisions so far. */
      readonly approvals: readonly ToolApproval[];
      /** Uploaded files, with when they came. */
      readonly artifacts: readonly (SessionArtifactRecord & { readonly createdAt: string })[];
      readonly usage: TurnUsage;
      /** Set once an interrupt was asked for the running turn. */
      readonly interruptRequested: boolean;
      /** The agent revision of each turn, by turn id (what `SessionTurnStarted` recorded). */
      readonly turnRevisions: GrowingMap;
      /**
       * The agent revision of the turn each API event without a `turnId` belongs to (inputs, steers, client tool
       * outputs), by event id; an event with one belongs to that turn (`agentRevisionOf`).
       */
      readonly eventRevisions: GrowingMap;
      /** Inputs and client tool outputs stored while no turn ran: they belong to the next turn, which reads them. */
      readonly unclaimed: readonly string[];
      /** The changes of the session's own memory blocks (scope `session`), by block, oldest first; absent: none. */
      readonly memory?: Readonly<Record<string, readonly MemoryChange[]>>;
    };

export type ActiveSession = Extract<SessionState, { status: 'active' }>;

const EMPTY_USAGE: TurnUsage = { input_tokens: 0, output_tokens: 0 };

/**
 * Folds a session's stream. A forked session is folded from its parent's events up to the fork point first
 * (`foldWith(parentEvents)`), then its own: the parent's history is read, never copied.
 */
export const sessionFold = {
  initialState: { status: 'absent' } as SessionState,
  evolve(state: SessionState, event: SessionEvent): SessionState {
    if (event.type === 'SessionCreated') {
      const d = event.data;
      // A fork starts from its parent's folded history (see `forkBase`); a plain session from nothing.
      const base = state.status === 'active' ? state : undefined;
      return {
        status: 'active',
        agentId: d.agentId,
        agentKey: d.agentKey,
        key: d.sessionKey,
        fields: { name: d.name, description: d.description, metadata: d.metadata, enabled: d.enabled, ttiMinutes: d.ttiMinutes },
        secretNames: d.secrets?.names ?? [],
        sealedSecrets: d.secrets?.sealed,
        forkedFrom: d.forkedFrom,
        compaction: d.compaction,
        createdBy: d.createdBy,
        aliasKey: d.aliasKey,
        endUser: d.endUser,
        agentRevision: d.agentRevision,
        replayOf: d.replayOf,
        createdAt: d.createdAt,
        updatedAt: d.createdAt,
        currentStep: base?.currentStep,
        turn: undefined,
        turns: base?.turns ?? 0,
        events: base?.events ?? [],
        hidden: base?.hidden ?? new Set(),
        externalIds: base?.externalIds ?? new Map(),
        pending: base?.pending ?? [],
        approvals: base?.approvals ?? [],
        artifacts: base?.artifacts ?? [],
        usage: EMPTY_USAGE,
        interruptRequested: false,
        turnRevisions: base?.turnRevisions ?? EMPTY_GROWING_MAP,
        eventRevisions: base?.eventRevisions ?? EMPTY_GROWING_MAP,
        unclaimed: [],
        ...(base?.memory ? { memory: base.memory } : {}),
      };
    }
    if (state.status === 'absent') return state;
    const withEvent = (s: ActiveSession): ActiveSession => (isApiEvent(event) ? withTurnRevision({ ...s, events: [...s.events, event] }, event) : s);
    switch (event.type) {
      case 'SessionUpdated':
        return {
          ...state,
          fields: { ...state.fields, ...event.data.changes },
          ...(event.data.secrets ? { secretNames: event.data.secrets.names, sealedSecrets: event.data.secrets.sealed } : {}),
          updatedAt: event.data.updatedAt,
        };
      case 'SessionDeleted':
        return { status: 'absent' };
      case 'SessionInputReceived': {
        const ids = event.data.externalId ? new Map(state.externalIds).set(event.data.externalId, event.data.eventId) : state.externalIds;
        return withEvent({ ...state, externalIds: ids, updatedAt: event.data.createdAt });
      }
      case 'SessionTurnStarted': {
        const revision = event.data.agentRevision;
        return {
          ...state,
          turn: { turnId: event.data.turnId, holder: event.data.holder, step: event.data.step, startedAt: event.data.createdAt, agentRevision: revision },
          turns: state.turns + 1,
          pending: [],
          approvals: [],
          interruptRequested: false,
          turnRevisions: withEntries(state.turnRevisions, [[event.data.turnId, revision]]),
          eventRevisions: withEntries(state.eventRevisions, state.unclaimed.map((id) => [id, revision] as const)),
          unclaimed: [],
        };
      }
      case 'SessionToolReturned':
        return withEvent({ ...state, pending: state.pending.filter((p) => p.tool_call_id !== event.data.toolCallId) });
      case 'SessionStepTransitioned':
        return withEvent({ ...state, turn: state.turn && { ...state.turn, step: event.data.toStep } });
      case 'SessionClientToolPending':
        return withEvent({ ...state, pending: event.data.pendingCalls });
      case 'SessionToolApprovalRequested': {
        const d = event.data;
        const approval: ToolApproval = { eventId: d.eventId, turnId: d.turnId, toolCallId: d.toolCallId, toolName: d.toolName, toolConfigurationName: d.toolConfigurationName, arguments: d.arguments, createdAt: d.createdAt, expiresAt: d.expiresAt, approvers: d.approvers, sessionUser: d.sessionUser };
        return withEvent({ ...state, approvals: [...state.approvals, approval] });
      }
      case 'SessionToolApprovalResolved': {
        const d = event.data;
        return withEvent({ ...state, approvals: state.approvals.map((a) => (a.toolCallId === d.toolCallId ? { ...a, decision: d.decision, ...(d.arguments ? { editedArguments: d.arguments } : {}) } : a)) });
      }
      case 'SessionInterrupted':
        return withEvent({ ...state, interruptRequested: state.turn !== undefined, pending: [], approvals: [] });
      case 'SessionTurnEnded':
        return {
          ...state,
          turn: undefined,
          interruptRequested: false,
          currentStep: event.data.nextStep ?? state.currentStep,
          usage: { input_tokens: state.usage.input_tokens + event.data.usage.input_tokens, output_tokens: state.usage.output_tokens + event.data.usage.output_tokens },
          updatedAt: event.data.createdAt,
        };
      case 'SessionCompacted':
        return withEvent({ ...state, hidden: new Set([...state.hidden, ...event.data.compactedEventIds]) });
      case 'SessionEventHidden':
        return { ...state, hidden: new Set([...state.hidden, event.data.eventId]) };
      case 'SessionEventUnhidden': {
        const hidden = new Set(state.hidden);
        hidden.delete(event.data.eventId);
        return { ...state, hidden };
      }
      case 'SessionEventDeleted':
        return { ...state, events: state.events.filter((e) => e.data.eventId !== event.data.eventId) };
      case 'SessionArtifactUploaded': {
        // An artifact uploaded again under its id (a scratch pad written) replaces the earlier version.
        const ids = new Set(event.data.artifacts.map((a) => a.artifactId));
        const kept = state.artifacts.filter((a) => !ids.has(a.artifactId));
        return withEvent({ ...state, artifacts: [...kept, ...event.data.artifacts.map((a) => ({ ...a, createdAt: event.data.createdAt }))] });
      }
      case 'SessionImageRead':
      case 'SessionSkillLoaded':
      case 'SessionGuardrailTriggered':
      case 'SessionAgentOutput':
      case 'SessionThinking':
      case 'SessionToolCalled':
      case 'SessionStructuredOutput':
      case 'SessionLimitExceeded':
      case 'SessionCompactionStarted':
        return withEvent(state);
      case 'SessionReplayDiverged':
        return state;
      case 'SessionMemoryChanged': {
        const changes = [...(state.memory?.[event.data.block] ?? []), event.data];
        return { ...state, memory: { ...state.memory, [event.data.block]: changes } };
      }
      default:
        return assertNever(event);
    }
  },
};

/** One event folded into an active session (one that a deletion would end keeps its state). */
export function foldActive(s: ActiveSession, e: SessionEvent): ActiveSession {
  const next = sessionFold.evolve(s, e);
  return next.status === 'active' ? next : s;
}

/** The reference's session status: no input yet, a turn running, or waiting for the next input. */
export const sessionStatus = (s: ActiveSession): 'unstarted' | 'running' | 'stopped' => (s.turn ? 'running' : s.turns === 0 ? 'unstarted' : 'stopped');

export const sessionNotFound = (agentKey: string, key: string) => notFound('session.not_found', `Session "${key}" of agent "${agentKey}" does not exist`, key);

export function requireSession(state: SessionState, agentKey: string, key: string): ActiveSession {
  if (state.status === 'absent') throw sessionNotFound(agentKey, key);
  return state;
}

export function decideCreateSession(
  state: SessionState,
  command: { agentId: string; agentKey: string; sessionKey: string; fields: SessionFields; secrets?: { names: string[]; sealed: Sealed }; forkedFrom?: ForkOrigin; compaction?: CompactionConfig; createdBy?: SessionCreator; aliasKey?: string; endUser?: string; agentRevision?: number; replayOf?: ReplayOrigin },
  now: Date,
): SessionEvent[] {
  if (state.status !== 'absent' && !command.forkedFrom) throw invalid('session.key_taken', `A session with key "${command.sessionKey}" already exists for agent "${command.agentKey}": use another key`, { key: 'already taken' });
  return [{ type: 'SessionCreated', data: { agentId: command.agentId, agentKey: command.agentKey, sessionKey: command.sessionKey, ...command.fields, ...(command.secrets ? { secrets: command.secrets } : {}), ...(command.forkedFrom ? { forkedFrom: command.forkedFrom } : {}), ...(command.compaction ? { compaction: command.compaction } : {}), ...(command.createdBy ? { createdBy: command.createdBy } : {}), ...(command.aliasKey ? { aliasKey: command.aliasKey } : {}), ...(command.endUser ? { endUser: command.endUser } : {}), ...(command.agentRevision !== undefined ? { agentRevision: command.agentRevision } : {}), ...(command.replayOf ? { replayOf: command.replayOf } : {}), createdAt: now.toISOString() } }];
}

export function decideUpdateSession(state: SessionState, agentKey: string, key: string, changes: Partial<SessionFields>, secrets: { names: string[]; sealed: Sealed } | undefined, now: Date): SessionEvent[] {
  const s = requireSession(state, agentKey, key);
  const changed = Object.fromEntries(Object.entries(changes).filter(([k, v]) => v !== undefined && JSON.stringify(v) !== JSON.stringify(s.fields[k as keyof SessionFields])));
  if (Object.keys(changed).length === 0 && !secrets) return [];
  return [{ type: 'SessionUpdated', data: { changes: changed, ...(secrets ? { secrets } : {}), updatedAt: now.toISOString() } }];
}

export function decideDeleteSession(state: SessionState, agentKey: string, key: string, now: Date): SessionEvent[] {
  requireSession(state, agentKey, key);
  return [{ type: 'SessionDeleted', data: { deletedAt: now.toISOString() } }];
}

/** Hide, unhide or delete one API event of the session; an id the session does not hold is a 404. */
export function decideEventChange(state: SessionState, agentKey: string, key: string, eventId: string, change: 'hide' | 'unhide' | 'delete', now: Date): SessionEvent[] {
  const s = requireSession(state, agentKey, key);
  if (!s.events.some((e) => e.data.eventId === eventId)) throw notFound('session.event_not_found', `Event "${eventId}" is not in session "${key}"`, eventId);
  const at = now.toISOString();
  if (change === 'hide') return s.hidden.has(eventId) ? [] : [{ type: 'SessionEventHidden', data: { eventId, createdAt: at } }];
  if (change === 'unhide') return s.hidden.has(eventId) ? [{ type: 'SessionEventUnhidden', data: { eventId, createdAt: at } }] : [];
  return [{ type: 'SessionEventDeleted', data: { eventId, createdAt: at } }];
}

/** The step an input enters: `entry_step` (a step of the agent), else where the session stands, else the first step. */
export function entryStepFor(s: ActiveSession, steps: Readonly<Record<string, unknown>>, firstStep: string, requested?: string): string {
  if (requested !== undefined) {
    if (!Object.hasOwn(steps, requested)) throw invalid('session.invalid_entry_step', `entry_step "${requested}" is not a step of the agent (${Object.keys(steps).join(', ')})`, { entry_step: 'not a step of the agent' });
    return requested;
  }
  return s.currentStep !== undefined && Object.hasOwn(steps, s.currentStep) ? s.currentStep : firstStep;
}
