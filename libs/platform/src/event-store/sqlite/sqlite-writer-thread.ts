import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { GroupOutcome, PendingAppend, SqliteAppender } from './sqlite-appender';

/** What the main thread tells the writer thread when it starts it (sqlite-writer.ts). */
export interface WriterThreadOptions {
  readonly path: string;
  readonly synchronous: 'FULL' | 'NORMAL';
}

/** Main → writer: a group to commit, or the last message (after every group sent before it). */
export type WriterRequest = { readonly id: number; readonly items: readonly PendingAppend[] } | { readonly close: true };

/** Writer → main: the thread is ready, a group's outcome, or the connection is closed. */
export type WriterReply = { readonly ready: true } | { readonly id: number; readonly result: GroupOutcome } | { readonly closed: true } | { readonly startFailed: string };

/**
 * The event store's writer: its own connection to the database file, committing the groups the main thread sends,
 * in the order sent, so the fsync of each commit happens here and not on the service's event loop. A group's
 * outcome is posted only after its COMMIT returned, so an acknowledged append is as durable as `synchronous` makes it.
 */
function main(): void {
  const port = parentPort!;
  const { path, synchronous } = workerData as WriterThreadOptions;
  let db: Database.Database;
  try {
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma('busy_timeout = 5000');
  } catch (error) {
    port.postMessage({ startFailed: error instanceof Error ? error.message : String(error) } satisfies WriterReply);
    return;
  }
  const appender = new SqliteAppender(db, (fn) => db.transaction(fn).immediate());
  // The main connection does not checkpoint (its fsyncs would stall the loop): the WAL is copied back here, by
  // SQLite's auto-checkpoint after this connection's commits (1,000 pages, whoever wrote them), and, when no append
  // came for a second (the main connection writing alone: `appendSync`, or projections in a log kept in service.db),
  // by a passive checkpoint. Not every second regardless:
  // that would add a database fsync a second in front of queued appends.
  let lastCommit = Date.now();
  const checkpoints = setInterval(() => {
    if (Date.now() - lastCommit >= 1000) db.pragma('wal_checkpoint(PASSIVE)');
  }, 1000);
  port.on('message', (request: WriterRequest) => {
    if ('close' in request) {
      clearInterval(checkpoints);
      db.close();
      port.postMessage({ closed: true } satisfies WriterReply);
      port.close();
      return;
    }
    const result = appender.commit(request.items);
    lastCommit = Date.now();
    port.postMessage({ id: request.id, result } satisfies WriterReply);
  });
  port.postMessage({ ready: true } satisfies WriterReply);
}

main();
