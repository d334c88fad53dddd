// Over 300 lines: one cache whose build, catch-up, compaction, save, log truncation and search share the per-table graph state and its invariants.
import type { Statement } from 'better-sqlite3';
import { HierarchicalNSW } from 'hnswlib-node';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateFile } from '../../../files/private-files';
import { CacheBudget } from '../cache-budget';

/** Settings of the approximate vector index (docs/search.md, "Approximate nearest neighbours"). */
export interface AnnOptions {
  /** An index with fewer vectors is scanned exactly (under a millisecond there, and exact). Default 1,000. */
  readonly minVectors?: number;
  /** HNSW links per node (M). Default 16. */
  readonly m?: number;
  /** Candidate list while inserting. Default 100. */
  readonly efConstruction?: number;
  /** Candidate list while searching (at least k). Default 600: recall@10 0.967 at 1M GloVe vectors, 0.956 at 400 (docs/benchmarks/2026-11-25-session-13-log-file.md). */
  readonly efSearch?: number;
  /** Where graphs are saved between runs (DATA_DIR/ann); none keeps them in memory only. */
  readonly dir?: string;
  /** Keep the graphs on a worker thread (default for a database file; ':memory:' cannot be opened by a second connection). */
  readonly thread?: boolean;
  /**
   * The most bytes the graphs may hold, every table together, as {@link graphBytes} estimates them (default 1 GiB;
   * Infinity: no bound). A table whose graph would pass it is left to the exact scan (docs/search.md, "A bound on the
   * graphs' memory").
   */
  readonly maxBytes?: number;
  /** Told (on the graphs' thread, then relayed) when a table is left to the exact scan for the bound: its rows then. */
  readonly onLeft?: (tid: number, rows: number) => void;
}

export const DEFAULT_EF_SEARCH = 600;

/** Graphs loaded from a saved file, built from the rows, and tables left to the exact scan for the graphs' size. */
export interface AnnCounts {
  loaded: number;
  built: number;
  leftOverBudget: number;
}

/**
 * What hnswlib holds for a graph of `capacity` nodes: per node the vector, the level-0 links (2M and a count), the
 * label, and ~64 bytes of the rest (the level, a lock, the label map's entry, upper levels for 1 node in M). At 1M
 * GloVe vectors (100 dimensions, capacity 1,048,576) that is 633 MB, against 608 MB of RSS measured (session 12).
 */
export function graphBytes(capacity: number, dimensions: number, m: number): number {
  return capacity * (4 * dimensions + 4 * (2 * m + 1) + 8 + 64);
}

/** What the graph upkeep needs of a connection: the main thread's SqliteDatabase, or the worker's own. */
export interface AnnConnection {
  readonly db: { readonly open: boolean };
  statement(sql: string): Statement;
}

/** A graph's answer: candidates nearest first, with how many it asked for and how many live parts it holds. */
export interface AnnCandidates {
  readonly ids: number[];
  readonly distances: number[];
  readonly want: number;
  readonly live: number;
}

interface Graph {
  readonly hnsw: HierarchicalNSW;
  readonly stamp: string;
  /** The vector-log position the graph reflects: every change up to it is in, none after. */
  seq: number;
  savedSeq: number;
  /** Parts marked deleted since the graph was built or loaded (a loaded file's own marks are not listed). */
  readonly deleted: Set<number>;
  /** Parts in the graph not marked deleted; the rest of its nodes are tombstones until the next compaction. */
  live: number;
  saving: boolean;
}

/** Log entries applied on the search's own turn; more than that and the query scans exactly while the graph catches up. */
const SYNC_CATCH_UP = 256;
const PAGE = 512;
/** A table without a graph has its log cut once this many entries (by sequence) accumulate. */
const UNGRAPHED_LOG_CUT = 1000;
const TRUNCATE_CHUNK = 2000;

