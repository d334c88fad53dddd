import { randomUUID } from 'node:crypto';
import { ensurePrivateDir } from '../../files/private-files';
import type { SqliteDatabase } from '../../sqlite/sqlite-database';
import { AnnCandidates, AnnGraphs, AnnOptions } from './ann-graphs';
import { AnnThreadClient } from './ann-thread-client';

export type { AnnOptions } from './ann-graphs';

/** Where the graphs live: on a worker thread (a database file), or on this thread (':memory:'). */
interface AnnHost {
  touched(tids: number[]): void;
  dropped(tid: number): void;
  query(tid: number, vector: readonly number[], k: number, filtered: boolean): Promise<AnnCandidates | undefined>;
  whenIdle(): Promise<void>;
  counts(): Promise<{ loaded: number; built: number }>;
  close(): Promise<void>;
}

/** On this thread, background work takes a 15 ms slice, then at most a tenth of the loop while batches keep coming. */
const SLICE_MS = 15;
const BUSY_PAUSE_MS = 9 * SLICE_MS;
const WRITES_RECENT_MS = 200;

class InThreadHost implements AnnHost {
  private lastWrite = -Infinity;
  private readonly graphs: AnnGraphs;

  constructor(sqlite: SqliteDatabase, options: AnnOptions) {
    const turn = () => {
      const pause = performance.now() - this.lastWrite < WRITES_RECENT_MS ? BUSY_PAUSE_MS : 0;
      return new Promise<void>((resolve) => (pause ? setTimeout(resolve, pause) : setImmediate(resolve)));
    };
    this.graphs = new AnnGraphs(sqlite, options, turn, SLICE_MS);
  }
  touched(tids: number[]): void {
    this.lastWrite = performance.now();
    this.graphs.touched(tids);
  }
  dropped(tid: number): void {
    this.graphs.dropped(tid);
  }
  async query(tid: number, vector: readonly number[], k: number, filtered: boolean) {
    return this.graphs.query(tid, vector, k, filtered);
  }
  whenIdle(): Promise<void> {
    return this.graphs.whenIdle();
  }
  async counts() {
    return { ...this.graphs.counts };
  }
  async close(): Promise<void> {
    this.graphs.close();
  }
}

/**
 * The approximate vector index of the embedded search index (docs/search.md, "Approximate nearest neighbours"): the
 * change log written in the projection's transactions, and the HNSW graphs (ann-graphs.ts) kept from it on a
 * worker thread with its own connection, so building, catching up, compacting and saving them never takes the
 * service's event loop; the main thread asks it for candidates. A ':memory:' database cannot be opened by a second
 * connection, so there the graphs live on the main thread, in slices between its turns.
 */
export class SqliteVectorAnn {
  private readonly host: AnnHost;

  constructor(
    private readonly sqlite: SqliteDatabase,
    options: AnnOptions = {},
  ) {
    sqlite.db.exec(`CREATE TABLE IF NOT EXISTS si_vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, tid INTEGER NOT NULL, part INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS si_vector_log_tid ON si_vector_log (tid, seq);
      CREATE TABLE IF NOT EXISTS si_vector_log_floor (tid INTEGER PRIMARY KEY, seq INTEGER NOT NULL);`);
    const columns = sqlite.db.prepare('PRAGMA table_info(si_indexes)').all() as { name: string }[];
    if (!columns.some((c) => c.name === 'ann_stamp')) sqlite.db.exec('ALTER TABLE si_indexes ADD COLUMN ann_stamp TEXT');
    if (options.dir) ensurePrivateDir(options.dir);
    const onDisk = sqlite.options.path !== ':memory:';
    this.host = onDisk && options.thread !== false && options.minVectors !== Infinity ? new AnnThreadClient(sqlite.options.path, options) : new InThreadHost(sqlite, options);
  }

  /** Names a new table's graph files, so a table id reused after a drop never picks up the old table's file. */
  stampTable(tid: number): void {
    this.sqlite.statement('UPDATE si_indexes SET ann_stamp = ? WHERE tid = ?').run(randomUUID(), tid);
  }

  /** In the projection's transaction: a part's vector was added, replaced or removed. */
  changed(tid: number, part: number | bigint): void {
    this.sqlite.statement('INSERT INTO si_vector_log (tid, part) VALUES (?, ?)').run(tid, part);
  }

  /** In the projection's transaction: the table is gone (a rolled-back drop merely costs a rebuild). */
  dropped(tid: number): void {
    this.sqlite.statement('DELETE FROM si_vector_log WHERE tid = ?').run(tid);
    this.sqlite.statement('DELETE FROM si_vector_log_floor WHERE tid = ?').run(tid);
    this.host.dropped(tid);
  }

  /** After a commit that touched these tables: keep their graphs in step (or start one) off the request path. */
  touched(tids: Iterable<number>): void {
    this.host.touched([...tids]);
  }

  /**
   * The k nearest parts (rowid, cosine distance), or undefined when the exact scan must answer: a small table, a
   * graph not built or too far behind, or (with `keep`, the filter) too few candidates passing it.
   */
  async nearest(tid: number, vector: readonly number[], k: number, keep?: (ids: number[]) => Set<number>): Promise<{ id: number; s: number }[] | undefined> {
    const found = await this.host.query(tid, vector, k, !!keep);
    if (!found) return undefined;
    let hits = found.ids.map((id, i) => ({ id, s: found.distances[i] }));
    if (keep) {
      // A filter is checked on an over-fetched candidate list; if fewer than k pass, the filter is selective and the exact scan answers.
      const passing = keep(found.ids);
      hits = hits.filter((h) => passing.has(h.id));
      if (hits.length < k && found.live > found.want) return undefined;
    }
    return hits.slice(0, k);
  }

  /** Resolves when no build, catch-up, save or log cut is running (tests, benches). */
  whenIdle(): Promise<void> {
    return this.host.whenIdle();
  }

  /** Graphs loaded from a saved file and built from the rows, since start (tests, benches). */
  counts(): Promise<{ loaded: number; built: number }> {
    return this.host.counts();
  }

  /** Saves every graph changed since its last save (on shutdown), before the database closes. */
  close(): Promise<void> {
    return this.host.close();
  }
}
