import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, ConcurrencyError, EVENT_STORE, EventStore, RecordedEvent, streamId, Subscription, toNewEvents } from '@lib/platform';
import type { SessionEvent } from '../../domain/session-events';
import { ActiveSession, sessionFold, SessionState } from '../../domain/session';

export const sessionStream = (agentId: string, sessionKey: string): string => streamId('session', agentId, sessionKey);

/** A session as loaded: its state, and the revision and log position of its stream's last event. */
export interface LoadedSession {
  readonly streamId: string;
  readonly state: SessionState;
  readonly revision: number;
  readonly position: number;
}

/** Forks of forks are followed this deep at most (each level is one stream read). */
const MAX_FORK_DEPTH = 32;

/** Stored events that bound a turn and carry no API event id: `as_of` an event takes the ones right after it. */
const TURN_BOUNDARIES = new Set<string>(['SessionTurnStarted', 'SessionTurnEnded'] satisfies SessionEvent['type'][]);

/**
 * How much folded session state this process keeps (least recently loaded out first): at most this many sessions,
 * and their events together at most CACHED_EVENTS (the states hold their API events).
 */
const CACHED_SESSIONS = 1000;
const CACHED_EVENTS = 50_000;

/**
 * Reads and writes session streams. A fork's state is its parent's events up to the fork point, folded, then
 * its own: nothing of the parent is copied (docs/agents.md).
 */
@Injectable()
export class SessionStore {
  /**
   * The last state loaded of recently used sessions: a load reads only the events appended after it (the log is
   * append-only and the fold pure, so the state at a revision never changes). Before, each input read and folded
   * the whole stream (and its forks' parents) again.
   */
  private readonly cache = new Map<string, LoadedSession>();
  private cachedEvents = 0;

  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  /**
   * The session folded from its stream (and a fork's inherited history); with `asOf`, folded only up to the
   * stored event carrying that API event id — the session as it was just after it (undefined when no event has it).
   */
  async load(agentId: string, sessionKey: string): Promise<LoadedSession>;
  async load(agentId: string, sessionKey: string, asOf: string): Promise<LoadedSession | undefined>;
  async load(agentId: string, sessionKey: string, asOf?: string): Promise<LoadedSession | undefined> {
    const id = sessionStream(agentId, sessionKey);
    const cached = asOf === undefined ? this.cache.get(id) : undefined;
    if (cached) {
      const added = await this.store.readStream(id, { fromRevision: cached.revision + 1 });
      const last = added[added.length - 1];
      const loaded = last ? { streamId: id, state: added.reduce<SessionState>((s, e) => sessionFold.evolve(s, e as unknown as SessionEvent), cached.state), revision: last.revision, position: last.position } : cached;
      return this.remember(loaded);
    }
    const own = await this.store.readStream(id);
    let events = [...(await this.ancestry(own, 0)), ...own];
    if (asOf !== undefined) {
      let at = events.findIndex((e) => (e.data as { eventId?: unknown }).eventId === asOf && !/^SessionEvent(Hidden|Unhidden|Deleted)$/.test(e.type));
      if (at < 0) return undefined;
      // The turn's start or end stored right after the event (they are no API events of their own) is part of
      // "just after it": after a turn's last output the session is stopped, after the input that starts one it
      // is running, as the reference's `status` says.
      while (at + 1 < events.length && TURN_BOUNDARIES.has(events[at + 1].type)) at++;
      events = events.slice(0, at + 1);
    }
    const state = events.reduce<SessionState>((s, e) => sessionFold.evolve(s, e as unknown as SessionEvent), sessionFold.initialState);
    const last = own[own.length - 1];
    const loaded = { streamId: id, state, revision: last ? last.revision : -1, position: last ? last.position : 0 };
    return asOf === undefined && last ? this.remember(loaded) : loaded;
  }

