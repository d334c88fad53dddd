// Over 300 lines: one class whose build, catch-up, rebuild-far-behind and ranking-thread decisions share the lexicons
// and the change log.
import { documentRowOf } from '../document-row';
import type { SqliteDatabase } from '../../../sqlite/sqlite-database';
import { fts5RowCount } from '../fts5/fts5-statistics';
import { Fts5RowTokens } from '../fts5/fts5-row-tokens';
import { LexicalTable } from './lexical-postings';
import { buildLexicon } from './lexical-build';
import { CacheBudget } from '../cache-budget';
import type { RangeRanker, Split } from './lexical-split';
import { ThreadChoice } from './lexical-thread-choice';
import { LexicalThreadClient } from './lexical-thread-client';

/** Settings of the in-memory lexical index (docs/search.md, "Lexical index"). */
export interface LexicalIndexOptions {
  /** A table with fewer parts is ranked by FTS5's bm25(). Default 1,000 (docs/search.md, "The threshold"); Infinity: never. */
  readonly minRows?: number;
  /** Column weights (text, title) of the parts and of the documents tables, as the ranker passes them to bm25(). */
  readonly partWeights?: readonly [number, number];
  readonly documentWeights?: readonly [number, number];
  /**
   * A query with at least this many postings on a table is ranked on two threads (docs/search.md, "Ranking on two
   * threads"). Default 150,000; Infinity: one thread, never started.
   */
  readonly threadMinPostings?: number;
  /**
   * An index far behind (more new parts than a quarter of those it holds) is built afresh once no write came to its
   * table for this long, rather than caught up by appends; a build the writes outran waits as long. Default 1,000 ms
   * (docs/search.md, "Catching up or building afresh").
   */
  readonly rebuildQuietMs?: number;
  /**
   * The most bytes the postings' arrays may hold, every table together (default 1 GiB; Infinity: no bound). A table
   * whose build or catch-up would pass it is left to FTS5 (docs/search.md, "A bound on the postings' memory").
   */
  readonly maxBytes?: number;
  /** Told when a table is left to FTS5 for the bound: its rows then. */
  readonly onLeft?: (tid: number, rows: number) => void;
}

/** One search-index table's postings: its parts and its documents, and the log position both reflect. */
export interface Lexicon {
  readonly parts: LexicalTable;
  readonly docs: LexicalTable;
  seq: number;
  /** Within the entry after `seq`, the first row not applied yet (a large document's entry is applied in steps). */
  resumeAt?: number;
}

/** Rows applied in one step of a catch-up, however large the document (a few ms). */
const ROWS_PER_STEP = 512;
/** Log entries applied on a query's own turn (each a document's parts or its document row). */
const SYNC_CATCH_UP = 32;
const SLICE_MS = 15;
/**
 * The build's slices are shorter: its steps (a page of rows, of terms, a common term's occurrences) run 2-12 ms each
 * and a slice ends after the step that crosses its budget, so 15 ms slices held the loop 20-30 ms (session 15).
 */
const BUILD_SLICE_MS = 8;
/** While batches are being applied, background work takes at most a tenth of the event loop (as the HNSW graph). */
const BUSY_PAUSE_MS = 9 * SLICE_MS;
const WRITES_RECENT_MS = 200;
/**
 * An index behind by more new parts than this share of those it holds is built afresh rather than caught up, once
 * the writes pause: a build reads FTS5's own index (~25,000 rows/s at 1M) where catching up tokenizes each row again
 * (~3,600 rows/s), and it sizes each list exactly, where appends grow a full list by half again (a million caught
 * up from ~400k held 715 MB of postings against 583 built at once, and the replaced arrays' garbage on top). Not
 * while writes come: a build then chases the growing table and appends what came meanwhile to lists built exactly
 * full, each grown by half at its first append (839 MB; session 17).
 */