/**
 * HNSW graphs (hnswlib-node) over the parts' vectors, one per search-index table, kept as a cache of the SQLite
 * rows: every vector change appends (table, part rowid) to `si_vector_log` in the projection's transaction, and a
 * graph records the log position it reflects. A search first applies the log's tail (the row decides: present → add
 * or update, gone → mark deleted), so a deleted part is never returned; a graph too far behind, or not built yet,
 * leaves the query to the exact scan. Saved files are named by that position, so a crash leaves at worst an older
 * file that the log brings up to date; anything unreadable is rebuilt from the rows. Once a graph is saved (or, with
 * no directory, built or caught up a save's worth), the log up to its position is cut and the cut recorded in
 * `si_vector_log_floor`: a graph elsewhere that is behind the floor reloads the newest file or rebuilds.
 *
 * Runs on a worker thread with its own connection (ann-thread.ts), or on the main thread for ':memory:' databases,
 * where `turn` yields to the event loop between slices of work.
 */
export class AnnGraphs {
  private readonly graphs = new Map<number, Graph>();
  private readonly busy = new Map<number, Promise<void>>();
  /** Per table, the vector count last counted and the log position then, to skip counting small tables on every query. */
  private readonly counted = new Map<number, { count: number; seq: number }>();
  private readonly minVectors: number;
  private closed = false;
  /** hnswlib's asynchronous reads and writes of graph files in flight: closing waits for them (see close). */
  private readonly native = new Set<Promise<unknown>>();
  /** Tables left to the exact scan for the graphs' size (cache-budget.ts). */
  private readonly budget: CacheBudget;
  /** Since start (benches and tests). */
  readonly counts: AnnCounts = { loaded: 0, built: 0, leftOverBudget: 0 };

  constructor(
    private readonly conn: AnnConnection,
    private readonly options: AnnOptions,
    /** Yields between slices of background work; `slice` is how long a slice may run, in ms. */
    private readonly turn: () => Promise<void>,
    private readonly slice: number,
  ) {
    this.minVectors = options.minVectors ?? 1_000;
    this.budget = new CacheBudget(options.maxBytes, options.onLeft);
  }

  /** After a commit that touched these tables: keep their graphs in step (or start one) in the background. */
  touched(tids: Iterable<number>): void {
    for (const tid of tids) {
      if (this.busy.has(tid)) continue; // its run picks up the change when it ends
      if (this.graphs.has(tid)) this.background(tid, () => this.catchUpSliced(tid));
      else if (this.largeEnough(tid)) this.background(tid, () => this.build(tid));
      else if (this.head(tid) - this.floor(tid) >= UNGRAPHED_LOG_CUT) this.background(tid, () => this.truncate(tid, this.head(tid)));
    }
  }

  /** The table is gone: its graph and files go (its log rows went in the dropping transaction). */
  dropped(tid: number): void {
    this.graphs.delete(tid);
    this.counted.delete(tid);
    this.budget.forget(tid);
    if (this.options.dir) for (const f of this.files(tid)) rmSync(join(this.options.dir, f), { force: true });
  }

  /**
   * The graph's nearest candidates for k results (more with a filter, which the caller checks), or undefined when the
   * exact scan must answer: a small table, a graph not built, behind the log's floor, or too far behind its head.
   */
  query(tid: number, vector: ArrayLike<number>, k: number, filtered: boolean): AnnCandidates | undefined {
    const g = this.graphs.get(tid);
    if (!g) {
      // Counting a large table is a scan: not while its graph is being built.
      if (!this.busy.has(tid) && this.largeEnough(tid)) this.background(tid, () => this.build(tid));
      return undefined;
    }
    if (g.saving ? this.tail(tid, g.seq, 1).length > 0 : !this.catchUp(tid, g, SYNC_CATCH_UP)) {
      this.background(tid, () => this.catchUpSliced(tid));
      return undefined;
    }
    const live = g.live;
    if (live < this.minVectors) return undefined;
    const want = Math.min(filtered ? Math.max(10 * k, 500) : k, g.hnsw.getMaxElements(), live);
    g.hnsw.setEf(Math.max(this.options.efSearch ?? DEFAULT_EF_SEARCH, want));
    try {
      const { neighbors, distances } = g.hnsw.searchKnn(Array.from(vector), want);
      return { ids: neighbors, distances, want, live };
    } catch {
      return undefined; // e.g. a query vector of another dimension: the exact scan answers as it always did
    }
  }

