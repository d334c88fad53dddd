import { EventEmitter } from 'node:events';
import { Client, Pool, PoolConfig } from 'pg';
import { DomainError } from '../../kernel/errors';
import { catchUpSubscription, SUBSCRIPTION_PAGE_BYTES } from '../catch-up-subscription';
import {
  AppendOptions,
  AppendResult,
  assertDistinctEventIds,
  ConcurrencyError,
  EventFilter,
  EventStore,
  ExpectedRevision,
  FencedError,
  ReadAllOptions,
  ReadStreamOptions,
  Subscription,
  SubscribeToAllOptions,
  SubscribeToStreamOptions,
  WaitForAppendOptions,
} from '../event-store.port';
import { categoryOf, NewEvent, RecordedEvent } from '../events';
import { isConnectionError, storeUnavailable } from '../../kernel/store-errors';
import { ES_CHANNEL, SCHEMA_SQL } from './postgres-schema';

/** What one commit added, as told by its NOTIFY (types and categories absent when the payload was too long). */
interface Appended {
  readonly after: number;
  readonly head: number;
  readonly types?: readonly string[];
  readonly categories?: readonly string[];
}

interface EventRow {
  position: string;
  stream_id: string;
  revision: string;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  recorded_ms: string;
}

interface Pending {
  readonly json: { s: string; x: string; e: { i: string; t: string; d: string; m: string }[]; c?: { s: string; r: number; t: readonly string[] } };
  readonly streamId: string;
  readonly expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

type Outcome =
  | { ok: true; next: number; position: number; appended: boolean; count: number }
  | { conflict: true; actual: number | null }
  | { fenced: true }
  | { failed: string; code: string };

export interface PostgresEventStoreOptions {
  /** Connections in the pool (appends use one at a time per process; reads and subscriptions the rest). */
  readonly poolSize?: number;
  /** How often a waiter re-reads the head when no NOTIFY came (a lost LISTEN connection, a missed wake-up). */
  readonly pollMs?: number;
  readonly log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
}

/** Events the shared tail keeps (about the last few seconds of a busy log), and read per query. */
const TAIL_EVENTS = 5_000;
const TAIL_PAGE = 1_000;
/** And in bytes of stored JSON, as the SQLite store's tail (documents of tens of MB are one event each). */
const TAIL_BYTES = 16 * 2 ** 20;
const TAIL_PAGE_BYTES = 8 * 2 ** 20;

const COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata, floor(extract(epoch from recorded_at) * 1000)::bigint AS recorded_ms';

/**
 * The event store on PostgreSQL (issue 47; docs/events.md "PostgreSQL: commit order"). One table of events with a
 * gapless global position assigned under a commit lock (postgres-schema.ts), so readers see positions in commit
 * order; per-stream expected revisions and idempotent ids as every adapter (G1–G4); catch-up subscriptions read the
 * table in pages and wait on LISTEN/NOTIFY (a poll behind it), the table being the truth (G5). Appends made while one
 * is in flight go together in the next call (one transaction, one commit), each in its own subtransaction.
 */
export class PostgresEventStore implements EventStore {
  private readonly pool: Pool;
  private readonly notifier = new EventEmitter().setMaxListeners(0);
  private queue: Pending[] = [];
  private flushing = false;
  private flushScheduled = false;
  /** The log's recent events, read once for every projection (`shared` reads); see `sharedRead`. */
  private tail: RecordedEvent[] = [];
  private tailChars: number[] = [];
  private tailBytes = 0;
  /** The tail holds every event in (tailStart, tailEnd]. */
  private tailStart = 0;
  private tailEnd = 0;
  private extending?: Promise<void>;
  private listener?: Client;
  private listening?: Promise<void>;
  private closed = false;
  private reconnectTimer?: NodeJS.Timeout;
  private knownHead = 0;

  private constructor(
    private readonly config: PoolConfig,
    private readonly options: PostgresEventStoreOptions,
  ) {
    this.pool = new Pool({ ...config, max: options.poolSize ?? 10 });
    // An idle client's connection dropping (the server restarting) must not crash the process: the pool replaces it.
    this.pool.on('error', (e) => options.log?.('warn', 'event store connection lost', { err: redact(e.message) }));
  }

  /** Connects, creates the tables and function if absent (under a lock: processes may start together), starts listening. */
  static async connect(url: string, options: PostgresEventStoreOptions = {}): Promise<PostgresEventStore> {
    const store = new PostgresEventStore({ connectionString: url, connectionTimeoutMillis: 10_000 }, options);
    try {
      await store.migrate();
      store.knownHead = await store.headPosition();
      store.tailStart = store.tailEnd = store.knownHead;
      store.listen();
    } catch (e) {
      await store.pool.end().catch(() => undefined);
      throw unavailable(e);
    }
    return store;
  }

  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(4707474000)');
      await client.query(SCHEMA_SQL);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }

