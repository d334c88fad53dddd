import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

/** What the main thread tells the checkpointer when it starts it (sqlite-checkpointer.ts). */
export interface CheckpointerOptions {
  readonly path: string;
  readonly intervalMs: number;
}

/**
 * Copies the WAL of one database back into its file, on a connection of its own, so that the fsyncs of a
 * checkpoint happen here and never inside a commit on the service's event loop. PASSIVE: it takes no lock a
 * writer waits for, and copies what no reader still needs; a round with nothing new to copy writes nothing.
 */
function main(): void {
  const port = parentPort!;
  const { path, intervalMs } = workerData as CheckpointerOptions;
  const db = new Database(path, { fileMustExist: true });
  const timer = setInterval(() => db.pragma('wal_checkpoint(PASSIVE)'), intervalMs);
  port.on('message', () => {
    clearInterval(timer);
    db.close();
    port.close();
  });
}

main();
