import type { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from './sqlite-database';
import type { CheckpointerOptions } from './sqlite-checkpointer-thread';
import { siblingWorker } from '../kernel/sibling-worker';

/**
 * Takes a database's WAL checkpoints off its connection onto a thread (sqlite-checkpointer-thread.ts). With the
 * event log on its writer thread, the projections' transactions in `service.db` are the event loop's last commits;
 * at `synchronous=NORMAL` they never fsync, except when one crosses SQLite's auto-checkpoint threshold and copies
 * the WAL back with two fsyncs, stalling every request behind it (docs/architecture.md).
 */
export class SqliteCheckpointer {
  private readonly worker: Worker;
  private closed = false;
  /** Resolves once the thread has gone, its connection closed (after `close()`, or when it failed). */
  readonly exited: Promise<void>;

  constructor(sqlite: SqliteDatabase, intervalMs = 200) {
    this.worker = siblingWorker(__dirname, 'sqlite-checkpointer-thread', {
      workerData: { path: sqlite.options.path, intervalMs } satisfies CheckpointerOptions,
    });
    // A checkpointer keeps no process alive. One that is lost gives checkpoints back to the connection, so the WAL
    // cannot grow without bound.
    this.worker.unref();
    this.worker.on('error', () => undefined);
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', () => {
        if (!this.closed && sqlite.isOpen) sqlite.db.pragma('wal_autocheckpoint = 1000');
        resolve();
      }),
    );
    sqlite.handOverCheckpoints();
    sqlite.onClose(() => this.close());
  }

  /** Stops the rounds and closes the thread's connection (whichever connection closes last checkpoints the rest). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Held open until the thread has closed its connection: `exited` is awaited on shutdown, and an unreferenced
    // thread would let the process end (code 0, whatever was to follow the close) while it closes.
    this.worker.ref();
    this.worker.postMessage('close');
  }
}