  /** A dedicated connection LISTENing for appends; reconnected with backoff while the server is away. */
  private listen(delayMs = 0): void {
    if (this.closed) return;
    this.reconnectTimer = setTimeout(() => {
      this.listening = (async () => {
        const client = new Client(this.config);
        client.on('error', () => undefined);
        client.on('end', () => {
          if (this.listener === client) this.listener = undefined;
          if (!this.closed) this.listen(Math.min(Math.max(delayMs * 2, 250), 5_000));
        });
        client.on('notification', (m) => {
          if (m.channel !== ES_CHANNEL || !m.payload) return;
          try {
            const appended = JSON.parse(m.payload) as Appended;
            this.knownHead = Math.max(this.knownHead, appended.head);
            this.notifier.emit('appended', appended);
          } catch {
            // A payload we cannot read: the poll finds the append.
          }
        });
        try {
          await client.connect();
          await client.query(`LISTEN ${ES_CHANNEL}`);
          if (this.closed) {
            await client.end();
            return;
          }
          this.listener = client;
          // Appends made while no one listened: wake every waiter to look (the table is the truth).
          this.notifier.emit('appended', { after: 0, head: Number.MAX_SAFE_INTEGER } satisfies Appended);
        } catch {
          await client.end().catch(() => undefined);
        }
      })();
    }, delayMs);
    this.reconnectTimer.unref();
  }

