// Over 300 lines: one cache whose build, catch-up, compaction, save and search share the per-table graph state and its invariants.
import { HierarchicalNSW } from 'hnswlib-node';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, ensurePrivateFile } from '../../files/private-files';
import type { SqliteDatabase } from '../../sqlite/sqlite-database';

/** Settings of the approximate vector index (docs/search.md, "Approximate nearest neighbours"). */
export interface AnnOptions {
  /** An index with fewer vectors is scanned exactly (the scan is a few ms there, and exact). Default 10,000. */
  readonly minVectors?: number;
  /** HNSW links per node (M). Default 16. */
  readonly m?: number;
  /** Candidate list while inserting. Default 100. */
  readonly efConstruction?: number;
  /** Candidate list while searching (at least k). Default 200: recall@10 ≥ 0.95 measured on GloVe vectors. */
  readonly efSearch?: number;
  /** Where graphs are saved between runs (DATA_DIR/ann); none keeps them in memory only. */
  readonly dir?: string;
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
/** A background slice of build or catch-up work, so the event loop keeps answering requests. */
const SLICE_MS = 15;
const PAGE = 512;

/**
 * While the projection is writing, background work takes at most a tenth of the event loop, so ingest keeps its
 * pace (a third cost 40% of ingest at 50k chunks, docs/benchmarks.md); queries meanwhile scan exactly.
 */
const BUSY_PAUSE_MS = 9 * SLICE_MS;
const WRITES_RECENT_MS = 200;

/**
 * HNSW graphs (hnswlib-node) over the parts' vectors, one per search-index table, kept as a cache of the SQLite
 * rows: every vector change appends (table, part rowid) to `si_vector_log` in the projection's transaction, and a
 * graph records the log position it reflects. A search first applies the log's tail (the row decides: present → add
 * or update, gone → mark deleted), so a deleted part is never returned; a graph too far behind, or not built yet,
 * leaves the query to the exact scan. Saved files are named by that position, so a crash leaves at worst an older
 * file that the log brings up to date; anything unreadable is rebuilt from the rows.
 */
export class SqliteVectorAnn {
  private readonly graphs = new Map<number, Graph>();
  private readonly busy = new Map<number, Promise<void>>();
  /** Per table, the vector count last counted and the log position then, to skip counting small tables on every query. */
  private readonly counted = new Map<number, { count: number; seq: number }>();
  private readonly minVectors: number;
  private closed = false;
  private lastWrite = -Infinity;
  /** Graphs loaded from a saved file and built from the rows, since start (for benches and tests). */
  readonly counts = { loaded: 0, built: 0 };

  constructor(
    private readonly sqlite: SqliteDatabase,
    private readonly options: AnnOptions = {},
  ) {
    this.minVectors = options.minVectors ?? 10_000;
    sqlite.db.exec(`CREATE TABLE IF NOT EXISTS si_vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, tid INTEGER NOT NULL, part INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS si_vector_log_tid ON si_vector_log (tid, seq);`);
    const columns = sqlite.db.prepare('PRAGMA table_info(si_indexes)').all() as { name: string }[];
    if (!columns.some((c) => c.name === 'ann_stamp')) sqlite.db.exec('ALTER TABLE si_indexes ADD COLUMN ann_stamp TEXT');
    if (options.dir) ensurePrivateDir(options.dir);
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
    this.graphs.delete(tid);
    this.counted.delete(tid);
    if (this.options.dir) for (const f of this.files(tid)) rmSync(join(this.options.dir, f), { force: true });
  }

  /** After a commit that touched these tables: keep their graphs in step (or start one) off the request path. */
  touched(tids: Iterable<number>): void {
    this.lastWrite = performance.now();
    for (const tid of tids) {
      if (this.busy.has(tid)) continue; // its run picks up the change when it ends
      if (this.graphs.has(tid)) this.background(tid, () => this.catchUpSliced(tid));
      else if (this.largeEnough(tid)) this.background(tid, () => this.build(tid));
    }
  }