const REBUILD_BEHIND = 0.25;
/**
 * In-memory inverted indexes of the embedded search index's FTS5 tables, a cache of their rows kept in step the
 * way the HNSW graphs are (sqlite-vector-ann.ts): every write appends (table, parts or documents, rowid range) to
 * `si_lexical_log` in the projection's transaction, and an index records the log position it reflects. Before a
 * query the tail is applied (the row decides: present → indexed afresh, gone → tombstoned), so replaying is
 * idempotent; an index too far behind, or not built yet, leaves the query to FTS5. Built from FTS5's own index
 * (its vocabulary and row sizes) in slices between turns of the event loop; rebuilt when a fifth of its rows are
 * tombstones. Not persisted: a build reads FTS5's index, which is already on disk (docs/search.md).
 */
export class SqliteLexicalIndex {
  private readonly lexicons = new Map<number, Lexicon>();
  private readonly busy = new Map<number, Promise<void>>();
  private readonly tokens = new Fts5RowTokens();
  private readonly minRows: number;
  /** `rebuildQuietMs`. */
  private readonly quietMs: number;
  private thread?: LexicalThreadClient;
  private readonly choices = new WeakMap<LexicalTable, ThreadChoice>();
  private closed = false;
  private lastWrite = -Infinity;
  /** Per table, when a write last touched it: a rebuild waits for its own table's writes to pause, not every table's. */
  private readonly lastWriteOf = new Map<number, number>();
  private readonly budget: CacheBudget;
  /**
   * Indexes built since start, the last build's ms, builds that replaced an index far behind, tables left to FTS5
   * for the postings' size, and builds the writes outran (benches and tests).
   */
  readonly stats = { built: 0, lastBuildMs: 0, rebuiltBehind: 0, leftOverBudget: 0, outrun: 0 };

  constructor(
    private readonly sqlite: SqliteDatabase,
    private readonly options: LexicalIndexOptions = {},
  ) {
    this.minRows = options.minRows ?? 1_000;
    this.quietMs = options.rebuildQuietMs ?? 1_000;
    this.budget = new CacheBudget(options.maxBytes, options.onLeft);
    sqlite.db.exec(`CREATE TABLE IF NOT EXISTS si_lexical_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, tid INTEGER NOT NULL, docs INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS si_lexical_log_tid ON si_lexical_log (tid, seq);`);
  }

  /** In the projection's transaction: rows lo..hi of the parts (or documents) table were written or deleted. */
  changed(tid: number, docs: boolean, lo: number, hi: number): void {
    this.sqlite.statement('INSERT INTO si_lexical_log (tid, docs, lo, hi) VALUES (?, ?, ?, ?)').run(tid, docs ? 1 : 0, lo, hi);
  }

  /** In the projection's transaction: the table is gone. */
  dropped(tid: number): void {
    this.sqlite.statement('DELETE FROM si_lexical_log WHERE tid = ?').run(tid);
    this.lexicons.delete(tid);
    this.lastWriteOf.delete(tid);
    this.budget.forget(tid);
  }

  /** After a commit that wrote these tables: catch their indexes up (or build one) off the request path. */
  touched(tids: Iterable<number>): void {
    this.lastWrite = performance.now();
    for (const tid of tids) {
      this.lastWriteOf.set(tid, this.lastWrite);
      if (this.busy.has(tid)) continue; // its run picks up the change when it ends
      if (this.lexicons.has(tid)) this.background(tid, () => this.catchUpSliced(tid));
      else if (this.largeEnough(tid)) this.background(tid, () => this.build(tid));
    }
  }

  /** The table's postings at the log's head, or undefined when FTS5 must answer (small, not built, far behind). */
  ready(tid: number): Lexicon | undefined {
    const lx = this.lexicons.get(tid);
    if (!lx) {
      if (!this.busy.has(tid) && this.largeEnough(tid)) this.background(tid, () => this.build(tid));
      return undefined;
    }
    if (!this.catchUp(tid, lx, SYNC_CATCH_UP)) {
      this.background(tid, () => this.catchUpSliced(tid));
      return undefined;
    }
    return lx.parts.liveRows >= this.minRows ? lx : undefined;
  }

  async whenIdle(): Promise<void> {
    while (this.busy.size > 0) await Promise.all([...this.busy.values()]);
  }

