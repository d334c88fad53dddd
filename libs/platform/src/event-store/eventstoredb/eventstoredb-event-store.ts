import { BACKWARDS, END, EventStoreDBClient, eventTypeFilter, excludeSystemEvents, FORWARDS, jsonEvent } from '@eventstore/db-client';
import { NO_STREAM, START, StreamNotFoundError, streamNameFilter, WrongExpectedVersionError } from '@eventstore/db-client';
import type { AllStreamResolvedEvent, AppendExpectedRevision, Direction, EventData, Filter, JSONType } from '@eventstore/db-client';
import type { Position, ReadPosition, ReadRevision, ResolvedEvent } from '@eventstore/db-client';
import { catchUpSubscription, SUBSCRIPTION_PAGE_BYTES } from '../catch-up-subscription';
import { ConcurrencyError, FencedError, assertDistinctEventIds } from '../event-store.port';
import type { AppendOptions, AppendResult, EventFilter, EventStore, ReadAllOptions } from '../event-store.port';
import type { ReadStreamOptions, Subscription, SubscribeToAllOptions, SubscribeToStreamOptions } from '../event-store.port';
import { categoryOf, EventMetadata, NewEvent, RecordedEvent } from '../events';

/** A live subscription as the client hands it out; only what the wake-ups need. */
export interface EsdbSubscriptionLike<E> {
  on(event: 'data', listener: (event: E) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  unsubscribe(): Promise<void>;
}

/** The part of `EventStoreDBClient` this adapter uses, so tests can hand in a fake (and a 1.x client a shim). */
export interface EsdbClientLike {
  appendToStream(streamName: string, events: EventData[], options: { expectedRevision: AppendExpectedRevision }): Promise<AppendReply>;
  readStream(streamName: string, options: { fromRevision: ReadRevision; direction: Direction; maxCount: number }): AsyncIterable<ResolvedEvent>;
  readAll(options: { fromPosition: ReadPosition; direction: Direction; maxCount: number }): AsyncIterable<AllStreamResolvedEvent>;
  subscribeToAll(options: { fromPosition: ReadPosition; filter: Filter }): EsdbSubscriptionLike<AllStreamResolvedEvent>;
  subscribeToStream(streamName: string, options: { fromRevision: ReadRevision }): EsdbSubscriptionLike<ResolvedEvent>;
  dispose(): Promise<void>;
}

type AppendReply = { nextExpectedRevision: bigint; position?: Position };
type RawEvent = NonNullable<ResolvedEvent['event']>;
type Named = { streamId: string; type: string };
type ScanOptions = { after: number; before?: number; backwards: boolean; maxCount: number; maxBytes?: number; keep: (e: Named) => boolean };

const PAGE = 500;
const NO_POSITION = 2n ** 63n; // a server's -1 ("no position") arrives as a uint64 at or above this
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * EventStoreDB / KurrentDB adapter (`@eventstore/db-client` v6). Positions are commit positions (byte offsets:
 * increasing, with gaps). System events (`$`-prefixed types or streams: links, metadata, stats) are invisible.
 *
 * Subscriptions are built on the generic `catchUpSubscription` over paged reads rather than on the native
 * subscription's `caughtUp` event: that event needs server 23.10+, and paging from the last delivered position
 * already gives no gap and no duplicate. Native filtered subscriptions only serve as wake-ups (`waitOn`).
 * v6 `readAll` has no server-side filter, so filtered reads scan `$all` and filter here.
 */
export class EventStoreDbEventStore implements EventStore {
  constructor(private readonly client: EsdbClientLike) {}

  static connect(url: string): EventStoreDbEventStore {
    return new EventStoreDbEventStore(EventStoreDBClient.connectionString(url));
  }