  /**
   * The k nearest parts (rowid, cosine distance), or undefined when the exact scan must answer: a small table, a
   * graph not built or too far behind, or (with `keep`, the filter) too few candidates passing it.
   */
  nearest(tid: number, vector: readonly number[], k: number, keep?: (ids: number[]) => Set<number>): { id: number; s: number }[] | undefined {
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
    // A filter is checked on an over-fetched candidate list; if fewer than k pass, the filter is selective and the exact scan answers.
    const want = Math.min(keep ? Math.max(10 * k, 500) : k, g.hnsw.getMaxElements(), live);
    g.hnsw.setEf(Math.max(this.options.efSearch ?? 200, want));
    let found: { neighbors: number[]; distances: number[] };
    try {
      found = g.hnsw.searchKnn(Array.from(vector), want);
    } catch {
      return undefined; // e.g. a query vector of another dimension: the exact scan answers as it always did
    }
    const { neighbors, distances } = found;
    let hits = neighbors.map((id, i) => ({ id, s: distances[i] }));
    if (keep) {
      const passing = keep(neighbors);
      hits = hits.filter((h) => passing.has(h.id));
      if (hits.length < k && live > want) return undefined;
    }
    return hits.slice(0, k);
  }

  /** Resolves when no build, catch-up or save is running (tests, benches). */
  async whenIdle(): Promise<void> {
    while (this.busy.size > 0) await Promise.all([...this.busy.values()]);
  }

  /** Saves every graph changed since its last save (on shutdown). */
  close(): void {
    this.closed = true;
    for (const [tid, g] of this.graphs) if (g.seq > g.savedSeq && !g.saving) this.saveSync(tid, g);
    this.graphs.clear();
  }

