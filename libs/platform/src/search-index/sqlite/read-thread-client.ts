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

/**
 * Runs a read statement on the read thread (read-thread.ts), started at first use, or on the main connection when
 * the database has no file (in memory), the thread could not start or has failed, or `onThread` is false.
 * A statement that fails on the thread (a table dropped meanwhile) runs again here, where its error is the caller's.
 */
export class SqliteReader {
  private worker?: Worker;
  private readonly pending = new Map<number, (reply: ReadReply) => void>();
  private nextId = 1;
  private broken: boolean;
  /** Statements the thread answered (benches and tests). */
  answered = 0;

  constructor(
    private readonly sqlite: SqliteDatabase,
    private readonly maxQueued = READ_THREAD_MAX_QUEUED,
  ) {
    const path = sqlite.options.path;
    this.broken = path === ':memory:' || path === '';
  }

  async all<T>(sql: string, params: readonly unknown[], options: { raw?: boolean; onThread: boolean }): Promise<T[]> {
    const raw = options.raw ?? false;
    if (options.onThread && !this.broken) {
      if (this.pending.size >= this.maxQueued) {
        throw unavailable('search.busy', `The search index is already answering ${this.pending.size} slow queries (a large corpus whose in-memory index is not built yet or over its memory bound); retry shortly`, 1);
      }
      const reply = await this.request(sql, params, raw);
      if (reply && 'rows' in reply) {
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
      const settle = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      settle?.(reply);
    });
    worker.on('error', () => this.fail());
    worker.on('exit', () => this.fail());
    return (this.worker = worker);
  }

  private request(sql: string, params: readonly unknown[], raw: boolean): Promise<ReadReply | undefined> {
    const worker = this.started();
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.ref();
      worker.postMessage({ id, sql, params, raw } satisfies ReadRequest);
    });
  }

  private fail(): void {
    this.broken = true;
    for (const settle of this.pending.values()) settle({ id: 0, error: 'the read thread stopped' });
    this.pending.clear();
  }
}
