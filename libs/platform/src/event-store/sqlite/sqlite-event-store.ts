import type { Statement } from 'better-sqlite3';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { catchUpSubscription, SUBSCRIPTION_PAGE_BYTES } from '../catch-up-subscription';
import { encodeEvents, GroupOutcome, PendingAppend, SqliteAppender } from './sqlite-appender';
import { decodeWithin, EventRow, filterClause, SCHEMA, toRecorded } from './sqlite-event-rows';
import { RecentEvents } from './sqlite-recent-events';
import { SqliteWriter } from './sqlite-writer';
import {
  AppendOptions,
  AppendResult,
  assertDistinctEventIds,
  ConcurrencyError,
  EventStore,
  FencedError,
  ReadAllOptions,
  ReadStreamOptions,
  Subscription,
  SubscribeToAllOptions,
  SubscribeToStreamOptions,
  WaitForAppendOptions,
} from '../event-store.port';
import { categoryOf, NewEvent, RecordedEvent } from '../events';

/** What one commit added, as told to in-process waiters. */
interface Appended {
  /** The position before the commit's first event. */
  readonly after: number;
  readonly head: number;
  readonly types: ReadonlySet<string>;
  /** The categories of the streams written. */
  readonly categories: ReadonlySet<string>;
}

export interface SqliteEventStoreOptions {
  /**
   * Where appends commit: `inline` (the default) on the caller's connection, grouped; `thread` on a writer thread
   * with its own connection, so the event loop never waits on a commit's fsync. Give the store a file of its own
   * (`events.db`): anything else the main connection writes in the same file waits for the writer's lock in
   * SQLite's busy handler, on the event loop (EVENT_STORE_WRITER, docs/architecture.md). ':memory:' is always inline
   * (another connection cannot open it). `auto`: the writer thread, except that a lone append made while the thread
   * has nothing in flight commits inline (a single durable answer then pays no hop to the thread and back, and the
   * thread's connection, idle, holds no lock the inline commit could wait for).
   */
  readonly writer?: 'thread' | 'inline' | 'auto';
}

/**
 * The embedded event store (better-sqlite3, WAL). AUTOINCREMENT positions are never reused (G4); the revision
 * check and the inserts run in one IMMEDIATE transaction (G1, G2); UNIQUE(stream_id, event_id) backs the
 * idempotency table of G3 permanently rather than through a bounded cache (sqlite-appender.ts). Appends commit on
 * a writer thread; reads stay on the main connection, which sees each commit once it is acknowledged (WAL).
 */
export class SqliteEventStore implements EventStore {
  private readonly streamRevision: Statement;
  private readonly maxPosition: Statement;
  private head: number;
  private readonly appender: SqliteAppender;
  private readonly writer: SqliteWriter | undefined;
  private readonly inline: { item: PendingAppend; settle: (r: GroupOutcome, index: number) => void }[] = [];
  private readonly recent = new RecentEvents();
  private readonly commitObservers = new Set<(streams: readonly string[]) => void>();

  constructor(
    private readonly sqlite: SqliteDatabase,
    options: SqliteEventStoreOptions = {},
  ) {
    const db = sqlite.db;
    db.exec(SCHEMA);
    this.appender = new SqliteAppender(db, (fn) => sqlite.transaction(fn));
    this.streamRevision = db.prepare('SELECT revision FROM es_streams WHERE stream_id = ?').pluck();
    this.maxPosition = db.prepare('SELECT COALESCE(MAX(position), 0) FROM es_events').pluck();
    this.head = this.maxPosition.get() as number;
    const path = sqlite.options.path;
    const writer = options.writer ?? 'inline';
    if (writer !== 'inline' && path !== ':memory:' && path !== '') {
      this.writer = new SqliteWriter(
        { path, synchronous: sqlite.options.synchronous ?? 'FULL' },
        (items, result) => this.notifyGroup(items, result),
        writer === 'auto' ? (items) => this.appender.commit(items) : undefined,
      );
      sqlite.handOverCheckpoints();
      // Closing the database closes the writer too, after it has committed every append sent to it.
      sqlite.onClose(() => void this.writer!.close());
    }
  }

