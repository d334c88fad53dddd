import type { SqliteDatabase } from '../../../sqlite/sqlite-database';

/** Leaf pages one merge step writes (~4 KB each): a step holds the loop a few milliseconds, its commit included. */
const STEP_PAGES = 32;
/**
 * Segments a level holds before it is merged (FTS5's `usermerge`; its automerge used 4). Merging at 4 rewrote each
 * row once per level of a 4-way tree: with these steps that cost ~12% more CPU on the index's writes than automerge
 * did; at 8 the levels are fewer and the premium ~4%, with FTS5 queries as fast (SciFact, session 15).
 */
const SEGMENTS_PER_MERGE = 8;
/**
 * Commits of a table between two looks for merge work: each commit adds one segment, and a level is merged once it
 * holds {@link SEGMENTS_PER_MERGE}, so a look after every commit would mostly find nothing, at the price of a transaction.
 */
const COMMITS_PER_LOOK = SEGMENTS_PER_MERGE;

/**
 * FTS5 merges its segments inside the commit that wrote them (`automerge`): a commit that crossed one of its
 * 64-page work units merged 64 pages per level there and then, holding the event loop 12-33 ms while the search
 * projection's batch itself took 1-2 ms (docs/benchmarks/2026-11-26-session-15.md). The search index's tables are created
 * with `automerge` off, and this runs the merging (FTS5's `merge` command, which merges a level once it holds
 * `usermerge` segments) in steps of {@link STEP_PAGES} pages, each in its own transaction,
 * with a turn of the loop between steps, every few commits of a table and on until FTS5 reports nothing left
 * to merge. FTS5's crisis merge (16 segments on a level) stays on: a process that wrote and stopped before merging
 * (the CLI) leaves at worst what FTS5 itself bounds. Rejected: merging on a thread of its own (its write lock would
 * make the loop's projection commits wait in SQLite's busy handler); smaller FTS5 pages (30-40% more commit work).
 */
export class Fts5Merges {
  private readonly pending = new Set<string>();
  /** Commits per table since its last look for merge work. */
  private readonly commits = new Map<string, number>();
  private running = false;
  private closed = false;

  constructor(private readonly sqlite: SqliteDatabase) {}

  /** For a new FTS5 table: its merging is left to this class. */
  static disableAutomerge(sqlite: SqliteDatabase, fts: string): void {
    sqlite.db.exec(`INSERT INTO ${fts} (${fts}, rank) VALUES ('automerge', 0)`);
    sqlite.db.exec(`INSERT INTO ${fts} (${fts}, rank) VALUES ('usermerge', ${SEGMENTS_PER_MERGE})`);
  }

  /** After a commit that wrote these FTS5 tables: merge them in the background. */
  touched(tables: Iterable<string>): void {
    for (const t of tables) {
      const n = (this.commits.get(t) ?? 0) + 1;
      if (n < COMMITS_PER_LOOK) this.commits.set(t, n);
      else {
        this.commits.delete(t);
        this.pending.add(t);
      }
    }
    if (!this.running && this.pending.size > 0 && !this.closed) {
      this.running = true;
      setImmediate(() => this.step());
    }
  }

  /** The table is gone (in the transaction dropping it). */
  dropped(fts: string): void {
    this.pending.delete(fts);
    this.commits.delete(fts);
  }

  close(): void {
    this.closed = true;
    this.pending.clear();
  }

  /** Resolves once nothing is left to merge (tests). */
  async whenIdle(): Promise<void> {
    while (this.running) await new Promise((r) => setImmediate(r));
  }

  private step(): void {
    const [fts] = this.pending;
    if (fts === undefined || this.closed || !this.sqlite.db.open) {
      this.running = false;
      return;
    }
    try {
      if (!this.mergeStep(fts)) this.pending.delete(fts);
    } catch {
      this.pending.delete(fts); // dropped meanwhile, or the database closing: the next write retries
    }
    // From a check-phase callback, the next step runs on the next turn: the loop polls for I/O in between.
    setImmediate(() => this.step());
  }

  /** True when FTS5 merged something (SQLite's documented test: total changes grow by 2 or more). */
  private mergeStep(fts: string): boolean {
    const changes = this.sqlite.statement('SELECT total_changes()').pluck();
    const before = changes.get() as number;
    this.sqlite.transaction(() => this.sqlite.statement(`INSERT INTO ${fts} (${fts}, rank) VALUES ('merge', ${STEP_PAGES})`).run(), 'derived');
    return (changes.get() as number) - before >= 2;
  }
}
