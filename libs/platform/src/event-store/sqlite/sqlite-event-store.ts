import type { Statement } from 'better-sqlite3';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { catchUpSubscription } from '../catch-up-subscription';
import {
  AppendOptions,
  AppendResult,
  assertDistinctEventIds,
  ConcurrencyError,
  EventFilter,
  EventStore,
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
}

interface EventRow {
  position: number;
  stream_id: string;
  revision: number;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  recorded_at: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS es_events (
  position    INTEGER PRIMARY KEY AUTOINCREMENT,
  stream_id   TEXT    NOT NULL,
  revision    INTEGER NOT NULL,
  event_id    TEXT    NOT NULL,
  type        TEXT    NOT NULL,
  category    TEXT    NOT NULL,
  data        TEXT    NOT NULL,
  metadata    TEXT    NOT NULL,
  recorded_at INTEGER NOT NULL,
  UNIQUE (stream_id, revision),
  UNIQUE (stream_id, event_id)
);
CREATE INDEX IF NOT EXISTS es_events_category ON es_events (category, position);
CREATE INDEX IF NOT EXISTS es_events_type ON es_events (type, position);
CREATE TABLE IF NOT EXISTS es_streams (
  stream_id TEXT PRIMARY KEY,
  revision  INTEGER NOT NULL
) WITHOUT ROWID;
`;

/**
 * The embedded event store (better-sqlite3, WAL). AUTOINCREMENT positions are never reused (G4); the revision
 * check and the inserts run in one IMMEDIATE transaction (G1, G2); UNIQUE(stream_id, event_id) backs the
 * idempotency table of G3 permanently rather than through a bounded cache.
 */
export class SqliteEventStore implements EventStore {
  private readonly insert: Statement;
  private readonly streamRevision: Statement;
  private readonly upsertStream: Statement;
  private readonly findIds: Statement;
  private readonly maxPosition: Statement;
  private head: number;
  private readonly queue: {
    streamId: string;
    events: readonly NewEvent[];
    options: AppendOptions;
    resolve: (r: AppendResult) => void;
    reject: (e: unknown) => void;
  }[] = [];

  constructor(private readonly sqlite: SqliteDatabase) {
    const db = sqlite.db;
    db.exec(SCHEMA);
    this.insert = db.prepare(
      `INSERT INTO es_events (stream_id, revision, event_id, type, category, data, metadata, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.streamRevision = db.prepare('SELECT revision FROM es_streams WHERE stream_id = ?').pluck();
    this.upsertStream = db.prepare(
      'INSERT INTO es_streams (stream_id, revision) VALUES (?, ?) ON CONFLICT (stream_id) DO UPDATE SET revision = excluded.revision',
    );
    this.findIds = db.prepare(
      `SELECT event_id, revision, position FROM es_events WHERE stream_id = ? AND event_id IN (SELECT value FROM json_each(?))`,
    );
    this.maxPosition = db.prepare('SELECT COALESCE(MAX(position), 0) FROM es_events').pluck();
    this.head = this.maxPosition.get() as number;
  }

  /**
   * Group commit: appends made while the event loop is busy are queued and committed together in one
   * transaction (one fsync), each inside its own savepoint, so one append's concurrency error rolls back only
   * that append. Order and the per-stream revision checks are exactly as if they had run one by one.
   */
  append(streamId: string, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ streamId, events, options, resolve, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const items = this.queue.splice(0);
    const outcomes: ({ ok: AppendResult & { appended: boolean } } | { error: unknown })[] = [];
    try {
      if (items.length === 1) {
        // Alone in its group: the transaction itself is the unit of rollback, no savepoint needed.
        const [item] = items;
        try {
          outcomes.push({ ok: this.sqlite.transaction(() => this.appendChecked(item.streamId, item.events, item.options)) });
        } catch (error) {
          outcomes.push({ error });
        }
      } else {
        this.sqlite.transaction(() => {
          for (const item of items) {
            try {
              outcomes.push({ ok: this.appendInSavepoint(item.streamId, item.events, item.options) });
            } catch (error) {
              outcomes.push({ error });
            }
          }
        });
      }
    } catch (error) {
      // The commit itself failed (disk full, I/O error): nothing of the group is stored.
      items.forEach((item) => item.reject(error));
      return;
    }
    let head = 0;
    let after = Number.MAX_SAFE_INTEGER;
    const types = new Set<string>();
    items.forEach((item, i) => {
      const outcome = outcomes[i];
      if ('error' in outcome) return item.reject(outcome.error);
      if (outcome.ok.appended) {
        head = Math.max(head, outcome.ok.position);
        after = Math.min(after, outcome.ok.position - item.events.length);
        item.events.forEach((e) => types.add(e.type));
      }
      item.resolve({ nextExpectedRevision: outcome.ok.nextExpectedRevision, position: outcome.ok.position });
    });
    if (head > 0) this.notifyAppended({ after, head, types });
  }

  /**
   * Tells in-process waiters what a commit added: positions (after, head], contiguous because the commit held
   * the write lock, and the event types among them.
   */
  private notifyAppended(appended: Appended): void {
    this.sqlite.notifier.emit('appended', appended);
  }

