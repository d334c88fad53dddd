import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, ConcurrencyError, EVENT_STORE, EventStore, NewEvent, ReadStreamOptions, RecordedEvent, streamId, Subscription, toNewEvents } from '@lib/platform';
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
 * A stream's appends held in memory (`SessionStore.holding`): a recorded replay's own session,
 * whose turns are committed in one append at the replay's end (docs/replay.md, "Cost").
 */
interface Hold {
  readonly streamId: string;
  /** The stream's last committed revision and position when the hold began (held appends go after them). */
  readonly base: { readonly revision: number; readonly position: number };
  /** The events as they will be stored, and as the hold's reads see them (their position: the base's). */
  readonly events: NewEvent[];
  readonly recorded: RecordedEvent[];
  /** The last load during the hold (the process-wide cache only ever holds committed state). */
  loaded?: LoadedSession;
  /** Committed or given up: reads and appends go to the log again. */
  closed: boolean;
}

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

  /** Streams whose appends are held in memory (see `holding`). */
  private readonly holds = new Map<string, Hold>();

  /**
   * Runs `work` with the session's appends held in memory, then commits them all in one append at the revision the
   * stream had when it began (also when `work` throws: what it stored so far, as without the hold). Meanwhile this
   * process's reads of the session (`load`, `after`, `readRaw`, `inherited`, `write`) see the held events and its
   * appends join them; other processes see them once committed. For a stream nobody else writes meanwhile (a
   * recorded replay's new session): another process's append makes the commit fail (ConcurrencyError), none of the
   * held events stored. A crash before the commit leaves the stream as it was when the hold began. Rejected: an
   * AsyncLocalStorage scoping the hold to the replay's calls (it turns on promise hooks for the whole process: a plain
   * turn measured 7.3 → 10 ms).
   */
  async holding<T>(agentId: string, sessionKey: string, work: () => Promise<T>): Promise<T> {
    const committed = await this.load(agentId, sessionKey);
    if (this.holds.has(committed.streamId)) throw new Error(`SessionStore.holding: ${committed.streamId} is already held`);
    const hold: Hold = { streamId: committed.streamId, base: { revision: committed.revision, position: committed.position }, events: [], recorded: [], closed: false };
    this.holds.set(hold.streamId, hold);
    let result: T;
    try {
      result = await work();
    } catch (e) {
      await this.commit(hold).catch(() => undefined);
      throw e;
    }
    await this.commit(hold);
    return result;
  }

  /**
   * The held events in one append; the hold ends whatever the outcome (the process-wide cache kept the state from
   * before it: the next load reads what the log has since).
   */
  private async commit(hold: Hold): Promise<void> {
    if (hold.closed) return;
    try {
      if (hold.events.length) await this.store.append(hold.streamId, hold.events, { expectedRevision: hold.base.revision < 0 ? 'no_stream' : hold.base.revision });
    } finally {
      hold.closed = true;
      this.holds.delete(hold.streamId);
    }
  }

  private held(stream: string): Hold | undefined {
    return this.holds.get(stream);
  }

  /** A stream's events as this process sees them: the log's, then the held ones (while the stream is held). */
  private async read(stream: string, options?: ReadStreamOptions & { fromRevision?: number }): Promise<RecordedEvent[]> {
    const hold = this.held(stream);
    if (!hold) return this.store.readStream(stream, options);
    const from = options?.fromRevision ?? 0;
    // Nothing after the base is in the log yet: a read that starts past it needs no read of the log.
    const committed = from <= hold.base.revision ? await this.store.readStream(stream, options) : [];
    const all = [...committed, ...hold.recorded.filter((e) => e.revision >= from)];
    return options?.maxCount === undefined ? all : all.slice(0, options.maxCount);
  }

  /**
   * The session folded from its stream (and a fork's inherited history); with `asOf`, folded only up to the
   * stored event carrying that API event id — the session as it was just after it (undefined when no event has it).
   */
  async load(agentId: string, sessionKey: string): Promise<LoadedSession>;
  async load(agentId: string, sessionKey: string, asOf: string): Promise<LoadedSession | undefined>;
  async load(agentId: string, sessionKey: string, asOf?: string): Promise<LoadedSession | undefined> {
    const id = sessionStream(agentId, sessionKey);
    const hold = this.held(id);
    const cached = asOf === undefined ? (hold ? (hold.loaded ?? this.cache.get(id)) : this.cache.get(id)) : undefined;
    if (cached) {
      const added = await this.read(id, { fromRevision: cached.revision + 1 });
      const last = added[added.length - 1];
      const loaded = last ? { streamId: id, state: added.reduce<SessionState>((s, e) => sessionFold.evolve(s, e as unknown as SessionEvent), cached.state), revision: last.revision, position: last.position } : cached;
      return hold ? (hold.loaded = loaded) : this.remember(loaded);
    }
    const own = await this.read(id);
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
    if (hold && asOf === undefined) return (hold.loaded = loaded);
    return asOf === undefined && last && !hold ? this.remember(loaded) : loaded;
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
  append(stream: string, revision: number, events: readonly SessionEvent[], ctx: CommandContext): Promise<{ nextExpectedRevision: number; position: number }> {
    const scoped = { ...ctx, commandId: `${ctx.commandId}@${revision}` };
    const news = toNewEvents(events, scoped, stream, 1);
    const hold = this.held(stream);
    if (!hold) return this.store.append(stream, news, { expectedRevision: revision < 0 ? 'no_stream' : revision });
    // Held (a recorded replay's session): checked as the log would, kept until the hold commits.
    const at = hold.base.revision + hold.events.length;
    if (revision !== at) return Promise.reject(new ConcurrencyError(stream, revision < 0 ? 'no_stream' : revision, at < 0 ? 'no_stream' : at));
    const recordedAt = new Date().toISOString();
    for (const e of news) {
      hold.events.push(e);
      hold.recorded.push({ ...e, streamId: stream, revision: hold.base.revision + hold.events.length, position: hold.base.position, recordedAt });
    }
    return Promise.resolve({ nextExpectedRevision: at + news.length, position: hold.base.position });
  }

  /** The stream's events from after `afterRevision` (all when absent), then live. */
  subscribe(stream: string, afterRevision?: number): Subscription {
    return this.store.subscribeToStream(stream, afterRevision === undefined ? {} : { afterRevision });
  }

  /** The events a fork reads from its parents, in order (empty for a session that is not a fork). */
  async inherited(stream: string): Promise<RecordedEvent[]> {
    return this.ancestry(await this.read(stream, { maxCount: 1 }), 0);
  }

  readRaw(stream: string): Promise<RecordedEvent[]> {
    return this.read(stream);
  }

  /** Events of the stream after `revision`, as the domain's union (for a running turn to catch up). */
  async after(stream: string, revision: number): Promise<{ events: SessionEvent[]; revision: number }> {
    const recorded = await this.read(stream, { fromRevision: revision + 1 });
    return { events: recorded.map((e) => e as unknown as SessionEvent), revision: recorded.length ? recorded[recorded.length - 1].revision : revision };
  }
}

export type { ActiveSession };

/** A cached session's weight: its API events (an absent session weighs one). */
function sizeOf(loaded: LoadedSession): number {
  return loaded.state.status === 'active' ? loaded.state.events.length + 1 : 1;
}