  /**
   * Group commit: appends made while a commit is under way (or in the same turn of the loop) are committed
   * together, one transaction and one fsync, each in its own savepoint (sqlite-appender.ts). The promise resolves
   * once the commit is durable.
   */
  async append(streamId: string, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    assertDistinctEventIds(streamId, events);
    const item = { streamId, events: encodeEvents(events), options };
    const { result, index } = this.writer ? await this.writer.submit(item) : await this.submitInline(item);
    if ('failed' in result) throw storeError(result.failed);
    const outcome = result.outcomes[index];
    if ('conflict' in outcome) throw new ConcurrencyError(outcome.conflict.streamId, outcome.conflict.expected, outcome.conflict.actual);
    if ('fenced' in outcome) throw new FencedError(outcome.fenced.streamId, outcome.fenced.fenceStreamId);
    if ('failed' in outcome) throw storeError(outcome.failed);
    return { nextExpectedRevision: outcome.ok.nextExpectedRevision, position: outcome.ok.position };
  }

  private submitInline(item: PendingAppend): Promise<{ result: GroupOutcome; index: number }> {
    return new Promise((resolve) => {
      this.inline.push({ item, settle: (result, index) => resolve({ result, index }) });
      if (this.inline.length === 1) setImmediate(() => this.flushInline());
    });
  }

  private flushInline(): void {
    const group = this.inline.splice(0);
    const items = group.map((g) => g.item);
    const result = this.appender.commit(items);
    this.notifyGroup(items, result);
    group.forEach((g, i) => g.settle(result, i));
  }

  /**
   * Tells in-process waiters what a commit added: positions (after, head], contiguous because the commit held
   * the write lock, and the event types among them.
   */
  private notifyGroup(items: readonly PendingAppend[], result: GroupOutcome): void {
    if ('failed' in result) return;
    if (this.commitObservers.size) {
      const streams = items.filter((_, i) => 'ok' in result.outcomes[i]).map((item) => item.streamId);
      for (const observe of this.commitObservers) observe(streams);
    }
    let head = 0;
    let after = Number.MAX_SAFE_INTEGER;
    const types = new Set<string>();
    const categories = new Set<string>();
    for (const [i, o] of result.outcomes.entries()) {
      if (!('ok' in o) || !o.ok.appended) continue;
      this.recent.add(items[i].streamId, items[i].events, o.ok.position, o.ok.nextExpectedRevision, o.ok.recordedAt);
      head = Math.max(head, o.ok.position);
      after = Math.min(after, o.ok.position - o.ok.count);
      o.ok.types.forEach((t) => types.add(t));
      categories.add(categoryOf(items[i].streamId));
    }
    if (head > 0) this.notifyAppended({ after, head, types, categories });
  }

  /**
   * Hears every commit of `append` (one transaction, one fsync) with the streams it wrote, for tests and benches
   * that count what an operation costs in commits. Returns the function that stops it.
   */
  observeCommits(listener: (streams: readonly string[]) => void): () => void {
    this.commitObservers.add(listener);
    return () => this.commitObservers.delete(listener);
  }

  private notifyAppended(appended: Appended): void {
    this.head = Math.max(this.head, appended.head);
    // Waiters (projections, subscriptions, the worker wing's runners) hear of the commit after the appenders' own
    // continuations have run: a turn about to answer is not held behind the reads and writes of the projections its
    // append woke (issue 43). Nothing is missed meanwhile: a waiter that starts waiting reads the head first.
    setImmediate(() => this.sqlite.notifier.emit('appended', appended));
  }

