/** Default of `LexicalIndexOptions.maxBytes` and `AnnOptions.maxBytes`. */
export const CACHE_MAX_BYTES = 2 ** 30;
/**
 * Milliseconds of a build or catch-up between two looks at the postings' size: a look walks every list (~8 ms at a
 * million rows; every 32 slices it was 3% of a build's time). A second of building adds ~30 MB at most.
 */
const LOOK_EVERY_MS = 1_000;
/** A table left to the slower path for its size is cached again once its rows have fallen below this share of their count then. */
const RETRY_BELOW = 0.75;

/**
 * A bound on the memory of a cache of the SQLite rows, the lexical postings (docs/search.md, "A bound on the
 * postings' memory") or the HNSW graphs ("A bound on the graphs' memory"): a table whose cache would take every
 * table's past `maxBytes` is left to the exact, slower path (FTS5, the exact scan) until its rows fall by a quarter or
 * the process restarts. A bound rather than an error: a caller writing millions of distinct words (each a slot or a
 * list of the postings), or of tiny parts (each a node of a graph), must not be able to grow the process without limit.
 */
export class CacheBudget {
  /** Tables left to the slower path, and their row count then. */
  private readonly left = new Map<number, number>();

  constructor(
    readonly maxBytes = CACHE_MAX_BYTES,
    /** Told when a table is left to the slower path (the service logs it: queries there are slower until it returns). */
    private readonly onLeave?: (tid: number, rows: number) => void,
  ) {}

  /** Whether `bytes` (asked only when there is a bound) are past it. */
  past(bytes: () => number): boolean {
    return Number.isFinite(this.maxBytes) && bytes() > this.maxBytes;
  }

  leave(tid: number, rows: number): void {
    this.left.set(tid, rows);
    this.onLeave?.(tid, rows);
  }

  forget(tid: number): void {
    this.left.delete(tid);
  }

  /** Whether the table is left to the slower path. */
  isLeft(tid: number): boolean {
    return this.left.has(tid);
  }

  /** False while the table is left to the slower path and its rows have not fallen by a quarter since. */
  mayBuild(tid: number, rows: number): boolean {
    const leftAt = this.left.get(tid);
    if (leftAt === undefined) return true;
    if (rows > RETRY_BELOW * leftAt) return false;
    this.left.delete(tid);
    return true;
  }

  /** True once a second: when a long build or catch-up looks at the size again. */
  static looks(): () => boolean {
    let last = performance.now();
    return () => {
      const now = performance.now();
      if (now - last < LOOK_EVERY_MS) return false;
      last = now;
      return true;
    };
  }
}