  /**
   * Ranking on two threads, or undefined (one thread). The thread is started by the first query large enough to
   * use it, which ranks on one thread, as every query does until the thread is up or if it failed.
   */
  split(): Split | undefined {
    const minPostings = this.options.threadMinPostings ?? 150_000;
    if (!Number.isFinite(minPostings) || this.closed) return undefined;
    // Per table: a table's cost per posting differs (the documents' rows are 20 times longer at 1M).
    const choiceOf = (table: LexicalTable) => {
      let choice = this.choices.get(table);
      if (!choice) this.choices.set(table, (choice = new ThreadChoice(minPostings)));
      return choice;
    };
    return {
      thread: (table, postings) => (postings >= minPostings && this.rankingThread() && choiceOf(table).twoThreads(postings) ? this.thread : undefined),
      took: (table, postings, two, ms) => choiceOf(table).took(postings, two, ms),
    };
  }

  /** The ranking thread, started if it was not; undefined until it is up, or if it failed. */
  rankingThread(): RangeRanker | undefined {
    if (this.closed) return undefined;
    this.thread ??= new LexicalThreadClient();
    return this.thread.usable ? this.thread : undefined;
  }

  /** Ranges the ranking thread ranked (benches and tests). */
  get threadJobs(): number {
    return this.thread?.jobs ?? 0;
  }

  /** Ranges taken back before the ranking thread started them (benches). */
  get threadTakenBack(): number {
    return this.thread?.takenBack ?? 0;
  }

  /** Bytes the postings hold (benches). */
  bytes(): number {
    let b = 0;
    for (const lx of this.lexicons.values()) b += lx.parts.bytes() + lx.docs.bytes();
    return b;
  }

  /** Resolves once the ranking thread is gone. */
  async close(): Promise<void> {
    this.closed = true;
    this.lexicons.clear();
    this.tokens.close();
    await this.thread?.close();
  }

  /** A turn of the event loop between slices; a longer pause while batches are being applied. */
  private turn(): Promise<void> {
    const pause = performance.now() - this.lastWrite < WRITES_RECENT_MS ? BUSY_PAUSE_MS : 0;
    return new Promise((resolve) => (pause ? setTimeout(resolve, pause) : setImmediate(resolve)));
  }

  private background(tid: number, work: () => Promise<void>): void {
    if (this.busy.has(tid) || this.closed) return;
    // Started on a later turn: never inside the projection's applyBatch or a query.
    const run = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch(() => {
        this.lexicons.delete(tid); // an index that failed is dropped: FTS5 answers, the next change retries
      })
      .finally(() => {
        this.busy.delete(tid);
        const lx = this.closed ? undefined : this.lexicons.get(tid);
        if (lx && this.sqlite.db.open && this.tail(tid, lx.seq, 1).length > 0) this.background(tid, () => this.catchUpSliced(tid));
      });
    this.busy.set(tid, run);
  }

  private largeEnough(tid: number): boolean {
    if (!Number.isFinite(this.minRows) || !this.stillThere(tid)) return false;
    const rows = fts5RowCount(this.sqlite, `si_${tid}_fts`);
    return this.budget.mayBuild(tid, rows) && rows >= this.minRows;
  }

  /** Whether the postings, with `building` (an index not in use yet), are past the bound. */
  private pastBudget(building?: Lexicon): boolean {
    return this.budget.past(() => this.bytes() + (building ? building.parts.bytes() + building.docs.bytes() : 0));
  }

  /** The table's postings would pass the bound: dropped, and the table left to FTS5 (cache-budget.ts). */
  private leaveToFts5(tid: number): void {
    this.lexicons.delete(tid);
    this.budget.leave(tid, fts5RowCount(this.sqlite, `si_${tid}_fts`));
    this.stats.leftOverBudget++;
  }

  private stillThere(tid: number): boolean {
    return this.sqlite.statement('SELECT 1 FROM si_indexes WHERE tid = ?').pluck().get(tid) !== undefined;
  }

  private head(tid: number): number {
    return (this.sqlite.statement('SELECT MAX(seq) FROM si_lexical_log WHERE tid = ?').pluck().get(tid) as number | null) ?? 0;
  }