  /**
   * Synchronous append in its own transaction on the main connection, for callers that write many events at once
   * (imports, benchmarks); it waits on the commit's fsync, which `append` never makes the loop do.
   */
  appendSync(streamId: string, events: readonly NewEvent[], options: AppendOptions = {}): AppendResult & { appended: boolean } {
    assertDistinctEventIds(streamId, events);
    const encoded = encodeEvents(events);
    const result = this.sqlite.transaction(() => this.appender.appendChecked({ streamId, events: encoded, options }));
    if (result.appended) {
      this.recent.add(streamId, encoded, result.position, result.nextExpectedRevision, result.recordedAt);
      this.notifyAppended({ after: result.position - events.length, head: result.position, types: new Set(events.map((e) => e.type)), categories: new Set([categoryOf(streamId)]) });
    }
    return { nextExpectedRevision: result.nextExpectedRevision, position: result.position, appended: result.appended };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    return this.readStreamSync(streamId, options);
  }

  readStreamSync(streamId: string, options: ReadStreamOptions = {}): RecordedEvent[] {
    const backwards = options.direction === 'backwards';
    const limit = options.maxCount ?? -1;
    const from = options.fromRevision;
    const rows = backwards
      ? this.stmt('SELECT * FROM es_events WHERE stream_id = ? AND revision <= ? ORDER BY revision DESC LIMIT ?',
        ).all(streamId, from === undefined || from === 'end' ? Number.MAX_SAFE_INTEGER : from === 'start' ? 0 : from, limit)
      : this.stmt('SELECT * FROM es_events WHERE stream_id = ? AND revision >= ? ORDER BY revision ASC LIMIT ?').all(
          streamId,
          from === undefined || from === 'start' ? 0 : from === 'end' ? Number.MAX_SAFE_INTEGER : from,
          limit,
        );
    return (rows as EventRow[]).map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readAllSync(options);
  }

  readAllSync(options: ReadAllOptions = {}): RecordedEvent[] {
    const backwards = options.direction === 'backwards';
    const maxBytes = options.maxBytes ?? Infinity;
    if (options.shared && !backwards) {
      const maxCount = options.maxCount ?? -1;
      const after = options.after ?? 0;
      const recent = this.recent.read(after, maxCount, options.filter, maxBytes);
      const through = Math.max(after, this.recent.last);
      if (recent && (recent.events.length === maxCount || recent.chars >= maxBytes || this.currentHead() <= through)) return recent.events;
      if (recent) {
        const rest = { ...options, after: through, maxCount: maxCount < 0 ? -1 : maxCount - recent.events.length, maxBytes: maxBytes - recent.chars, shared: false };
        return recent.events.concat(this.readAllSync(rest));
      }
    }
    const types = options.filter?.types ?? [];
    if (!backwards && types.length > 1) return this.readTypes(types, options, maxBytes);
    const { clause, params } = filterClause(options.filter);
    const sql = backwards
      ? `SELECT * FROM es_events WHERE position < ? ${clause} ORDER BY position DESC LIMIT ?`
      : `SELECT * FROM es_events WHERE position > ? ${clause} ORDER BY position ASC LIMIT ?`;
    const bound = backwards ? (options.before ?? Number.MAX_SAFE_INTEGER) : (options.after ?? 0);
    return decodeWithin(this.stmt(sql).iterate(bound, ...params, options.maxCount ?? -1) as IterableIterator<EventRow>, maxBytes);
  }