  async append(streamId: string, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    assertDistinctEventIds(streamId, events);
    if (this.closed) throw new DomainError('unavailable', 'event_store.closed', 'The event store is closed');
    const expected = options.expectedRevision ?? 'any';
    const condition = options.condition;
    return new Promise((resolve, reject) => {
      this.queue.push({
        json: {
          s: streamId,
          x: String(expected),
          e: events.map((e) => ({ i: e.id, t: e.type, d: JSON.stringify(e.data), m: JSON.stringify(e.metadata) })),
          ...(condition ? { c: { s: condition.streamId, r: condition.afterRevision, t: condition.types } } : {}),
        },
        streamId,
        expected,
        resolve,
        reject,
      });
      // The first append of a burst waits for the end of this turn of the loop, so the appends made in it go together
      // (one round trip, one commit) rather than the first alone and the rest after it.
      if (!this.flushing && !this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => {
          this.flushScheduled = false;
          if (!this.flushing) void this.flush();
        });
      }
    });
  }

  /** Sends what is queued as one group; whatever queues meanwhile goes in the next. */
  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length) {
        const group = this.queue.splice(0, 500);
        let result: { outcomes: Outcome[] };
        try {
          const { rows } = await this.pool.query<{ r: { outcomes: Outcome[] } }>('SELECT es_append_group($1::json) AS r', [JSON.stringify(group.map((p) => p.json))]);
          result = rows[0].r;
        } catch (e) {
          const error = unavailable(e);
          for (const p of group) p.reject(error);
          continue;
        }
        group.forEach((p, i) => {
          const o = result.outcomes[i];
          if ('ok' in o) {
            this.knownHead = Math.max(this.knownHead, Number(o.position));
            p.resolve({ nextExpectedRevision: Number(o.next), position: Number(o.position) });
          } else if ('conflict' in o) p.reject(new ConcurrencyError(p.streamId, p.expected, o.actual === null ? 'no_stream' : Number(o.actual)));
          else if ('fenced' in o) p.reject(new FencedError(p.streamId, p.json.c!.s));
          else p.reject(Object.assign(new Error(`append to ${p.streamId} failed: ${o.failed}`), { code: o.code }));
        });
      }
    } finally {
      this.flushing = false;
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision;
    const limit = options.maxCount ?? null;
    const rows = backwards
      ? await this.query(`SELECT ${COLUMNS} FROM es_events WHERE stream_id = $1 AND revision <= $2 ORDER BY revision DESC LIMIT $3`, [
          streamId,
          from === undefined || from === 'end' ? Number.MAX_SAFE_INTEGER : from === 'start' ? 0 : from,
          limit,
        ])
      : await this.query(`SELECT ${COLUMNS} FROM es_events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision ASC LIMIT $3`, [
          streamId,
          from === undefined || from === 'start' ? 0 : from === 'end' ? Number.MAX_SAFE_INTEGER : from,
          limit,
        ]);
    return rows.map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    if (options.shared && options.direction !== 'backwards' && (options.after ?? 0) >= this.tailStart) return this.sharedRead(options);
    const backwards = options.direction === 'backwards';
    const params: unknown[] = [backwards ? (options.before ?? Number.MAX_SAFE_INTEGER) : (options.after ?? 0)];
    const where = [backwards ? 'position < $1' : 'position > $1', ...filterClauses(options.filter, params)];
    params.push(options.maxCount ?? null);
    const order = backwards ? 'DESC' : 'ASC';
    const limit = `$${params.length}`;
    if (options.maxBytes === undefined || options.maxBytes === Infinity) {
      return (await this.query(`SELECT ${COLUMNS} FROM es_events WHERE ${where.join(' AND ')} ORDER BY position ${order} LIMIT ${limit}`, params)).map(toRecorded);
    }
    // The byte bound: sizes from the stored lengths (octet_length reads a value's header, not the value), so rows past
    // the bound are never fetched; the row that crosses it is the last one returned (the first one always is).
    params.push(options.maxBytes);
    const sql = `SELECT ${COLUMNS} FROM (
        SELECT position, sum(octet_length(data) + octet_length(metadata)) OVER (ORDER BY position ${order}) AS run,
               octet_length(data) + octet_length(metadata) AS size
          FROM (SELECT position, data, metadata FROM es_events WHERE ${where.join(' AND ')} ORDER BY position ${order} LIMIT ${limit}) page
      ) sized JOIN es_events USING (position)
      WHERE sized.run - sized.size < $${params.length}
      ORDER BY position ${order}`;
    return (await this.query(sql, params)).map(toRecorded);
  }

  /**
   * A read by one of the callers that only read what they get (the projections, `shared`), served from the tail of the
   * log this process keeps: each new stretch of the log is read once, unfiltered, however many projections then take
   * their types from it (forty projections each querying for their own types was forty round trips per wake-up). The
   * tail holds every event of its range: positions commit in order (the commit lock), so reading "after the tail's end"
   * can never miss one that commits later below it. Bounded to TAIL_EVENTS events and TAIL_BYTES; a reader behind it reads the table.
   * It is as fresh as what this process has heard of the log (a NOTIFY, its own appends, a head read: a projection reads
   * after `waitForAppend` woke it, which is one of these): it never skips an event, it may end a little short of the head.
   */
  private async sharedRead(options: ReadAllOptions): Promise<RecordedEvent[]> {
    const after = options.after ?? 0;
    if (this.knownHead > this.tailEnd || after >= this.tailEnd) await this.extendTail();
    const maxCount = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const maxBytes = options.maxBytes ?? Infinity;
    const types = options.filter?.types?.length ? new Set(options.filter.types) : undefined;
    const categories = options.filter?.categories?.length ? new Set(options.filter.categories) : undefined;
    const out: RecordedEvent[] = [];
    let chars = 0;
    // The tail may have moved on (trimmed) while this reader waited: behind it, the table.
    if (after < this.tailStart) return this.readAll({ ...options, shared: false });
    let i = lowerBound(this.tail, after);
    for (; i < this.tail.length && out.length < maxCount && chars < maxBytes; i++) {
      const e = this.tail[i];
      if (types && !types.has(e.type)) continue;
      if (categories && !categories.has(categoryOf(e.streamId))) continue;
      out.push(e);
      chars += this.tailChars[i];
    }
    return out;
  }

  /** Reads what the log holds after the tail's end (one query however many readers ask at once). */
  private extendTail(): Promise<void> {
    this.extending ??= (async () => {
      try {
        // Sizes from the stored lengths first, so a page stops at TAIL_PAGE_BYTES (the row crossing it included) without
        // fetching the rows past it.
        const rows = await this.query<EventRow & { chars: string }>(
          `SELECT ${COLUMNS}, sized.size AS chars FROM (
             SELECT position, octet_length(data) + octet_length(metadata) AS size,
                    sum(octet_length(data) + octet_length(metadata)) OVER (ORDER BY position) AS run
               FROM (SELECT position, data, metadata FROM es_events WHERE position > $1 ORDER BY position LIMIT ${TAIL_PAGE}) page
           ) sized JOIN es_events USING (position) WHERE sized.run - sized.size < ${TAIL_PAGE_BYTES} ORDER BY position`,
          [this.tailEnd],
        );
        for (const row of rows) {
          this.tail.push(toRecorded(row));
          this.tailChars.push(Number(row.chars));
          this.tailBytes += Number(row.chars);
        }
        if (rows.length) this.tailEnd = Number(rows[rows.length - 1].position);
        this.knownHead = Math.max(this.knownHead, this.tailEnd);
        // Past either bound the oldest go (the newest event always stays, whatever its size).
        let over = Math.max(0, this.tail.length - TAIL_EVENTS);
        let dropped = this.tailChars.slice(0, over).reduce((a, b) => a + b, 0);
        while (over < this.tail.length - 1 && this.tailBytes - dropped > TAIL_BYTES) dropped += this.tailChars[over++];
        if (over > 0) {
          this.tailBytes -= dropped;
          this.tailStart = this.tail[over - 1].position;
          this.tail.splice(0, over);
          this.tailChars.splice(0, over);
        }
      } finally {
        this.extending = undefined;
      }
    })();
    return this.extending;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    const types = nonEmpty(options.filter?.types);
    const categories = nonEmpty(options.filter?.categories);
    return catchUpSubscription(
      {
        readPage: (after, pageSize) => this.readAll({ after, maxCount: pageSize, maxBytes: SUBSCRIPTION_PAGE_BYTES, filter: options.filter }),
        waitForMore: (after, ms) => this.waitForAppend(after, ms, { types, categories }),
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
        waitForMore: async (_after, ms) => this.waitForAppend(await this.headPosition(), ms),
        head: async () => {
          const rows = await this.query<{ revision: string }>('SELECT revision FROM es_streams WHERE stream_id = $1', [streamId]);
          return rows.length ? Number(rows[0].revision) : -1;
        },
        cursorOf: (e) => e.revision,
      },
      options.afterRevision ?? -1,
    );
  }

  async headPosition(): Promise<number> {
    const rows = await this.query<{ position: string }>('SELECT position FROM es_events ORDER BY position DESC LIMIT 1', []);
    const head = rows.length ? Number(rows[0].position) : 0;
    this.knownHead = Math.max(this.knownHead, head);
    return head;
  }

  waitForAppend(position: number, timeoutMs: number, options: WaitForAppendOptions = {}): Promise<void> {
    if (this.knownHead > position || this.closed) return Promise.resolve();
    const wanted = options.types ? new Set(options.types) : undefined;
    const wantedCategories = options.categories ? new Set(options.categories) : undefined;
    let known = position;
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        clearInterval(poll);
        this.notifier.off('appended', onAppend);
        resolve();
      };
      const onAppend = ({ after, head, types, categories }: Appended): void => {
        if (head <= known) return;
        const unwanted = (wanted && types && !types.some((t) => wanted.has(t))) || (wantedCategories && categories && !categories.some((c) => wantedCategories.has(c)));
        if (unwanted && after <= known) {
          known = head;
          options.onSkipped?.(head);
          return;
        }
        done();
      };
      // Behind NOTIFY: a poll of the head, for a listener that was down when an append committed.
      const poll = setInterval(() => {
        if (this.closed) return done();
        this.headPosition().then(
          (head) => head > known && done(),
          () => undefined,
        );
      }, this.options.pollMs ?? 1_000);
      poll.unref();
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      this.notifier.on('appended', onAppend);
    });
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1', []);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    // Appends already queued are sent before the pool closes.
    while (this.flushing || this.queue.length) await new Promise((r) => setTimeout(r, 5));
    await this.listening?.catch(() => undefined);
    await this.listener?.end().catch(() => undefined);
    this.notifier.emit('appended', { after: 0, head: Number.MAX_SAFE_INTEGER } satisfies Appended);
    await this.pool.end();
  }

  /** A query through the pool; a lost or refused connection is a 503 (`event_store.unavailable`), not a 500. */
  private async query<R extends object = EventRow>(sql: string, params: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (e) {
      throw unavailable(e);
    }
  }
}

