import { Injectable } from '@nestjs/common';
import type { TurnSink } from './turn-sink';

/** Where an item sits in a session's stream: after the stored event of revision `revision`, the `n`-th item (0: that event). */
export interface FeedPosition {
  readonly revision: number;
  readonly n: number;
}

/**
 * One thing a turn streamed, as its caller got it. `id` orders it in the session's stream: a stored event's
 * revision (`"12"`), or for what is not stored (answer pieces, their end, usage, compaction start, a sub-agent's
 * activity) `"<revision of the stored event before it>.<n>"` (`"12.3"`), so `Last-Event-ID` says exactly what a
 * client has had (docs/agents.md, "Re-attaching to a running turn").
 */
export type LiveItem =
  | { readonly kind: 'event'; readonly id: string; readonly view: Record<string, unknown> }
  | { readonly kind: 'delta'; readonly id: string; readonly content: string; readonly createdAt: string }
  | { readonly kind: 'delta_end'; readonly id: string; readonly eventId: string; readonly createdAt: string }
  | { readonly kind: 'context'; readonly id: string; readonly usage: ContextUsage; readonly createdAt: string }
  | { readonly kind: 'compaction'; readonly id: string; readonly view: Record<string, unknown> }
  | { readonly kind: 'activity'; readonly id: string; readonly event: Record<string, unknown> };

export type ContextUsage = { input_tokens: number; output_tokens: number; model_context_window?: number };

/** `"12"` → (12, 0), `"12.3"` → (12, 3); undefined for anything else. */
export function feedPosition(id: string): FeedPosition | undefined {
  const m = /^(\d{1,15})(?:\.(\d{1,15}))?$/.exec(id);
  return m ? { revision: Number(m[1]), n: m[2] === undefined ? 0 : Number(m[2]) } : undefined;
}

export const isAfter = (a: FeedPosition, b: FeedPosition): boolean => a.revision > b.revision || (a.revision === b.revision && a.n > b.n);

/**
 * A turn running in this process, as streamed: everything its caller's stream got, in order, with ids, kept
 * until the turn ends so that a client re-attaching (`GET …/stream`) gets the answer streamed so far and then the
 * rest live. Memory: what the turn streams (its answers' text, at most 50 model calls), dropped at its end.
 */
export class LiveTurn {
  private readonly items: { item: LiveItem; at: FeedPosition }[] = [];
  private last: FeedPosition;
  private ended = false;
  private wake: (() => void)[] = [];

  constructor(
    readonly streamId: string,
    readonly turnId: string,
    /** Revision of the session's last stored event before the turn's first append. */
    readonly startRevision: number,
  ) {
    this.last = { revision: startRevision, n: 0 };
  }

  /**
   * The caller's sink, teed into this turn's items: each callback reaches the caller with the item's id. Stored
   * events come with their revision (from the turn's appends); the rest are numbered after the last of them.
   */
  tee(caller: TurnSink): TurnSink {
    const next = () => `${this.last.revision}.${this.last.n + 1}`;
    // Each non-event item takes the next number after the last item (push places it there).
    return {
      event: (view, id) => {
        const at = id === undefined ? undefined : feedPosition(id);
        // An event without a revision (never from a turn's own appends) is relayed but not kept: it has no place.
        if (!at) return caller.event(view, id);
        this.push({ kind: 'event', id: id!, view }, at);
        caller.event(view, id);
      },
      delta: (content) => {
        const id = next();
        this.push({ kind: 'delta', id, content, createdAt: new Date().toISOString() });
        caller.delta(content, id);
      },
      deltaEnd: (eventId) => {
        if (eventId === undefined) return caller.deltaEnd(undefined);
        const id = next();
        this.push({ kind: 'delta_end', id, eventId, createdAt: new Date().toISOString() });
        caller.deltaEnd(eventId, id);
      },
      contextConsumed: (usage) => {
        const id = next();
        this.push({ kind: 'context', id, usage, createdAt: new Date().toISOString() });
        caller.contextConsumed(usage, id);
      },
      compactionStarted: (view) => {
        const id = next();
        this.push({ kind: 'compaction', id, view });
        caller.compactionStarted(view, id);
      },
      activity: (event) => {
        const id = next();
        this.push({ kind: 'activity', id, event });
        caller.activity?.(event, id);
      },
      // What comes next is placed after every event the turn knows of, shown or not (its start, a hidden one…), so
      // a client that followed the log up to one of them goes on with what the turn streamed after it.
      reached: (revision) => {
        if (revision > this.last.revision) this.last = { revision, n: 0 };
        caller.reached?.(revision);
      },
    };
  }

  /**
   * The items after `from`, then each one as it comes, until the turn ends or `stop` says so (checked after each
   * item and on {@link nudge}).
   */
  async *after(from: FeedPosition, stop: () => boolean = () => false): AsyncGenerator<LiveItem & { at: FeedPosition }> {
    let i = this.items.findIndex((x) => isAfter(x.at, from));
    if (i < 0) i = this.items.length;
    for (;;) {
      while (i < this.items.length) {
        const { item, at } = this.items[i++];
        yield { ...item, at };
        if (stop()) return;
      }
      if (this.ended || stop()) return;
      await new Promise<void>((r) => this.wake.push(r));
    }
  }

  /** Wakes whoever waits in {@link after} without an item (a client that went away). */
  nudge(): void {
    for (const w of this.wake.splice(0)) w();
  }

  close(): void {
    this.ended = true;
    this.nudge();
  }

  private push(item: LiveItem, at?: FeedPosition): void {
    const position = at ?? { revision: this.last.revision, n: this.last.n + 1 };
    // Items come in stream order; one out of order (never expected) is relayed but not kept, so replay stays ordered.
    if (!isAfter(position, this.last)) return;
    this.last = position;
    this.items.push({ item, at: position });
    this.nudge();
  }
}

/** The turns running in this process, by session stream (one at most per session: the lease). */
@Injectable()
export class LiveTurns {
  private readonly turns = new Map<string, LiveTurn>();

  open(streamId: string, turnId: string, startRevision: number): LiveTurn {
    const turn = new LiveTurn(streamId, turnId, startRevision);
    this.turns.set(streamId, turn);
    return turn;
  }

  /** The turn running in this process on that session, if any. */
  of(streamId: string): LiveTurn | undefined {
    return this.turns.get(streamId);
  }

  close(turn: LiveTurn): void {
    turn.close();
    if (this.turns.get(turn.streamId) === turn) this.turns.delete(turn.streamId);
  }
}