  /**
   * A forwards read of several types. One statement with `type IN (…) ORDER BY position` sorts every matching event
   * after the position, data and all, before returning the first (SQLite's plan: the type index per type, then a
   * temporary b-tree for the order): each page of a projection's catch-up or rebuild read the whole rest of the log
   * (a rebuild over 300 documents of 1 MB: 22 pages, 30 s of reads). So the positions come first, each type's from
   * its index up to the page's count, merged in order (integers only), then the events one by one up to the bounds.
   */
  private readTypes(types: readonly string[], options: ReadAllOptions, maxBytes: number): RecordedEvent[] {
    const categories = options.filter?.categories ?? [];
    const inCategories = categories.length ? ` AND category IN (${categories.map(() => '?').join(',')})` : '';
    const branch = `SELECT position FROM (SELECT position FROM es_events WHERE type = ? AND position > ?${inCategories} ORDER BY position LIMIT ?)`;
    const sql = `${types.map(() => branch).join(' UNION ALL ')} ORDER BY position LIMIT ?`;
    const limit = options.maxCount ?? -1;
    const params = types.flatMap((t) => [t, options.after ?? 0, ...categories, limit]);
    const row = this.stmt('SELECT * FROM es_events WHERE position = ?');
    // One read transaction: one snapshot, and one lock instead of one per row.
    return this.sqlite.db.transaction(() => {
      const positions = this.stmt(sql).pluck().all(...params, limit) as number[];
      return decodeWithin((function* () {
        for (const position of positions) yield row.get(position) as EventRow;
      })(), maxBytes);
    })();
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    return catchUpSubscription(
      {
        readPage: async (after, pageSize) => this.readAllSync({ after, maxCount: pageSize, maxBytes: SUBSCRIPTION_PAGE_BYTES, filter: options.filter, shared: options.shared }),
        // A subscription to some types (the job, pipeline, schedule and connector runners) or categories (the durable
        // timers) is not woken, to read an empty page, by every append of others: six of them did that on each chat
        // answer's usage record, before its response was written.
        waitForMore: (after, ms) => this.waitForAppend(after, ms, { types: nonEmpty(options.filter?.types), categories: nonEmpty(options.filter?.categories) }),
        head: async () => this.currentHead(),
        cursorOf: (e) => e.position,
      },
      options.after ?? 0,
    );
  }

  subscribeToStream(streamId: string, options: SubscribeToStreamOptions = {}): Subscription {
    return catchUpSubscription(
      {
        readPage: async (after, pageSize) => this.readStreamSync(streamId, { fromRevision: after + 1, maxCount: pageSize }),
        waitForMore: async (_after, ms) => {
          const head = this.currentHead();
          await this.waitForAppend(head, ms);
        },
        head: async () => (this.streamRevision.get(streamId) as number | undefined) ?? -1,
        cursorOf: (e) => e.revision,
      },
      options.afterRevision ?? -1,
    );
  }

  async headPosition(): Promise<number> {
    return this.currentHead();
  }

  /** Reads the head from the file, so appends by other processes on the same file are seen. */
  currentHead(): number {
    this.head = this.maxPosition.get() as number;
    return this.head;
  }

  waitForAppend(position: number, timeoutMs: number, options: WaitForAppendOptions = {}): Promise<void> {
    if (this.currentHead() > position) return Promise.resolve();
    const wanted = options.types ? new Set(options.types) : undefined;
    const wantedCategories = options.categories ? new Set(options.categories) : undefined;
    // Highest position up to which the caller is known to have nothing to read.
    let known = position;
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        clearInterval(poll);
        this.sqlite.notifier.off('appended', onAppend);
        resolve();
      };
      const onAppend = ({ after, head, types, categories }: Appended): void => {
        if (head <= known) return;
        // A commit right after what the caller has seen, holding none of its types or none of its categories (no
        // event of it can match the filter, which asks both): pass over it.
        const unwanted = (wanted && ![...types].some((t) => wanted.has(t))) || (wantedCategories && ![...categories].some((c) => wantedCategories.has(c)));
        if (unwanted && after <= known) {
          known = head;
          options.onSkipped?.(head);
          return;
        }
        done();
      };
      // Appends made by another process on the same file carry no in-process signal: poll for them.
      const poll = setInterval(() => {
        if (!this.sqlite.isOpen || this.currentHead() > known) done();
      }, 50).unref();
      const timer = setTimeout(done, timeoutMs).unref();
      this.sqlite.notifier.on('appended', onAppend);
    });
  }


  async ping(): Promise<void> {
    this.maxPosition.get();
  }

  /** Waits until every append made so far is committed and the writer thread is gone; the connection is the SqliteDatabase's. */
  async close(): Promise<void> {
    await this.writer?.close();
  }

  private stmt(sql: string): Statement {
    return this.sqlite.statement(sql);
  }
}

/** A failure reported by the writer (a driver error on its thread), as an Error with the driver's code. */
function storeError(failed: { message: string; code?: string }): Error {
  return Object.assign(new Error(failed.message), failed.code ? { code: failed.code } : {});
}

function nonEmpty(values: readonly string[] | undefined): readonly string[] | undefined {
  return values?.length ? values : undefined;
}