  /** Synchronous append in its own transaction, for callers that write many events at once (imports, benchmarks). */
  appendSync(streamId: string, events: readonly NewEvent[], options: AppendOptions = {}): AppendResult & { appended: boolean } {
    const result = this.sqlite.transaction(() => this.appendChecked(streamId, events, options));
    if (result.appended) this.notifyAppended({ after: result.position - events.length, head: result.position, types: new Set(events.map((e) => e.type)) });
    return result;
  }

  /** A nested better-sqlite3 transaction is a SAVEPOINT: a throw rolls back this append only. */
  private appendInSavepoint(streamId: string, events: readonly NewEvent[], options: AppendOptions): AppendResult & { appended: boolean } {
    return this.sqlite.db.transaction(() => this.appendChecked(streamId, events, options))();
  }

  /** Checks and writes, inside a transaction the caller holds; throws before writing anything. */
  private appendChecked(streamId: string, events: readonly NewEvent[], options: AppendOptions): AppendResult & { appended: boolean } {
    assertDistinctEventIds(streamId, events);
    const expected = options.expectedRevision ?? 'any';
    const current = this.streamRevision.get(streamId) as number | undefined;
    if (events.length > 0) {
      const found = this.findIds.all(streamId, JSON.stringify(events.map((e) => e.id))) as {
        event_id: string;
        revision: number;
        position: number;
      }[];
      if (found.length > 0) return { ...this.idempotentResult(streamId, events, found, expected, current), appended: false };
    }
    this.checkExpected(streamId, expected, current);
    let revision = current ?? -1;
    const now = Date.now();
    let position = this.head;
    for (const e of events) {
      revision += 1;
      const info = this.insert.run(streamId, revision, e.id, e.type, categoryOf(streamId), JSON.stringify(e.data), JSON.stringify(e.metadata), now);
      position = Number(info.lastInsertRowid);
    }
    if (events.length > 0) {
      this.upsertStream.run(streamId, revision);
      this.head = position;
    }
    return { nextExpectedRevision: revision, position, appended: events.length > 0 };
  }

  /** G3: all ids already stored (in place, for an exact expectation) is a no-op; a partial match is an error. */
  private idempotentResult(
    streamId: string,
    events: readonly NewEvent[],
    found: { event_id: string; revision: number; position: number }[],
    expected: AppendOptions['expectedRevision'],
    current: number | undefined,
  ): AppendResult {
    const actual = current ?? 'no_stream';
    if (found.length !== events.length) throw new ConcurrencyError(streamId, expected ?? 'any', actual);
    const byId = new Map(found.map((f) => [f.event_id, f]));
    const first = expected === 'no_stream' ? 0 : typeof expected === 'number' ? expected + 1 : undefined;
    if (first !== undefined) {
      events.forEach((e, i) => {
        if (byId.get(e.id)?.revision !== first + i) throw new ConcurrencyError(streamId, expected ?? 'any', actual);
      });
    }
    const last = byId.get(events[events.length - 1].id)!;
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  private checkExpected(streamId: string, expected: NonNullable<AppendOptions['expectedRevision']>, current: number | undefined): void {
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && current === undefined) ||
      (expected === 'stream_exists' && current !== undefined) ||
      (typeof expected === 'number' && current === expected);
    if (!ok) throw new ConcurrencyError(streamId, expected, current ?? 'no_stream');
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
    const { clause, params } = filterClause(options.filter);
    const sql = backwards
      ? `SELECT * FROM es_events WHERE position < ? ${clause} ORDER BY position DESC LIMIT ?`
      : `SELECT * FROM es_events WHERE position > ? ${clause} ORDER BY position ASC LIMIT ?`;
    const bound = backwards ? (options.before ?? Number.MAX_SAFE_INTEGER) : (options.after ?? 0);
    return (this.stmt(sql).all(bound, ...params, options.maxCount ?? -1) as EventRow[]).map(toRecorded);
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    return catchUpSubscription(
      {
        readPage: async (after, pageSize) => this.readAllSync({ after, maxCount: pageSize, filter: options.filter }),
        waitForMore: (after, ms) => this.waitForAppend(after, ms),
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
    // Highest position up to which the caller is known to have nothing to read.
    let known = position;
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        clearInterval(poll);
        this.sqlite.notifier.off('appended', onAppend);
        resolve();
      };
      const onAppend = ({ after, head, types }: Appended): void => {
        if (head <= known) return;
        // A commit right after what the caller has seen, holding none of its types: pass over it.
        if (wanted && after <= known && ![...types].some((t) => wanted.has(t))) {
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

  async close(): Promise<void> {
    /* the SqliteDatabase provider owns the connection */
  }

  private stmt(sql: string): Statement {
    return this.sqlite.statement(sql);
  }
}

function filterClause(filter: EventFilter | undefined): { clause: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  if (filter?.categories?.length) {
    parts.push(`category IN (${filter.categories.map(() => '?').join(',')})`);
    params.push(...filter.categories);
  }
  if (filter?.types?.length) {
    parts.push(`type IN (${filter.types.map(() => '?').join(',')})`);
    params.push(...filter.types);
  }
  return { clause: parts.length ? `AND ${parts.join(' AND ')}` : '', params };
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    streamId: row.stream_id,
    revision: row.revision,
    position: row.position,
    recordedAt: new Date(row.recorded_at).toISOString(),
  };
}