  /** Resolves when no build, catch-up, save or truncation is running (tests, benches). */
  async whenIdle(): Promise<void> {
    while (this.busy.size > 0) await Promise.all([...this.busy.values()]);
  }

  /**
   * Saves every graph changed since its last save (on shutdown), once the graph files being read or written are
   * done: hnswlib completes those on the thread's loop, and a thread terminated before that aborts the whole process
   * (its completion throws into the ending thread: node-addon-api's fatal `napi_throw`; seen closing the service
   * within a second of its first vector query at a million vectors, while the saved graph was read).
   */
  async close(): Promise<void> {
    this.closed = true;
    while (this.native.size > 0) await Promise.allSettled([...this.native]);
    for (const [tid, g] of this.graphs) if (g.seq > g.savedSeq && !g.saving) this.saveSync(tid, g);
    this.graphs.clear();
  }

  /** A native read or write of a graph file, tracked until it settles. */
  private tracked<T>(work: Promise<T>): Promise<T> {
    this.native.add(work);
    const done = () => this.native.delete(work);
    work.then(done, done);
    return work;
  }

  private background(tid: number, work: () => Promise<void>): void {
    if (this.busy.has(tid)) return;
    const run = work()
      .catch(() => {
        this.graphs.delete(tid); // a graph that failed is dropped: the exact scan answers, the next change retries
      })
      .finally(() => {
        this.busy.delete(tid);
        // Changes committed while this ran were not scheduled (the table was busy): pick them up now.
        const g = this.closed ? undefined : this.graphs.get(tid);
        if (g && this.conn.db.open && this.tail(tid, g.seq, 1).length > 0) this.background(tid, () => this.catchUpSliced(tid));
      });
    this.busy.set(tid, run);
  }

  private largeEnough(tid: number): boolean {
    if (!Number.isFinite(this.minVectors)) return false;
    const head = this.head(tid);
    const last = this.counted.get(tid);
    // The count can have grown by at most one per log entry since it was taken.
    if (last && last.count + (head - last.seq) < this.minVectors) return false;
    const count = this.conn.statement(`SELECT COUNT(*) FROM si_${tid}_parts WHERE vector IS NOT NULL`).pluck().get() as number;
    this.counted.set(tid, { count, seq: head });
    return count >= this.minVectors && this.budget.mayBuild(tid, count);
  }

  /** Whether a graph of `capacity` nodes for the table fits the bound beside every other table's graph. */
  private fits(tid: number, capacity: number, dimensions: number): boolean {
    return capacity <= this.mostNodes(tid, dimensions);
  }

  /** The most nodes the table's graph may have beside every other table's graph (Infinity: no bound). */
  private mostNodes(tid: number, dimensions: number): number {
    const { maxBytes } = this.budget;
    if (!Number.isFinite(maxBytes)) return Infinity;
    const m = this.options.m ?? 16;
    let others = 0;
    for (const [t, g] of this.graphs) if (t !== tid) others += graphBytes(g.hnsw.getMaxElements(), g.hnsw.getNumDimensions(), m);
    return Math.floor((maxBytes - others) / graphBytes(1, dimensions, m));
  }

  /** The table's graph would pass the bound: dropped, and the table left to the exact scan. */
  private leaveToExactScan(tid: number, count: number): void {
    this.graphs.delete(tid);
    this.budget.leave(tid, count);
    this.counts.leftOverBudget++;
  }