  private remember(loaded: LoadedSession): LoadedSession {
    this.forget(loaded.streamId);
    const size = sizeOf(loaded);
    if (size > CACHED_EVENTS) return loaded;
    this.cache.set(loaded.streamId, loaded);
    this.cachedEvents += size;
    while (this.cache.size > CACHED_SESSIONS || this.cachedEvents > CACHED_EVENTS) this.forget(this.cache.keys().next().value!);
    return loaded;
  }

  private forget(streamId: string): void {
    const was = this.cache.get(streamId);
    if (!was) return;
    this.cache.delete(streamId);
    this.cachedEvents -= sizeOf(was);
  }

  /** The parent's events a fork starts from (recursively), up to the fork point. */
  private async ancestry(own: readonly RecordedEvent[], depth: number): Promise<RecordedEvent[]> {
    const first = own[0] as unknown as SessionEvent | undefined;
    if (first?.type !== 'SessionCreated' || !first.data.forkedFrom || depth >= MAX_FORK_DEPTH) return [];
    const origin = first.data.forkedFrom;
    const parent = (await this.store.readStream(origin.streamId)).filter((e) => e.position <= origin.upToPosition);
    return [...(await this.ancestry(parent, depth + 1)), ...parent];
  }

  /**
   * Decides on the loaded state and appends at its revision; on a concurrent append the state is loaded again
   * and the decision made again. Each append gets event ids of its own (the revision is part of the command id).
   */
  async write(agentId: string, sessionKey: string, decide: (state: SessionState) => readonly SessionEvent[], ctx: CommandContext): Promise<{ events: readonly SessionEvent[]; state: SessionState; position: number; revision: number }> {
    for (let attempt = 1; ; attempt++) {
      const loaded = await this.load(agentId, sessionKey);
      const events = decide(loaded.state);
      if (events.length === 0) return { events, state: loaded.state, position: loaded.position, revision: loaded.revision };
      try {
        const result = await this.append(loaded.streamId, loaded.revision, events, ctx);
        const state = events.reduce<SessionState>((s, e) => sessionFold.evolve(s, e), loaded.state);
        return { events, state, position: result.position, revision: result.nextExpectedRevision };
      } catch (e) {
        if (!(e instanceof ConcurrencyError) || attempt >= 5) throw e;
      }
    }
  }

  /** Appends at `revision` exactly (a ConcurrencyError when the stream moved). */
  append(stream: string, revision: number, events: readonly SessionEvent[], ctx: CommandContext) {
    const scoped = { ...ctx, commandId: `${ctx.commandId}@${revision}` };
    return this.store.append(stream, toNewEvents(events, scoped, stream, 1), { expectedRevision: revision < 0 ? 'no_stream' : revision });
  }

  /** The stream's events from after `afterRevision` (all when absent), then live. */
  subscribe(stream: string, afterRevision?: number): Subscription {
    return this.store.subscribeToStream(stream, afterRevision === undefined ? {} : { afterRevision });
  }

  /** The events a fork reads from its parents, in order (empty for a session that is not a fork). */
  async inherited(stream: string): Promise<RecordedEvent[]> {
    return this.ancestry(await this.store.readStream(stream, { maxCount: 1 }), 0);
  }

  readRaw(stream: string): Promise<RecordedEvent[]> {
    return this.store.readStream(stream);
  }

  /** Events of the stream after `revision`, as the domain's union (for a running turn to catch up). */
  async after(stream: string, revision: number): Promise<{ events: SessionEvent[]; revision: number }> {
    const recorded = await this.store.readStream(stream, { fromRevision: revision + 1 });
    return { events: recorded.map((e) => e as unknown as SessionEvent), revision: recorded.length ? recorded[recorded.length - 1].revision : revision };
  }
}

export type { ActiveSession };

/** A cached session's weight: its API events (an absent session weighs one). */
function sizeOf(loaded: LoadedSession): number {
  return loaded.state.status === 'active' ? loaded.state.events.length + 1 : 1;
}
