import { GrowingMap, lookup, withEntries } from './growing-map';
import { isApiEvent, SessionApiEvent, SessionEvent } from './session-events';

/*
 * The agent revision each event of a session shows (`agent_revision`, issue 45): the one its turn's
 * `SessionTurnStarted` recorded. The session fold keeps it (`withTurnRevision`); the session's feed reads the stream
 * without folding it (`TurnRevisionReader`).
 */

/** What of a session's folded state (session.ts) the revisions read and keep. */
export interface TurnRevisionState {
  readonly turn?: { readonly agentRevision: number };
  readonly turnRevisions: GrowingMap;
  readonly eventRevisions: GrowingMap;
  readonly unclaimed: readonly string[];
}

/**
 * Which turn an API event belongs to, and so the agent revision it shows: the turn its `turnId` names; else the turn
 * running when it was stored (a steer); else, for an input or a client tool output stored while none ran, the next
 * turn to start (the one that reads it: an input is stored with its turn's start). Others (an upload) have none.
 */
export function withTurnRevision<S extends TurnRevisionState>(s: S, event: SessionApiEvent): S {
  if (event.data.turnId !== undefined) return s;
  const id = event.data.eventId;
  if (s.turn) return { ...s, eventRevisions: withEntries(s.eventRevisions, [[id, s.turn.agentRevision]]) };
  if (event.type === 'SessionInputReceived' || event.type === 'SessionSkillLoaded' || event.type === 'SessionToolReturned') return { ...s, unclaimed: [...s.unclaimed, id] };
  return s;
}

/**
 * `withTurnRevision` for a reader that goes through a session's stream one event at a time without folding it (the
 * session's feed): `read` gives an API event's revision when it is known, `'next'` when the event belongs to the
 * next turn to start (`nextTurnRevision` over what follows it).
 */
export class TurnRevisionReader {
  private readonly turns = new Map<string, number>();
  private running?: number;

  read(event: SessionEvent): number | 'next' | undefined {
    if (event.type === 'SessionTurnStarted') {
      this.turns.set(event.data.turnId, event.data.agentRevision);
      this.running = event.data.agentRevision;
    } else if (event.type === 'SessionTurnEnded') this.running = undefined;
    else if (event.type === 'SessionCreated') this.running = undefined;
    if (!isApiEvent(event)) return undefined;
    const revision = event.data.turnId !== undefined ? this.turns.get(event.data.turnId) : this.running;
    if (revision !== undefined) return revision;
    return event.type === 'SessionInputReceived' || event.type === 'SessionSkillLoaded' || event.type === 'SessionToolReturned' ? 'next' : undefined;
  }
}

/** The revision of the first turn that starts among `events` (what an input stored before it belongs to). */
export function nextTurnRevision(events: readonly SessionEvent[]): number | undefined {
  const start = events.find((e): e is Extract<SessionEvent, { type: 'SessionTurnStarted' }> => e.type === 'SessionTurnStarted');
  return start?.data.agentRevision;
}

/** The agent revision of the turn an API event of the session belongs to (none for an event outside turns). */
export function agentRevisionOf(s: TurnRevisionState, event: { readonly data: { readonly eventId: string; readonly turnId?: string } }): number | undefined {
  return event.data.turnId !== undefined ? lookup(s.turnRevisions, event.data.turnId) : lookup(s.eventRevisions, event.data.eventId);
}