  private tail(tid: number, after: number, limit: number): { seq: number; docs: number; lo: number; hi: number }[] {
    return this.sqlite.statement('SELECT seq, docs, lo, hi FROM si_lexical_log WHERE tid = ? AND seq > ? ORDER BY seq LIMIT ?').all(tid, after, limit) as {
      seq: number;
      docs: number;
      lo: number;
      hi: number;
    }[];
  }

  /**
   * Applies up to `limit` log entries, and at most {@link ROWS_PER_STEP} rows of them: an entry is one document's
   * parts, and a document may have 50,000 (tokenizing those at once held the loop ~3 s; session 18), so a large
   * entry is applied a range of rows at a time, resumed by the next call. True when the index is then at the head.
   */
  private catchUp(tid: number, lx: Lexicon, limit: number): boolean {
    const entries = this.tail(tid, lx.seq, limit);
    let rows = 0;
    for (const e of entries) {
      const lo = lx.resumeAt ?? e.lo;
      const hi = Math.min(e.hi, lo + ROWS_PER_STEP - 1);
      if (e.docs) this.reindexDocuments(tid, lx.docs, lo, hi);
      else this.reindexParts(tid, lx.parts, lo, hi);
      rows += hi - lo + 1;
      if (hi < e.hi) {
        lx.resumeAt = hi + 1;
        return false;
      }
      lx.resumeAt = undefined;
      lx.seq = e.seq;
      if (rows >= ROWS_PER_STEP) return entries.length < limit && e === entries[entries.length - 1];
    }
    return entries.length < limit;
  }

  private reindexParts(tid: number, table: LexicalTable, lo: number, hi: number): void {
    const rows = this.sqlite.statement(`SELECT rowid, text, title, doc_row FROM si_${tid}_parts WHERE rowid BETWEEN ? AND ? ORDER BY rowid`).all(lo, hi) as {
      rowid: number;
      text: string;
      title: string | null;
      doc_row: number;
    }[];
    for (let r = lo; r <= hi; r++) table.remove(r);
    this.add(table, rows, this.tokens.tokenize(rows));
  }

  /** A document row is contentless in FTS5: its text is rebuilt from its parts as the index wrote it. */
  private reindexDocuments(tid: number, table: LexicalTable, lo: number, hi: number): void {
    const docs = this.sqlite.statement(`SELECT rowid, doc_id FROM si_${tid}_docs WHERE rowid BETWEEN ? AND ? ORDER BY rowid`).all(lo, hi) as { rowid: number; doc_id: string }[];
    const partsOf = this.sqlite.statement(`SELECT text, title FROM si_${tid}_parts WHERE doc_id = ? ORDER BY rowid`);
    const rows = docs.map(({ rowid, doc_id }) => ({ rowid, ...documentRowOf(partsOf.iterate(doc_id) as IterableIterator<{ text: string; title: string | null }>), doc_row: -1 }));
    for (let r = lo; r <= hi; r++) table.remove(r);
    this.add(table, rows, this.tokens.tokenize(rows));
  }

  private add(table: LexicalTable, rows: { rowid: number; doc_row: number }[], tokenized: ReturnType<Fts5RowTokens['tokenize']>): void {
    rows.forEach((row, i) => {
      const id = table.addRow(row.rowid, tokenized[i].len, row.doc_row);
      for (const [term, [text, title]] of tokenized[i].terms) table.addPosting(term, id, text, title);
    });
  }

  private async catchUpSliced(tid: number): Promise<void> {
    const lookAgain = CacheBudget.looks();
    for (;;) {
      const lx = this.lexicons.get(tid);
      if (!lx || this.closed) return;
      // Looked at every slice: one catch-up may run through a whole ingest, and the writes may stop at any point of it.
      if (this.quietFor(tid) >= this.quietMs && this.farBehind(tid, lx)) {
        // Dropped first, so that its memory serves the new one: meanwhile FTS5 answers, as it does for an index too
        // far behind to catch up on a query's turn.
        this.lexicons.delete(tid);
        this.stats.rebuiltBehind++;
        return this.build(tid);
      }
      const started = performance.now();
      let done = false;
      while (!done && performance.now() - started < SLICE_MS) done = this.catchUp(tid, lx, 4);
      if ((done || lookAgain()) && this.pastBudget()) return this.leaveToFts5(tid);
      if (done) {
        const stale = (t: LexicalTable) => t.dead > 0.2 * t.count;
        if (stale(lx.parts) || stale(lx.docs)) return this.build(tid); // compaction: a fresh index without the tombstones
        return;
      }
      await this.turn();
    }
  }