  async append(streamId: string, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    assertDistinctEventIds(streamId, events);
    const expected = options.expectedRevision ?? 'any';
    // EventStoreDB appends to one stream at a time: the condition is read just before the append, not atomically with
    // it. A takeover landing between the two is not fenced here (docs/workers.md "Fencing": TTL-only on this engine).
    const condition = options.condition;
    if (condition) {
      const after = await this.readStream(condition.streamId, { fromRevision: condition.afterRevision + 1 });
      if (after.some((e) => condition.types.includes(e.type))) throw new FencedError(streamId, condition.streamId);
    }
    let result: AppendReply;
    try {
      result = await this.client.appendToStream(streamId, events.map(toEventData), { expectedRevision: typeof expected === 'number' ? BigInt(expected) : expected });
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion === NO_STREAM ? 'no_stream' : toNumber(error.actualVersion, 'revision');
        throw new ConcurrencyError(streamId, expected, actual);
      }
      throw error;
    }
    const nextExpectedRevision = toNumber(result.nextExpectedRevision, 'revision');
    // Only a one-event append is sure to report that event's own position; a batch or an idempotent retry may
    // report another record's, so read the last event back to honour "position of the last event".
    const reported = events.length === 1 ? reportedPosition(result.position) : undefined;
    if (reported !== undefined || nextExpectedRevision < 0) return { nextExpectedRevision, position: reported ?? 0 };
    const [last] = await this.readStream(streamId, { fromRevision: nextExpectedRevision, maxCount: 1 });
    return { nextExpectedRevision, position: last?.position ?? 0 };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? 'end' : 'start');
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamId, {
        fromRevision: from === 'start' ? START : from === 'end' ? END : BigInt(from),
        direction: backwards ? BACKWARDS : FORWARDS,
        maxCount: options.maxCount ?? Number.MAX_SAFE_INTEGER,
      });
      for await (const { event, commitPosition } of read) {
        if (event && !isSystem(event)) out.push(toRecorded(event, positionOf(event, commitPosition)));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const { after = 0, before, maxCount = Infinity, maxBytes } = options;
    return (await this.scan({ after, before, maxCount, maxBytes, backwards: options.direction === 'backwards', keep: matcher(options.filter) })).events;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    const keep = matcher(options.filter);
    // Events in (cursor, scanned] were read and did not match: the next page and the wake-up start after them,
    // so a rare category on a busy log is not rescanned from its last match on every wake-up.
    let skipped = { cursor: NaN, scanned: NaN };
    const resume = (after: number): number => (skipped.cursor === after ? Math.max(after, skipped.scanned) : after);
    return catchUpSubscription(
      {
        readPage: async (after, pageSize) => {
          const { events, scanned } = await this.scan({ after: resume(after), backwards: false, maxCount: pageSize, maxBytes: SUBSCRIPTION_PAGE_BYTES, keep });
          skipped = { cursor: events.length > 0 ? events[events.length - 1].position : after, scanned };
          return events;
        },
        waitForMore: (after, ms) => this.waitForAll(resume(after), ms, options.filter),
        head: () => this.headPosition(),
        cursorOf: (e) => e.position,
      },
      options.after ?? 0,
    );
  }

  subscribeToStream(streamId: string, options: SubscribeToStreamOptions = {}): Subscription {
    return catchUpSubscription(
      {
        readPage: (after, pageSize) => this.readStream(streamId, { fromRevision: after + 1, maxCount: pageSize }),
        waitForMore: (after, ms) => {
          const sub = this.client.subscribeToStream(streamId, { fromRevision: after >= 0 ? BigInt(after) : START });
          return this.waitOn(sub, ({ event }) => !!event && !isSystem(event) && toNumber(event.revision, 'revision') > after, ms);
        },
        head: async () => (await this.readStream(streamId, { direction: 'backwards', maxCount: 1 }))[0]?.revision ?? -1,
        cursorOf: (e) => e.revision,
      },
      options.afterRevision ?? -1,
    );
  }

  async headPosition(): Promise<number> {
    const { events } = await this.scan({ after: 0, backwards: true, maxCount: 1, keep: () => true });
    return events[0]?.position ?? 0;
  }

  waitForAppend(position: number, timeoutMs: number): Promise<void> {
    return this.waitForAll(position, timeoutMs);
  }

  async ping(): Promise<void> {
    for await (const resolved of this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1 })) void resolved;
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }

  /**
   * Pages through `$all`. Server reads include the event at `fromPosition` going forwards (and may going
   * backwards), so `after`/`before` are enforced here; `scanned` is the last position looked at, matching or not.
   */
  private async scan(o: ScanOptions): Promise<{ events: RecordedEvent[]; scanned: number }> {
    const pageSize = Math.min(PAGE, Math.max(32, 2 * o.maxCount)); // room for skipped system events
    let bound = o.backwards ? (o.before ?? Infinity) : o.after;
    let from: ReadPosition = o.backwards ? (o.before !== undefined ? toPosition(o.before) : END) : o.after > 0 ? toPosition(o.after) : START;
    const events: RecordedEvent[] = [];
    let bytes = 0;
    for (;;) {
      let count = 0;
      let last: Position | undefined;
      for await (const { event } of this.client.readAll({ fromPosition: from, direction: o.backwards ? BACKWARDS : FORWARDS, maxCount: pageSize })) {
        count += 1;
        if (!event) continue;
        const position = positionOf(event);
        if (o.backwards ? position >= bound : position <= bound) continue;
        bound = position;
        last = event.position;
        if (isSystem(event) || !o.keep(event)) continue;
        const recorded = toRecorded(event, position);
        events.push(recorded);
        if (events.length >= o.maxCount) return { events, scanned: bound };
        // The client hands the data parsed: its size is measured again, only when a bound is asked for.
        if (o.maxBytes !== undefined && (bytes += jsonSize(recorded.data) + jsonSize(recorded.metadata)) >= o.maxBytes) return { events, scanned: bound };
      }
      if (count < pageSize || !last) return { events, scanned: bound };
      from = last;
    }
  }

  /** Wakes on the first visible event after `position` in `$all`, filtered on the server as far as it can. */
  private waitForAll(position: number, timeoutMs: number, filter?: EventFilter): Promise<void> {
    const keep = matcher(filter);
    const sub = this.client.subscribeToAll({ fromPosition: position > 0 ? toPosition(position) : START, filter: serverFilter(filter) });
    return this.waitOn(sub, ({ event }) => !!event && !isSystem(event) && keep(event) && positionOf(event) > position, timeoutMs);
  }

  /** A short-lived native subscription used only as a signal; always unsubscribed, on a hit or on timeout. */
  private waitOn<E>(sub: EsdbSubscriptionLike<E>, isNew: (e: E) => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        sub.unsubscribe().catch(() => undefined);
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      timer.unref?.();
      sub.on('data', (e) => {
        try {
          if (!isNew(e)) return;
        } catch {
          /* a malformed event wakes the reader too: its next read reports the problem */
        }
        finish();
      });
      // A dropped subscription ends the wait early; the caller's next read surfaces the cause.
      sub.on('error', finish);
    });
  }
}

