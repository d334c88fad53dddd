import Database, { type Statement } from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { AnnConnection, AnnGraphs, AnnOptions } from './ann-graphs';

/** What the main thread tells the graph thread when it starts it (sqlite-vector-ann.ts). */
export interface AnnThreadOptions {
  readonly path: string;
  readonly ann: AnnOptions;
}

/** Main → graph thread. Requests with an id get one reply with that id, in the order sent. */
export type AnnRequest =
  | { readonly touched: number[] }
  | { readonly dropped: number }
  | { readonly id: number; readonly query: { tid: number; vector: Float32Array; k: number; filtered: boolean } }
  | { readonly id: number; readonly call: 'idle' | 'counts' | 'close' };

export type AnnReply = { readonly id: number; readonly value: unknown } | { readonly startFailed: string } | { readonly left: { tid: number; rows: number } };

/** Short slices: a query waits for the slice in progress before its turn. */
const SLICE_MS = 5;

/**
 * The graphs' thread: builds, catches up, compacts, saves and searches them on its own connection to the database
 * file, so none of that work takes the service's event loop. Reads see what the main connection committed (WAL);
 * its writes (cutting the vector log) are a few small transactions.
 */
function main(): void {
  const port = parentPort!;
  const { path, ann } = workerData as AnnThreadOptions;
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    // Checkpoints are the event store writer's (sqlite-writer-thread.ts); the log cuts are derived data.
    db.pragma('wal_autocheckpoint = 0');
    db.pragma('synchronous = NORMAL');
  } catch (error) {
    port.postMessage({ startFailed: error instanceof Error ? error.message : String(error) } satisfies AnnReply);
    return;
  }
  const statements = new Map<string, Statement>();
  const conn: AnnConnection = {
    db,
    statement(sql) {
      let s = statements.get(sql);
      if (!s) statements.set(sql, (s = db.prepare(sql)));
      return s;
    },
  };
  const onLeft = (tid: number, rows: number) => port.postMessage({ left: { tid, rows } } satisfies AnnReply);
  const graphs = new AnnGraphs(conn, { ...ann, onLeft }, () => new Promise((resolve) => setImmediate(resolve)), SLICE_MS);
  const reply = (id: number, value: unknown) => port.postMessage({ id, value } satisfies AnnReply);

  port.on('message', (request: AnnRequest) => {
    if ('touched' in request) return graphs.touched(request.touched);
    if ('dropped' in request) {
      statements.clear(); // statements on the dropped tables would fail
      return graphs.dropped(request.dropped);
    }
    if ('query' in request) {
      const { tid, vector, k, filtered } = request.query;
      let value;
      try {
        value = graphs.query(tid, vector, k, filtered);
      } catch {
        value = undefined; // e.g. the table was dropped meanwhile: the exact scan answers
      }
      return reply(request.id, value);
    }
    switch (request.call) {
      case 'idle':
        return void graphs.whenIdle().then(() => reply(request.id, true));
      case 'counts':
        return reply(request.id, graphs.counts);
      case 'close':
        // Answered once the graph files in flight are read or written: only then may the thread be terminated.
        return void graphs.close().catch(() => undefined).then(() => {
          db.close();
          reply(request.id, true);
          port.close();
        });
      default: {
        const _exhaustive: never = request.call;
        return _exhaustive;
      }
    }
  });
}

main();