  /** A turn of the event loop between slices; a longer pause while batches are being applied. */
  private turn(): Promise<void> {
    const pause = performance.now() - this.lastWrite < WRITES_RECENT_MS ? BUSY_PAUSE_MS : 0;
    return new Promise((resolve) => (pause ? setTimeout(resolve, pause) : setImmediate(resolve)));
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
        if (g && this.sqlite.db.open && this.tail(tid, g.seq, 1).length > 0) this.background(tid, () => this.catchUpSliced(tid));
      });
    this.busy.set(tid, run);
  }

  private largeEnough(tid: number): boolean {
    if (!Number.isFinite(this.minVectors)) return false;
    const head = this.head(tid);
    const last = this.counted.get(tid);
    // The count can have grown by at most one per log entry since it was taken.
    if (last && last.count + (head - last.seq) < this.minVectors) return false;
    const count = this.sqlite.statement(`SELECT COUNT(*) FROM si_${tid}_parts WHERE vector IS NOT NULL`).pluck().get() as number;
    this.counted.set(tid, { count, seq: head });
    return count >= this.minVectors;
  }

  private head(tid: number): number {
    return (this.sqlite.statement('SELECT MAX(seq) FROM si_vector_log WHERE tid = ?').pluck().get(tid) as number | null) ?? 0;
  }

  private tail(tid: number, after: number, limit: number): { seq: number; part: number }[] {
    return this.sqlite.statement('SELECT seq, part FROM si_vector_log WHERE tid = ? AND seq > ? ORDER BY seq LIMIT ?').all(tid, after, limit) as { seq: number; part: number }[];
  }

  /** Applies up to `limit` log entries; true when the graph is then at the head. */
  private catchUp(tid: number, g: Graph, limit: number): boolean {
    const entries = this.tail(tid, g.seq, limit);
    const read = this.sqlite.statement(`SELECT vector FROM si_${tid}_parts WHERE rowid = ?`).pluck();
    for (const { seq, part } of entries) {
      this.put(g, part, read.get(part) as Buffer | null | undefined);
      g.seq = seq;
    }
    return entries.length < limit;
  }

  private async catchUpSliced(tid: number): Promise<void> {
    for (;;) {
      const g = this.graphs.get(tid);
      if (!g || g.saving || this.closed) return;
      const started = performance.now();
      let done = false;
      while (!done && performance.now() - started < SLICE_MS) done = this.catchUp(tid, g, 32);
      if (done) {
        if (g.hnsw.getCurrentCount() - g.live > 0.2 * g.hnsw.getCurrentCount()) return this.build(tid); // compaction: a fresh graph without the tombstones
        if (g.seq - g.savedSeq >= Math.max(50_000, g.hnsw.getCurrentCount() / 5)) return this.save(tid, g);
        return;
      }
      await this.turn();
    }
  }

  private put(g: Graph, part: number, blob: Buffer | null | undefined): void {
    if (blob) {
      const h = g.hnsw;
      if (h.getCurrentCount() >= h.getMaxElements()) h.resizeIndex(h.getMaxElements() * 2);
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

  /** Loads the newest saved graph or builds one from the rows, in slices; the old graph (if any) serves meanwhile. */
  private async build(tid: number): Promise<void> {
    const stamp = (this.sqlite.statement('SELECT ann_stamp FROM si_indexes WHERE tid = ?').pluck().get(tid) as string | null | undefined) ?? 'legacy';
    const loaded = this.graphs.has(tid) ? undefined : await this.load(tid, stamp);
    if (loaded && !this.closed) {
      this.counts.loaded++;
      this.graphs.set(tid, loaded);
      return this.catchUpSliced(tid);
    }
    const seq = this.head(tid);
    const count = this.sqlite.statement(`SELECT COUNT(*) FROM si_${tid}_parts WHERE vector IS NOT NULL`).pluck().get() as number;
    const hnsw = this.newGraph(tid, Math.max(1024, Math.ceil(count * 1.2)));
    if (!hnsw) return;
    const g: Graph = { hnsw, stamp, seq, savedSeq: -1, deleted: new Set(), live: 0, saving: false };
    const page = this.sqlite.statement(`SELECT rowid AS id, vector FROM si_${tid}_parts WHERE rowid > ? AND vector IS NOT NULL ORDER BY rowid LIMIT ${PAGE}`);
    let after = 0;
    let started = performance.now();
    for (;;) {
      if (this.closed || !this.stillThere(tid)) return;
      const rows = page.all(after) as { id: number; vector: Buffer }[];
      for (const r of rows) this.put(g, r.id, r.vector);
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1].id;
      if (performance.now() - started > SLICE_MS) {
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
    const probe = this.sqlite.statement(`SELECT vector FROM si_${tid}_parts WHERE vector IS NOT NULL LIMIT 1`).pluck().get() as Buffer | undefined;
    if (!probe) return undefined;
    const hnsw = new HierarchicalNSW('cosine', probe.byteLength / 4);
    hnsw.initIndex({ maxElements: capacity, m: this.options.m ?? 16, efConstruction: this.options.efConstruction ?? 100, randomSeed: 19 });
    return hnsw;
  }

  private stillThere(tid: number): boolean {
    return this.sqlite.statement('SELECT 1 FROM si_indexes WHERE tid = ?').pluck().get(tid) !== undefined;
  }

  private files(tid: number, stamp?: string): string[] {
    const dir = this.options.dir;
    if (!dir || !existsSync(dir)) return [];
    return readdirSync(dir).filter((f) => f.startsWith(`si_${tid}_${stamp ?? ''}`));
  }

  private async load(tid: number, stamp: string): Promise<Graph | undefined> {
    const head = this.head(tid);
    const saved = this.files(tid, stamp)
      .map((f) => {
        const [, seq, live] = /\.(\d+)\.(\d+)\.hnsw$/.exec(f) ?? [];
        return { f, seq: Number(seq), live: Number(live) };
      })
      .filter((x) => Number.isInteger(x.seq) && x.seq <= head) // a file ahead of the log belongs to a database restored from backup
      .sort((a, b) => b.seq - a.seq)[0];
    const probe = this.sqlite.statement(`SELECT vector FROM si_${tid}_parts WHERE vector IS NOT NULL LIMIT 1`).pluck().get() as Buffer | undefined;
    if (!saved || !probe) return undefined;
    try {
      const hnsw = new HierarchicalNSW('cosine', probe.byteLength / 4);
      await hnsw.readIndex(join(this.options.dir!, saved.f));
      return { hnsw, stamp, seq: saved.seq, savedSeq: saved.seq, deleted: new Set(), live: saved.live, saving: false };
    } catch {
      return undefined;
    }
  }

  private fileName(tid: number, g: Graph): string {
    // The live count is in the name because the file keeps deletion marks but not their number.
    return `si_${tid}_${g.stamp}.${g.seq}.${g.live}.hnsw`;
  }

  /** Written beside the database as a temporary file renamed into place; older files of the table are removed after. */
  private async save(tid: number, g: Graph): Promise<void> {
    const dir = this.options.dir;
    if (!dir) return;
    const name = this.fileName(tid, g);
    const tmp = join(dir, `${name}.tmp`);
    g.saving = true;
    try {
      ensurePrivateFile(tmp);
      await g.hnsw.writeIndex(tmp);
    } finally {
      g.saving = false;
    }
    if (this.closed) return rmSync(tmp, { force: true }); // the database may be closed: close() saved what it had
    this.publish(tid, g, tmp, name);
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

  private publish(tid: number, g: Graph, tmp: string, name: string): void {
    const dir = this.options.dir!;
    if (!this.stillThere(tid)) return rmSync(tmp, { force: true });
    renameSync(tmp, join(dir, name));
    g.savedSeq = Math.max(g.savedSeq, Number(/\.(\d+)\.\d+\.hnsw$/.exec(name)![1]));
    for (const f of this.files(tid)) if (f !== name) rmSync(join(dir, f), { force: true });
  }
}