function toEventData(e: NewEvent): EventData {
  // The server keys idempotency on this id (G3), so it must be passed through, never generated.
  if (!UUID.test(e.id)) throw new Error(`EventStoreDB needs UUID event ids; event "${e.type}" has id "${e.id}"`);
  return jsonEvent({ id: e.id, type: e.type, data: e.data as JSONType, metadata: e.metadata as unknown as JSONType });
}

/** Revisions and positions are bigints on the wire and numbers in the port: refuse, never round. */
export function toNumber(value: bigint, what: string): number {
  const n = Number(value);
  if (Number.isSafeInteger(n)) return n;
  throw new Error(`EventStoreDB ${what} ${value.toString()} is not a safe JS integer; this adapter cannot represent it`);
}

function toPosition(n: number): Position {
  return { commit: BigInt(n), prepare: BigInt(n) };
}

/**
 * The commit position alone orders `$all`: gRPC appends are implicit transactions where it is the event's own log
 * position, whereas `prepare` differs by server version (some report the batch's first record). Events of a legacy
 * TCP explicit transaction would share one commit position; this adapter does not support such logs.
 */
function positionOf(event: Pick<RawEvent, 'id' | 'position'>, fallback?: bigint): number {
  const commit = event.position?.commit;
  if (commit !== undefined && commit < NO_POSITION) return toNumber(commit, 'commit position');
  if (fallback !== undefined && fallback < NO_POSITION) return toNumber(fallback, 'commit position');
  throw new Error(`EventStoreDB returned event ${event.id} without a position (server older than 22.6?)`);
}

function reportedPosition(p: Position | undefined): number | undefined {
  return p && p.commit < BigInt(Number.MAX_SAFE_INTEGER) ? Number(p.commit) : undefined;
}

function isSystem(e: Named): boolean {
  return e.type.startsWith('$') || e.streamId.startsWith('$');
}

/** Exact matching: the server filters below work on prefixes, which would let `catalog-1` or `RenamedTwice` through. */
function matcher(filter?: EventFilter): (e: Named) => boolean {
  const categories = filter?.categories?.length ? new Set(filter.categories) : undefined;
  const types = filter?.types?.length ? new Set(filter.types) : undefined;
  return (e) => (!categories || categories.has(categoryOf(e.streamId))) && (!types || types.has(e.type));
}

/** A subscription takes one server filter: the category prefix when there is one, the rest is checked in JS. */
function serverFilter(filter?: EventFilter): Filter {
  if (filter?.categories?.length) return streamNameFilter({ prefixes: filter.categories.map((c) => `${c}-`) });
  if (filter?.types?.length) return eventTypeFilter({ prefixes: [...filter.types] });
  return excludeSystemEvents();
}

function toRecorded(e: RawEvent, position: number): RecordedEvent {
  const { id, type, data, streamId } = e;
  const metadata = e.metadata as unknown as EventMetadata;
  return { id, type, data, metadata, streamId, revision: toNumber(e.revision, 'revision'), position, recordedAt: e.created.toISOString() };
}

function jsonSize(value: unknown): number {
  return value instanceof Uint8Array ? value.byteLength : (JSON.stringify(value) ?? '').length;
}
