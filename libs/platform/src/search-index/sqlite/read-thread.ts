import Database, { type Statement } from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import * as sqliteVec from 'sqlite-vec';

/** Main → read thread: a statement to run with its parameters; `raw` for arrays rather than objects. */
export interface ReadRequest {
  readonly id: number;
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly raw: boolean;
}

export type ReadReply = { readonly id: number; readonly rows: unknown[] } | { readonly id: number; readonly error: string } | { readonly startFailed: string };

/**
 * A read-only connection to the database file on a thread of its own, for the few statements that scan a large
 * table (FTS5's bm25() ranking while the postings are not ready, sqlite-vec's exact scan while the graph is not): at
 * a million parts each holds a connection for ~0.5–1.5 s, which on the main thread would hold every request.
 * It sees what the main connection committed before the request (WAL), as a query on the main thread would.
 */
function main(): void {
  const port = parentPort!;
  const { path } = workerData as { path: string };
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    sqliteVec.load(db);
  } catch (error) {
    port.postMessage({ startFailed: error instanceof Error ? error.message : String(error) } satisfies ReadReply);
    return;
  }
  const statements = new Map<string, Statement>();
  port.on('message', ({ id, sql, params, raw }: ReadRequest) => {
    try {
      let s = statements.get(sql);
      if (!s) statements.set(sql, (s = db.prepare(sql)));
      port.postMessage({ id, rows: (raw ? s.raw(true) : s.raw(false)).all(...params) } satisfies ReadReply);
    } catch (error) {
      statements.delete(sql); // a table dropped since: prepared again next time
      port.postMessage({ id, error: error instanceof Error ? error.message : String(error) } satisfies ReadReply);
    }
  });
}

main();