  /** More parts were added since the index's newest than {@link REBUILD_BEHIND} of its live parts. */
  private farBehind(tid: number, lx: Lexicon): boolean {
    const { parts } = lx;
    const indexed = parts.count > 0 ? parts.rowidOf[parts.count - 1] : 0;
    return this.newestPart(tid) - indexed > this.behindBy(parts.liveRows);
  }

  /** How many parts newer than an index's newest make it far behind: {@link REBUILD_BEHIND} of those it holds. */
  private behindBy(rows: number): number {
    return REBUILD_BEHIND * Math.max(rows, this.minRows);
  }

  private newestPart(tid: number): number {
    return (this.sqlite.statement(`SELECT MAX(rowid) FROM si_${tid}_parts`).pluck().get() as number | null) ?? 0;
  }

  /**
   * Builds the table's index; a build the writes outran (the table grew by more than a quarter while FTS5's index was
   * read, or the catch-up after it is far behind, as {@link farBehind} says) is dropped, and built afresh once no
   * write came to the table for `rebuildQuietMs` (writes to other tables do not hold it back). Before, such a build
   * chased the table through a whole ingest, unpublished, its lists built exactly full and grown at every append (a
   * million chunks: 707 MB of postings and ~2.4 GB of RSS after it, against 699 MB and ~1.9 GB built at once;
   * session 26).
   */
  private async build(tid: number): Promise<void> {
    while ((await this.buildOnce(tid)) === 'outrun') {
      this.stats.outrun++;
      await this.untilQuiet(tid);
      if (this.closed) return;
    }
  }

  /** ms since a write last touched the table. */
  private quietFor(tid: number): number {
    return performance.now() - (this.lastWriteOf.get(tid) ?? -Infinity);
  }

  /** Resolves once no write has come to the table for `rebuildQuietMs` (or the index is closed). */
  private async untilQuiet(tid: number): Promise<void> {
    for (;;) {
      const left = this.quietMs - this.quietFor(tid);
      if (left <= 0 || this.closed) return;
      await new Promise((resolve) => setTimeout(resolve, left).unref());
    }
  }

  /** Builds from FTS5's index in slices (the old index, if any, serves meanwhile), then replays the log from its start. */
  private async buildOnce(tid: number): Promise<'outrun' | void> {
    const started = performance.now();
    const seq = this.head(tid);
    const { partWeights = [1, 1], documentWeights = [1, 1] } = this.options;
    const lx: Lexicon = { parts: new LexicalTable(partWeights), docs: new LexicalTable(documentWeights), seq };
    const lookAgain = CacheBudget.looks();
    let past = false;
    // FTS5's index is read up to its end, which moves while writes come: a build the table outgrows chases it.
    const [newestAtStart, rowsAtStart] = [this.newestPart(tid), fts5RowCount(this.sqlite, `si_${tid}_fts`)];
    let outgrown = false;
    const keepGoing = () =>
      !this.closed &&
      this.stillThere(tid) &&
      !(outgrown ||= this.newestPart(tid) - newestAtStart > this.behindBy(rowsAtStart)) &&
      !(past ||= lookAgain() && this.pastBudget(lx));
    const built = (await buildLexicon(this.sqlite, tid, lx, { keepGoing, turn: () => this.turn(), sliceMs: BUILD_SLICE_MS })) && keepGoing();
    if (outgrown) return 'outrun';
    if (past) return this.leaveToFts5(tid);
    if (!built) return;
    while (!this.catchUp(tid, lx, 64)) {
      if (this.farBehind(tid, lx)) return 'outrun';
      await this.turn();
    }
    if (this.pastBudget(lx)) return this.leaveToFts5(tid);
    this.stats.built++;
    this.stats.lastBuildMs = performance.now() - started;
    this.lexicons.set(tid, lx);
  }
}

