import type { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from '../../sqlite/sqlite-database';
import type { ReadReply, ReadRequest } from './read-thread';
import { unavailable } from '../../kernel/errors';
import { siblingWorker } from '../../kernel/sibling-worker';

/** A table with fewer rows is read on the main connection: a statement there takes less than the hop to the thread. */
export const READ_THREAD_MIN_ROWS = 20_000;

/**
 * Statements waiting for the thread past which more are refused (503 `search.busy`, Retry-After 1 s): each may take
 * ~0.5 s (FTS5's ranking of a million parts), so a longer queue would only make every caller wait longer.
 */
export const READ_THREAD_MAX_QUEUED = 32;

export interface ReaderLimits {
  /** Statements waiting or running, all tables together (default {@link READ_THREAD_MAX_QUEUED}). */
  readonly maxQueued?: number;
  /** Of those, the most one table may hold (default half of `maxQueued`), so one corpus cannot take the whole queue. */
  readonly maxQueuedPerTable?: number;
}

interface Waiting {
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly raw: boolean;
  readonly settle: (reply: ReadReply) => void;
}

/**
 * Runs a read statement on the read thread (read-thread.ts), started at first use, or on the main connection when
 * the database has no file (in memory), the thread could not start or has failed, or `onThread` is false.
 * A statement that fails on the thread (a table dropped meanwhile) runs again here, where its error is the caller's.
 *
 * The thread runs one statement at a time, handed to it here one at a time, the tables taking turns (round robin):
 * a corpus whose every query scans (its postings or graph over their memory bound, or still being built) waits
 * behind its own statements, and another corpus's statement runs after at most one of each table already waiting,
 * not after the whole queue.
 */
export class SqliteReader {
  private worker?: Worker;
  /** Per table, its statements in arrival order; the map's order is the tables' turn order. */
  private readonly waiting = new Map<string, Waiting[]>();
  private running?: { readonly id: number; readonly table: string; readonly settle: (reply: ReadReply) => void };
  private queued = 0;
  private nextId = 1;
  private broken: boolean;
  private readonly maxQueued: number;
  private readonly maxQueuedPerTable: number;
  /** Statements the thread answered (benches and tests). */
  answered = 0;

  constructor(
    private readonly sqlite: SqliteDatabase,
    limits: ReaderLimits = {},
  ) {
    const path = sqlite.options.path;
    this.broken = path === ':memory:' || path === '';
    this.maxQueued = limits.maxQueued ?? READ_THREAD_MAX_QUEUED;
    this.maxQueuedPerTable = limits.maxQueuedPerTable ?? Math.max(1, Math.ceil(this.maxQueued / 2));
  }

  /** `table` names whose turn the statement takes on the thread (the search table it scans). */
  async all<T>(sql: string, params: readonly unknown[], options: { raw?: boolean; onThread: boolean; table: string }): Promise<T[]> {
    const raw = options.raw ?? false;
    if (options.onThread && !this.broken) {
      const mine = (this.waiting.get(options.table)?.length ?? 0) + (this.running?.table === options.table ? 1 : 0);
      if (this.queued >= this.maxQueued || mine >= this.maxQueuedPerTable) {
        const which = mine >= this.maxQueuedPerTable ? `${mine} slow queries of this corpus` : `${this.queued} slow queries`;
        throw unavailable('search.busy', `The search index is already answering ${which} (a large corpus whose in-memory index is not built yet or over its memory bound); retry shortly`, 1);
      }
      const reply = await this.request(options.table, sql, params, raw);
      if ('rows' in reply) {
        this.answered++;
        return reply.rows as T[];
      }
    }
    const statement = this.sqlite.statement(sql);
    return (raw ? statement.raw(true) : statement.raw(false)).all(...params) as T[];
  }

  close(): Promise<number> | undefined {
    this.broken = true;
    return this.worker?.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = siblingWorker(__dirname, 'read-thread', {
      workerData: { path: this.sqlite.options.path },
    });
    worker.unref();
    worker.on('message', (reply: ReadReply) => {
      if ('startFailed' in reply) return this.fail();
      const running = this.running;
      if (!running || running.id !== reply.id) return;
      this.running = undefined;
      this.queued--;
      running.settle(reply);
      this.next();
    });
    worker.on('error', () => this.fail());
    worker.on('exit', () => this.fail());
    return (this.worker = worker);
  }

  private request(table: string, sql: string, params: readonly unknown[], raw: boolean): Promise<ReadReply> {
    return new Promise((settle) => {
      const list = this.waiting.get(table);
      if (list) list.push({ sql, params, raw, settle });
      else this.waiting.set(table, [{ sql, params, raw, settle }]);
      this.queued++;
      this.next();
    });
  }

  /** Hands the thread the next table's oldest statement, that table then going to the back of the turns. */
  private next(): void {
    if (this.running || this.broken) return;
    const first = this.waiting.entries().next();
    const worker = this.started();
    if (first.done) return void worker.unref();
    const [table, list] = first.value;
    const { sql, params, raw, settle } = list.shift()!;
    this.waiting.delete(table);
    if (list.length > 0) this.waiting.set(table, list);
    const id = this.nextId++;
    this.running = { id, table, settle };
    worker.ref();
    worker.postMessage({ id, sql, params, raw } satisfies ReadRequest);
  }

  private fail(): void {
    this.broken = true;
    const all = [...(this.running ? [this.running.settle] : []), ...[...this.waiting.values()].flat().map((w) => w.settle)];
    this.running = undefined;
    this.waiting.clear();
    this.queued = 0;
    for (const settle of all) settle({ id: 0, error: 'the read thread stopped' });
  }
}
