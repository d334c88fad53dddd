import { randomUUID } from 'node:crypto';
import { ensurePrivateDir } from '../../../files/private-files';
import type { SqliteDatabase } from '../../../sqlite/sqlite-database';
import { AnnCandidates, AnnCounts, AnnGraphs, AnnOptions } from './ann-graphs';
import { AnnThreadClient } from './ann-thread-client';

export type { AnnOptions } from './ann-graphs';

/** Where the graphs live: on a worker thread (a database file), or on this thread (':memory:'). */
interface AnnHost {
  touched(tids: number[]): void;
  dropped(tid: number): void;
  query(tid: number, vector: readonly number[], k: number, filtered: boolean): Promise<AnnCandidates | undefined>;
  whenIdle(): Promise<void>;
  counts(): Promise<AnnCounts>;
  close(): Promise<void>;
}

/** On this thread, background work takes a 15 ms slice, then at most a tenth of the loop while batches keep coming. */
const SLICE_MS = 15;
const BUSY_PAUSE_MS = 9 * SLICE_MS;
const WRITES_RECENT_MS = 200;
/** Log entries (by sequence) after which a table without a graph has its log cut. */
const SMALL_TABLE_LOG_CUT = 1000;

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
    await this.graphs.close();
  }
}

/**
 * On a database file the graph thread starts once a table is large enough for a graph: most services (and every
 * test that starts the app) never need it, and a thread from TypeScript sources takes a second of CPU to start.
 */
class ThreadWhenNeeded implements AnnHost {
  private thread: AnnThreadClient | undefined;
  /** Per table, the vector count last counted and the log position then (the count grows by at most one per entry). */
  private readonly counted = new Map<number, { count: number; seq: number }>();
  private readonly minVectors: number;

  constructor(
    private readonly sqlite: SqliteDatabase,
    private readonly options: AnnOptions,
  ) {
    this.minVectors = options.minVectors ?? 1_000;
  }
  touched(tids: number[]): void {
    if (this.thread || tids.some((tid) => this.largeEnough(tid))) return this.started().touched(tids);
    // No graph anywhere here: the log of small tables is cut on this thread (a few ms per 1,000 changes).
    for (const tid of tids) {
      const { head, floor } = this.position(tid);
      if (head - floor < SMALL_TABLE_LOG_CUT) continue;
      this.sqlite.statement('INSERT INTO si_vector_log_floor (tid, seq) VALUES (?, ?) ON CONFLICT (tid) DO UPDATE SET seq = max(seq, excluded.seq)').run(tid, head);
      this.sqlite.statement('DELETE FROM si_vector_log WHERE tid = ? AND seq <= ?').run(tid, head);
    }
  }
  dropped(tid: number): void {
    this.counted.delete(tid);
    this.thread?.dropped(tid);
  }
  async query(tid: number, vector: readonly number[], k: number, filtered: boolean) {
    if (!this.thread && !this.largeEnough(tid)) return undefined;
    return this.started().query(tid, vector, k, filtered);
  }
  async whenIdle(): Promise<void> {
    await this.thread?.whenIdle();
  }
  async counts() {
    return this.thread ? this.thread.counts() : { loaded: 0, built: 0, leftOverBudget: 0 };
  }
  async close(): Promise<void> {
    await this.thread?.close();
  }
  private started(): AnnThreadClient {
    return (this.thread ??= new AnnThreadClient(this.sqlite.options.path, this.options));
  }
  private position(tid: number): { head: number; floor: number } {
    const floor = (this.sqlite.statement('SELECT seq FROM si_vector_log_floor WHERE tid = ?').pluck().get(tid) as number | undefined) ?? 0;
    const last = (this.sqlite.statement('SELECT MAX(seq) FROM si_vector_log WHERE tid = ?').pluck().get(tid) as number | null) ?? 0;
    return { head: Math.max(last, floor), floor };
  }
  private largeEnough(tid: number): boolean {
    if (!Number.isFinite(this.minVectors)) return false;
    const { head } = this.position(tid);
    const last = this.counted.get(tid);
    if (last && last.count + (head - last.seq) < this.minVectors) return false;
    // Counted up to the bound only, which is all the question needs: counting every vector read every page of the
    // table (~6 s at a million parts, on the event loop, at the first vector query after a start).
    const count = this.sqlite.statement(`SELECT COUNT(*) FROM (SELECT 1 FROM si_${tid}_parts WHERE vector IS NOT NULL LIMIT ?)`).pluck().get(this.minVectors) as number;
    this.counted.set(tid, { count, seq: head });
    return count >= this.minVectors;
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
    sqlite.addColumnIfMissing('si_indexes', 'ann_stamp', 'TEXT');
    if (options.dir) ensurePrivateDir(options.dir);
    const onDisk = sqlite.options.path !== ':memory:';
    this.host = onDisk && options.thread !== false && options.minVectors !== Infinity ? new ThreadWhenNeeded(sqlite, options) : new InThreadHost(sqlite, options);
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
  counts(): Promise<AnnCounts> {
    return this.host.counts();
  }

  /** Saves every graph changed since its last save (on shutdown), before the database closes. */
  close(): Promise<void> {
    return this.host.close();
  }
}