  /** The newest log position of the table (entries up to the floor may have been cut). */
  private head(tid: number): number {
    const last = (this.conn.statement('SELECT MAX(seq) FROM si_vector_log WHERE tid = ?').pluck().get(tid) as number | null) ?? 0;
    return Math.max(last, this.floor(tid));
  }

  private floor(tid: number): number {
    return (this.conn.statement('SELECT seq FROM si_vector_log_floor WHERE tid = ?').pluck().get(tid) as number | undefined) ?? 0;
  }

  private tail(tid: number, after: number, limit: number): { seq: number; part: number }[] {
    return this.conn.statement('SELECT seq, part FROM si_vector_log WHERE tid = ? AND seq > ? ORDER BY seq LIMIT ?').all(tid, after, limit) as { seq: number; part: number }[];
  }

  /** Applies up to `limit` log entries; true when the graph is then at the head. */
  private catchUp(tid: number, g: Graph, limit: number): boolean {
    if (this.floor(tid) > g.seq) {
      // Another process cut the log past this graph: what it missed is only in the newest file or the rows.
      this.graphs.delete(tid);
      return false;
    }
    const entries = this.tail(tid, g.seq, limit);
    const read = this.conn.statement(`SELECT vector FROM si_${tid}_parts WHERE rowid = ?`).pluck();
    for (const { seq, part } of entries) {
      if (!this.room(tid, g)) {
        this.leaveToExactScan(tid, g.live);
        return false;
      }
      this.put(g, part, read.get(part) as Buffer | null | undefined);
      g.seq = seq;
    }
    return entries.length < limit;
  }

  private async catchUpSliced(tid: number): Promise<void> {
    for (;;) {
      const g = this.graphs.get(tid);
      if (!g) return this.closed ? undefined : this.build(tid); // dropped for being behind the floor
      if (g.saving || this.closed) return;
      const started = performance.now();
      let done = false;
      while (!done && this.graphs.get(tid) === g && performance.now() - started < this.slice) done = this.catchUp(tid, g, 32);
      if (this.graphs.get(tid) !== g) continue;
      if (done) {
        if (g.hnsw.getCurrentCount() - g.live > 0.2 * g.hnsw.getCurrentCount()) return this.build(tid); // compaction: a fresh graph without the tombstones
        if (g.seq - g.savedSeq >= Math.max(50_000, g.hnsw.getCurrentCount() / 5)) return this.save(tid, g);
        return;
      }
      await this.turn();
    }
  }

  /**
   * Before a put: a full graph grows twofold, or as far as the bound lets it (a table just past a power of two is not
   * left to the scan for the doubling); false when it cannot grow at all.
   */
  private room(tid: number, g: Graph): boolean {
    const h = g.hnsw;
    if (h.getCurrentCount() < h.getMaxElements()) return true;
    const next = Math.min(h.getMaxElements() * 2, this.mostNodes(tid, h.getNumDimensions()));
    if (next <= h.getMaxElements()) return false;
    h.resizeIndex(next);
    return true;
  }

