import { Injectable } from '@nestjs/common';
import type { RecordedEvent, Subscription } from '@lib/platform';
import { apiEventView, isApiEvent, SessionApiEvent, SessionEvent } from '../../domain/session-events';
import { nextTurnRevision, TurnRevisionReader } from '../../domain/session-revisions';
import { FeedPosition, LiveItem, LiveTurn, LiveTurns } from '../turn/live-turns';
import { SessionStore } from './session-store';

/** One item of a session's stream: a stored API event (`id` its revision; none for a fork's inherited history) or what a turn of this process streamed. */
export type FeedItem = LiveItem | { readonly kind: 'event'; readonly id?: string; readonly view: Record<string, unknown> };

export interface FeedOptions {
  /** Where the client is (its `Last-Event-ID`): the stream goes on after it. From the start when absent. */
  readonly after?: FeedPosition;
  /** End once no turn runs and the stream has reached the session's end as it was when opened. */
  readonly untilTurnEnd?: boolean;
}

/** A session's stream as a client follows it; `close` ends it (the client went away). */
export interface SessionFeedStream extends AsyncIterable<FeedItem> {
  close(): void;
}

/**
 * A session's stream (`GET …/stream`): its stored events, and, while a turn runs in this process, what that turn
 * streams to its caller (answer pieces, their end, usage) in the order and with the ids its caller got them, so a
 * client that re-attaches with `Last-Event-ID` gets exactly what it missed: nothing twice, nothing lost
 * (docs/agents.md, "Re-attaching to a running turn"). A turn running in another process is followed through the
 * log alone: its stored events, no pieces.
 */
@Injectable()
export class SessionFeed {
  constructor(
    private readonly store: SessionStore,
    private readonly live: LiveTurns,
  ) {}

  open(streamId: string, sessionKey: string, options: FeedOptions = {}): SessionFeedStream {
    let closed = false;
    let sub: Subscription | undefined;
    let following: LiveTurn | undefined;
    const { store, live } = this;
    const turns = new TurnRevisionReader();
    // An API event's view with the agent revision of its turn; one stored before its turn's start (an input) looks at
    // what follows it (`later`: the events after it).
    const view = async (e: RecordedEvent, later: () => Promise<readonly SessionEvent[]> | readonly SessionEvent[]) => {
      const known = turns.read(e as unknown as SessionEvent);
      const revision = known === 'next' ? nextTurnRevision(await later()) : known;
      return apiEventView(e as unknown as SessionApiEvent, sessionKey, revision);
    };

    async function* items(): AsyncGenerator<FeedItem> {
      const raw = await store.readRaw(streamId);
      const head = raw.length ? raw[raw.length - 1].revision : -1;
      let at: FeedPosition = options.after ?? { revision: -1, n: 0 };
      let running = runningTurnAt(raw, at.revision);
      const inherited = (await store.inherited(streamId)).map((e) => e as unknown as SessionEvent);
      for (const [i, e] of inherited.entries()) {
        const shown = await view(e as unknown as RecordedEvent, () => inherited.slice(i + 1));
        if (!options.after && isApiEvent(e)) yield { kind: 'event', view: shown };
      }
      // The turn revisions of the session's own events up to `revision` not read yet: what the client already has (its
      // `Last-Event-ID`), or what a followed turn of this process streamed (its events carry their revisions).
      let readUpTo = -1;
      const readThrough = (events: readonly RecordedEvent[], revision: number) => {
        for (const e of events) if (e.revision > readUpTo && e.revision <= revision) turns.read(e as unknown as SessionEvent);
        readUpTo = Math.max(readUpTo, revision);
      };
      readThrough(raw, at.revision);
      const done = () => closed || (options.untilTurnEnd === true && running === undefined && at.revision >= head);
      while (!done()) {
        const turn = live.of(streamId);
        if (running !== undefined && turn?.turnId === running) {
          following = turn;
          for await (const item of turn.after(at, () => closed)) {
            at = item.at;
            const { at: _at, ...rest } = item;
            yield rest as LiveItem;
          }
          following = undefined;
          if (closed) return;
          // The turn ended (its end may be behind `at`, which follows what the turn knew): where the log stands now.
          const now = await store.readRaw(streamId);
          running = runningTurnAt(now, at.revision);
          readThrough(now, at.revision);
          continue;
        }
        // From the log until the end (or a turn of this process starts: its stream is followed from then on).
        sub = store.subscribe(streamId, at.revision);
        try {
          for await (const e of sub) {
            at = { revision: e.revision, n: 0 };
            const event = e as unknown as SessionEvent;
            if (event.type === 'SessionTurnStarted') running = event.data.turnId;
            if (event.type === 'SessionTurnEnded') running = undefined;
            const shown = await view(e, async () => (await store.after(streamId, e.revision)).events);
            readUpTo = e.revision;
            if (isApiEvent(event)) yield { kind: 'event', id: String(e.revision), view: shown };
            if (done() || (running !== undefined && live.of(streamId)?.turnId === running)) break;
          }
        } finally {
          await sub.close();
          sub = undefined;
        }
      }
    }

    const generator = items();
    return {
      [Symbol.asyncIterator]: () => generator,
      close() {
        closed = true;
        void sub?.close();
        following?.nudge();
      },
    };
  }
}

/** The turn running as of `revision` (started and not ended by then), by the session's own events. */
function runningTurnAt(events: readonly RecordedEvent[], revision: number): string | undefined {
  let running: string | undefined;
  for (const e of events) {
    if (e.revision > revision) break;
    const event = e as unknown as SessionEvent;
    if (event.type === 'SessionTurnStarted') running = event.data.turnId;
    if (event.type === 'SessionTurnEnded') running = undefined;
  }
  return running;
}
