import type { Database, Statement } from 'better-sqlite3';
import { AppendOptions, AppendResult, ConcurrencyError, ExpectedRevision, FencedError } from '../event-store.port';
import { categoryOf, NewEvent } from '../events';

/**
 * An event with its data and metadata already JSON, as stored: encoded once on the main thread, so that neither the
 * hop to the writer thread (a structured clone of every object) nor the log's tail (sqlite-recent-events.ts) pays again.
 */
export interface EncodedEvent {
  readonly id: string;
  readonly type: string;
  readonly data: string;
  readonly metadata: string;
}

export function encodeEvents(events: readonly NewEvent[]): EncodedEvent[] {
  return events.map((e) => ({ id: e.id, type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(e.metadata) }));
}

/** One append of a group commit; its events' ids were checked distinct by the caller. */
export interface PendingAppend {
  readonly streamId: string;
  readonly events: readonly EncodedEvent[];
  readonly options: AppendOptions;
}

/**
 * An append's result; `count` and `types` describe what it added (nothing when `appended` is false), `recordedAt` the
 * time stored with its events.
 */
export type StoredAppend = AppendResult & { readonly appended: boolean; readonly count: number; readonly types: readonly string[]; readonly recordedAt: number };

/**
 * What became of one append: stored (or found stored, G3), a concurrency conflict, or a failure. Plain data, so
 * that it crosses from the writer thread to the main thread (an Error instance would lose its class).
 */
export type AppendOutcome =
  | { readonly ok: StoredAppend }
  | { readonly conflict: { readonly streamId: string; readonly expected: ExpectedRevision; readonly actual: number | 'no_stream' } }
  | { readonly fenced: { readonly streamId: string; readonly fenceStreamId: string } }
  | { readonly failed: { readonly message: string; readonly code?: string } };

/** The group as a whole could not commit (disk full, I/O error, busy past the timeout): none of it is stored. */
export type GroupOutcome = { readonly outcomes: readonly AppendOutcome[] } | { readonly failed: { readonly message: string; readonly code?: string } };

/**
 * The checks and inserts of the SQLite event store over one connection: the revision check and the inserts of an
 * append in one transaction (G1, G2), the idempotency table of G3 backed by UNIQUE(stream_id, event_id). Runs on
 * the writer thread (sqlite-writer-thread.ts) or, for in-memory databases, on the main thread.
 */
export class SqliteAppender {
  private readonly insert: Statement;
  private readonly streamRevision: Statement;
  private readonly upsertStream: Statement;
  private readonly findIds: Statement;
  private readonly maxPosition: Statement;
  private readonly conditionHit: Statement;

  /** `immediate` runs a function in an IMMEDIATE transaction at the durable synchronous level. */
  constructor(
    private readonly db: Database,
    private readonly immediate: <T>(fn: () => T) => T,
  ) {
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
    this.conditionHit = db.prepare('SELECT 1 FROM es_events WHERE stream_id = ? AND revision > ? AND type IN (SELECT value FROM json_each(?)) LIMIT 1').pluck();
  }

  /**
   * Group commit: the appends in one transaction (one fsync), each inside its own savepoint, so one append's
   * conflict rolls back only that append. Order and the per-stream revision checks are exactly as if they had
   * run one by one.
   */
  commit(items: readonly PendingAppend[]): GroupOutcome {
    const outcomes: AppendOutcome[] = [];
    try {
      if (items.length === 1) {
        // Alone in its group: the transaction itself is the unit of rollback, no savepoint needed.
        const [item] = items;
        try {
          outcomes.push({ ok: this.immediate(() => this.appendChecked(item)) });
        } catch (error) {
          outcomes.push(outcomeOf(error));
        }
      } else {
        this.immediate(() => {
          for (const item of items) {
            try {
              // A nested better-sqlite3 transaction is a SAVEPOINT: a throw rolls back this append only.
              outcomes.push({ ok: this.db.transaction(() => this.appendChecked(item))() });
            } catch (error) {
              outcomes.push(outcomeOf(error));
            }
          }
        });
      }
    } catch (error) {
      return { failed: failureOf(error) };
    }
    return { outcomes };
  }

  /** Checks and writes, inside a transaction the caller holds; throws before writing anything. */
  appendChecked({ streamId, events, options }: PendingAppend): StoredAppend {
    const expected = options.expectedRevision ?? 'any';
    const current = this.streamRevision.get(streamId) as number | undefined;
    if (events.length > 0) {
      const found = this.findIds.all(streamId, JSON.stringify(events.map((e) => e.id))) as StoredId[];
      if (found.length > 0) return { ...idempotentResult(streamId, events, found, expected, current), appended: false, count: 0, types: [], recordedAt: 0 };
    }
    checkExpected(streamId, expected, current);
    // The append condition (a lease's fence), in the same write transaction: nothing can commit between check and append.
    const condition = options.condition;
    if (condition && this.conditionHit.get(condition.streamId, condition.afterRevision, JSON.stringify(condition.types))) throw new FencedError(streamId, condition.streamId);
    let revision = current ?? -1;
    const now = Date.now();
    let position = events.length === 0 ? (this.maxPosition.get() as number) : 0;
    for (const e of events) {
      revision += 1;
      const info = this.insert.run(streamId, revision, e.id, e.type, categoryOf(streamId), e.data, e.metadata, now);
      position = Number(info.lastInsertRowid);
    }
    if (events.length > 0) this.upsertStream.run(streamId, revision);
    return { nextExpectedRevision: revision, position, appended: events.length > 0, count: events.length, types: [...new Set(events.map((e) => e.type))], recordedAt: now };
  }
}

interface StoredId {
  event_id: string;
  revision: number;
  position: number;
}

/** G3: all ids already stored (in place, for an exact expectation) is a no-op; a partial match is an error. */
function idempotentResult(streamId: string, events: readonly { readonly id: string }[], found: StoredId[], expected: ExpectedRevision, current: number | undefined): AppendResult {
  const actual = current ?? 'no_stream';
  if (found.length !== events.length) throw new ConcurrencyError(streamId, expected, actual);
  const byId = new Map(found.map((f) => [f.event_id, f]));
  const first = expected === 'no_stream' ? 0 : typeof expected === 'number' ? expected + 1 : undefined;
  if (first !== undefined) {
    events.forEach((e, i) => {
      if (byId.get(e.id)?.revision !== first + i) throw new ConcurrencyError(streamId, expected, actual);
    });
  }
  const last = byId.get(events[events.length - 1].id)!;
  return { nextExpectedRevision: last.revision, position: last.position };
}

function checkExpected(streamId: string, expected: ExpectedRevision, current: number | undefined): void {
  const ok =
    expected === 'any' ||
    (expected === 'no_stream' && current === undefined) ||
    (expected === 'stream_exists' && current !== undefined) ||
    (typeof expected === 'number' && current === expected);
  if (!ok) throw new ConcurrencyError(streamId, expected, current ?? 'no_stream');
}

function outcomeOf(error: unknown): AppendOutcome {
  if (error instanceof ConcurrencyError) return { conflict: { streamId: error.streamId, expected: error.expected, actual: error.actual } };
  if (error instanceof FencedError) return { fenced: { streamId: error.streamId, fenceStreamId: error.fenceStreamId } };
  return { failed: failureOf(error) };
}

function failureOf(error: unknown): { message: string; code?: string } {
  const code = (error as { code?: unknown })?.code;
  return { message: error instanceof Error ? error.message : String(error), ...(typeof code === 'string' ? { code } : {}) };
}