  private put(g: Graph, part: number, blob: Buffer | null | undefined): void {
    // A vector of another length than the graph's is never added: hnswlib-node aborts the whole process on one (a
    // native fatal error, not an exception). The API cannot store one (a corpus's length is fixed by its encoder);
    // a row with one is not in the graph, so the vector side never returns it, and the rest keep being served.
    if (blob && blob.byteLength !== 4 * g.hnsw.getNumDimensions()) return;
    if (blob) {
      const h = g.hnsw;
      h.addPoint(Array.from(new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4)), part);
      // Parts get fresh rowids, so an add is a new node (a reused rowid of a live part would be counted twice, harmlessly).
      g.deleted.delete(part);
      g.live++;
    } else if (!g.deleted.has(part)) {
      try {
        g.hnsw.markDelete(part);
        g.deleted.add(part);
        g.live--;
      } catch {
        // never added (removed before the graph saw it)
      }
    }
  }

  private stampOf(tid: number): string | undefined {
    const row = this.conn.statement('SELECT ann_stamp FROM si_indexes WHERE tid = ?').get(tid) as { ann_stamp: string | null } | undefined;
    return row && (row.ann_stamp ?? 'legacy');
  }

  /** Loads the newest saved graph or builds one from the rows, in slices; the old graph (if any) serves meanwhile. */
  private async build(tid: number): Promise<void> {
    const stamp = this.stampOf(tid);
    if (!stamp || this.budget.isLeft(tid)) return; // a table left to the exact scan waits for largeEnough to take it back
    const loaded = this.graphs.has(tid) ? undefined : await this.load(tid, stamp);
    if (this.closed) return;
    if (loaded && !this.fits(tid, loaded.hnsw.getMaxElements(), loaded.hnsw.getNumDimensions())) return this.leaveToExactScan(tid, loaded.live);
    if (loaded) {
      this.counts.loaded++;
      this.graphs.set(tid, loaded);
      return this.catchUpSliced(tid);
    }
    const seq = this.head(tid);
    const count = this.conn.statement(`SELECT COUNT(*) FROM si_${tid}_parts WHERE vector IS NOT NULL`).pluck().get() as number;
    const hnsw = this.newGraph(tid, Math.max(1024, Math.ceil(count * 1.2)));
    if (!hnsw) return;
    if (!this.fits(tid, hnsw.getMaxElements(), hnsw.getNumDimensions())) return this.leaveToExactScan(tid, count);
    const g: Graph = { hnsw, stamp, seq, savedSeq: -1, deleted: new Set(), live: 0, saving: false };
    const page = this.conn.statement(`SELECT rowid AS id, vector FROM si_${tid}_parts WHERE rowid > ? AND vector IS NOT NULL ORDER BY rowid LIMIT ${PAGE}`);
    let after = 0;
    let started = performance.now();
    for (;;) {
      // A table id is reused after a drop: the stamp tells this table from a newer one of the same id.
      if (this.closed || this.stampOf(tid) !== stamp) return;
      const rows = page.all(after) as { id: number; vector: Buffer }[];
      for (const r of rows) {
        if (!this.room(tid, g)) return this.leaveToExactScan(tid, count); // the table grew past the bound while read
        this.put(g, r.id, r.vector);
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1].id;
      if (performance.now() - started > this.slice) {
        await this.turn();
        started = performance.now();
      }
    }
    if (this.closed) return;
    this.counts.built++;
    this.graphs.set(tid, g);
    await this.catchUpSliced(tid);
    if (this.graphs.get(tid) === g && !g.saving) await this.save(tid, g);
  }

  private newGraph(tid: number, capacity: number): HierarchicalNSW | undefined {
    const probe = this.conn.statement(`SELECT vector FROM si_${tid}_parts WHERE vector IS NOT NULL LIMIT 1`).pluck().get() as Buffer | undefined;
    if (!probe) return undefined;
    const hnsw = new HierarchicalNSW('cosine', probe.byteLength / 4);
    hnsw.initIndex({ maxElements: capacity, m: this.options.m ?? 16, efConstruction: this.options.efConstruction ?? 100, randomSeed: 19 });
    return hnsw;
  }

  private files(tid: number, stamp?: string): string[] {
    const dir = this.options.dir;
    if (!dir || !existsSync(dir)) return [];
    return readdirSync(dir).filter((f) => f.startsWith(`si_${tid}_${stamp ?? ''}`));
  }

  private async load(tid: number, stamp: string): Promise<Graph | undefined> {
    const head = this.head(tid);
    const floor = this.floor(tid);
    const saved = this.files(tid, stamp)
      .map((f) => ({ f, ...positionOf(f) }))
      // A file ahead of the log belongs to a database restored from backup; one behind the floor misses cut entries.
      .filter((x) => Number.isInteger(x.seq) && x.seq <= head && x.seq >= floor)
      .sort((a, b) => b.seq - a.seq)[0];
    const probe = this.conn.statement(`SELECT vector FROM si_${tid}_parts WHERE vector IS NOT NULL LIMIT 1`).pluck().get() as Buffer | undefined;
    if (!saved || !probe) return undefined;
    try {
      const hnsw = new HierarchicalNSW('cosine', probe.byteLength / 4);
      await this.tracked(hnsw.readIndex(join(this.options.dir!, saved.f)));
      return { hnsw, stamp, seq: saved.seq, savedSeq: saved.seq, deleted: new Set(), live: saved.live, saving: false };
    } catch {
      return undefined;
    }
  }

  private fileName(tid: number, g: Graph): string {
    // The live count is in the name because the file keeps deletion marks but not their number.
    return `si_${tid}_${g.stamp}.${g.seq}.${g.live}.hnsw`;
  }

  /** Written beside the database as a temporary file renamed into place; then the log up to it is cut. */
  private async save(tid: number, g: Graph): Promise<void> {
    const dir = this.options.dir;
    if (!dir) {
      g.savedSeq = g.seq;
      return this.truncate(tid, g.seq);
    }
    const name = this.fileName(tid, g);
    const tmp = join(dir, `${name}.tmp`);
    g.saving = true;
    try {
      ensurePrivateFile(tmp);
      await this.tracked(g.hnsw.writeIndex(tmp));
    } finally {
      g.saving = false;
    }
    if (this.closed) return rmSync(tmp, { force: true }); // the connection may be closed: close() saved what it had
    if (this.publish(tid, g, tmp, name)) await this.truncate(tid, positionOf(name).seq);
  }

  private saveSync(tid: number, g: Graph): void {
    const dir = this.options.dir;
    if (!dir) return;
    const name = this.fileName(tid, g);
    const tmp = join(dir, `${name}.tmp`);
    ensurePrivateFile(tmp);
    g.hnsw.writeIndexSync(tmp);
    this.publish(tid, g, tmp, name);
  }

  private publish(tid: number, g: Graph, tmp: string, name: string): boolean {
    const dir = this.options.dir!;
    if (this.stampOf(tid) !== g.stamp) {
      rmSync(tmp, { force: true });
      return false;
    }
    renameSync(tmp, join(dir, name));
    const seq = positionOf(name).seq;
    g.savedSeq = Math.max(g.savedSeq, seq);
    // Only older files go: another process may have saved a newer one of the same table.
    for (const f of this.files(tid)) if (f !== name && !(positionOf(f).seq > seq)) rmSync(join(dir, f), { force: true });
    return true;
  }

  /**
   * Cuts the table's log up to `upTo`, in small transactions (the projection's writes wait on each one), recording
   * the floor first so no graph behind it applies a tail with a hole.
   */
  private async truncate(tid: number, upTo: number): Promise<void> {
    if (upTo <= this.floor(tid) || !this.conn.db.open) return;
    this.conn
      .statement('INSERT INTO si_vector_log_floor (tid, seq) VALUES (?, ?) ON CONFLICT (tid) DO UPDATE SET seq = max(seq, excluded.seq)')
      .run(tid, upTo);
    const cut = this.conn.statement(`DELETE FROM si_vector_log WHERE seq IN (SELECT seq FROM si_vector_log WHERE tid = ? AND seq <= ? LIMIT ${TRUNCATE_CHUNK})`);
    while (!this.closed && this.conn.db.open && cut.run(tid, upTo).changes === TRUNCATE_CHUNK) await this.turn();
  }
}

function positionOf(file: string): { seq: number; live: number } {
  const [, seq, live] = /\.(\d+)\.(\d+)\.hnsw$/.exec(file) ?? [];
  return { seq: Number(seq), live: Number(live) };
}