function filterClauses(filter: EventFilter | undefined, params: unknown[]): string[] {
  const clauses: string[] = [];
  if (filter?.categories?.length) {
    params.push(filter.categories);
    clauses.push(`category = ANY($${params.length}::text[])`);
  }
  if (filter?.types?.length) {
    params.push(filter.types);
    clauses.push(`type = ANY($${params.length}::text[])`);
  }
  return clauses;
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    streamId: row.stream_id,
    revision: Number(row.revision),
    position: Number(row.position),
    recordedAt: new Date(Number(row.recorded_ms)).toISOString(),
  };
}

/** Index of the first event after `position` in a list sorted by position. */
function lowerBound(events: readonly RecordedEvent[], position: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid].position <= position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function nonEmpty(values: readonly string[] | undefined): readonly string[] | undefined {
  return values?.length ? values : undefined;
}

/** The connection string's password never reaches a log or an answer. */
function redact(message: string): string {
  return message.replace(/(postgres(?:ql)?:\/\/[^:/@\s]*:)[^@\s]*@/gi, '$1***@');
}

/** Connection failures become `unavailable` (503 with Retry-After at the edge); anything else passes through. */
function unavailable(e: unknown): unknown {
  if (e instanceof DomainError || !isConnectionError(e)) return e;
  // The driver's words (an address, a port) stay out of the answer; the cause is kept for the logs.
  const error = storeUnavailable('event_store', 'The event store (PostgreSQL)');
  return Object.assign(error, { cause: redactedCause(e) });
}

function redactedCause(e: unknown): Error {
  const error = e as Error & { code?: string };
  return Object.assign(new Error(redact(String(error.message))), error.code ? { code: error.code } : {});
}
