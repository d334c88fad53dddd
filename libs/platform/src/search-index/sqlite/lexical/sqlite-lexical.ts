import type { FilterExpr } from '../../../filter/filter';
import { SqliteDatabase } from '../../../sqlite/sqlite-database';
import { filterToSql } from '../../../sqlite/sqlite-filter';
import { queryTerms } from '../../query-terms';
import { fts5Averages, fts5IdfInC, Fts5Stemmer, fts5RowCount, idfSum } from '../fts5/fts5-statistics';
import { rankFromPostings } from './lexical-indexed';
import { READ_THREAD_MIN_ROWS, SqliteReader } from '../read-thread-client';
import type { SqliteLexicalIndex } from './sqlite-lexical-index';

/**
 * Lexical ranking of the embedded index (docs/search.md, "Lexical scoring"); the weights were tuned on SciFact's
 * train queries only, in both layouts a user indexes it (title as section title, or folded into the text).
 */
export const LEXICAL_TUNING = {
  /** BM25F-style weight of a part's section title against its text (1 = as much as the text). */
  partTitleWeight: 1,
  /** The same for the document row, where each distinct section title is written once. */
  documentTitleWeight: 2,
  /** Weight of the document's normalised BM25 against the part's own in the part's score. */
  documentWeight: 2,
  /** Parts and documents each side ranks before they are combined (at least the page asked for). */
  pool: 300,
};

/** Stems whose counts an index keeps; past it they are counted afresh. */
const MAX_CACHED_STEMS = 100_000;

/** A part's lexical score: `raw` the combined normalised BM25 (0 to ~2.2), `relevance` its calibration into 0–1. */
export interface LexicalScore {
  readonly id: number;
  readonly raw: number;
  readonly relevance: number;
}

/**
 * Calibrated relevance: the share of the query's IDF weight a part (and its document) matched, saturating.
 * Monotone, so it never changes the order; independent of corpus size, so a one-document corpus's clear match
 * scores high where squashed BM25 gave ~1e-7 (FTS5 floors a word in every row at IDF 1e-6).
 */
export const calibrate = (raw: number): number => 1 - Math.exp(-2 * raw);

/**
 * Ranks an index's parts for a query: each part's BM25 (text and section title as weighted fields) and its
 * document's BM25 (every part's text in one row), each divided by the most its query words could give on its
 * table (the sum of their IDFs), blended. The document side makes the ranking robust to where a title sits and
 * to sentence-sized parts that hold only some of the query's words; normalising makes the two sides comparable
 * and the score readable.
 */
export class SqliteLexicalRanker {
  /**
   * Per index, each stem's row count on the part and document tables. fts5vocab counts by walking the stem's
   * whole doclist (~0.3 ms a word on SciFact's parts), as much as the ranking itself: counted once per index
   * state, forgotten when this instance writes the index or (another process wrote it) its row count moved.
   */
  private readonly hits = new Map<number, { rows: number; counts: Map<string, number> }>();
  /** Queries answered from the postings and by FTS5 (benches and tests). */
  readonly answered = { postings: 0, fts5: 0 };

  constructor(
    private readonly sqlite: SqliteDatabase,
    private readonly stemmer: Fts5Stemmer,
    /** In-memory postings of large tables, scored as bm25() scores, several times faster (sqlite-lexical-index.ts). */
    private readonly postings?: SqliteLexicalIndex,
    /** Where FTS5 ranks a large table (read-thread-client.ts): off the event loop when the database is a file. */
    private readonly reader: SqliteReader = new SqliteReader(sqlite),
  ) {}

  async rank(tid: number, text: string, filter: FilterExpr | undefined, limit: number): Promise<LexicalScore[]> {
    const words = queryTerms(text);
    if (words.length === 0) return [];
    const { partTitleWeight, documentTitleWeight, pool: minPool } = LEXICAL_TUNING;
    const pool = Math.max(limit, minPool);
    const t = `si_${tid}`;
    const indexed = this.fromPostings(tid, words, filter, limit, pool);
    if (indexed) {
      this.answered.postings++;
      return indexed;
    }
    this.answered.fts5++;
    const match = words.map((w) => `"${w}"`).join(' OR ');
    const partRows = fts5RowCount(this.sqlite, `${t}_fts`);
    // Every document one part: its document row holds the part's text again, so the part's own BM25 is all the
    // evidence there is; skipping the document side halves the cost for corpora indexed one part per document.
    const onePartEach = fts5RowCount(this.sqlite, `${t}_dfts`) === partRows;
    // bm25() scores every row the query matches: ~0.5–1.5 s at a million parts (while the postings are being built,
    // or left to FTS5 for their size), on the read thread rather than the loop.
    const onThread = partRows >= READ_THREAD_MIN_ROWS;
    const parts = await this.parts(t, match, filter, onePartEach ? limit : pool, partTitleWeight, !onePartEach, onThread);
    if (parts.length === 0) return [];
    const stems = this.stemmer.stems(words);
    const hits = this.hitsOf(tid, partRows);
    const partIdf = idfSum(this.sqlite, `${t}_fts`, stems, hits) || 1;
    if (onePartEach) return parts.map(({ id, s }) => ({ id, raw: s / partIdf, relevance: calibrate(s / partIdf) }));
    const docs = await this.reader.all<[number, number]>(
      `SELECT rowid AS d, -bm25(${t}_dfts, 1.0, ${documentTitleWeight}) AS s FROM ${t}_dfts WHERE ${t}_dfts MATCH ? ORDER BY bm25(${t}_dfts, 1.0, ${documentTitleWeight}) LIMIT ?`,
      [match, pool],
      { raw: true, onThread, table: t },
    );
    const docIdf = idfSum(this.sqlite, `${t}_dfts`, stems, hits) || 1;
    return blend(parts, docs, partIdf, docIdf, pool, limit);
  }

  /** The ranking from the in-memory postings, when the table has them up to date and the query suits them. */
  private fromPostings(tid: number, words: string[], filter: FilterExpr | undefined, limit: number, pool: number): LexicalScore[] | undefined {
    const lx = this.postings?.ready(tid);
    const stems = lx && this.stemmer.singleTokenStems(words);
    if (!lx || !stems) return undefined;
    const idf = (rows: number, hits: number) => fts5IdfInC(this.sqlite, rows, hits);
    const totals = { parts: { ...fts5Averages(this.sqlite, `si_${tid}_fts`), idf }, docs: { ...fts5Averages(this.sqlite, `si_${tid}_dfts`), idf } };
    // As the FTS5 path decides it, from the averages records (a contentless table's count keeps deleted rows).
    const onePartEach = totals.docs.rows === totals.parts.rows;
    const keep = filter && ((ids: number[]) => this.passing(tid, ids, filter));
    const ranked = rankFromPostings(lx, totals, stems, onePartEach ? limit : pool, onePartEach ? undefined : pool, keep, this.postings?.split());
    if (!ranked) return undefined;
    const partIdf = ranked.partIdf || 1;
    if (onePartEach) return ranked.parts.map(({ id, s }) => ({ id, raw: s / partIdf, relevance: calibrate(s / partIdf) }));
    return blend(ranked.parts, ranked.docs.map((r) => [r.id, r.s]), partIdf, ranked.docIdf || 1, pool, limit);
  }

  /** The candidates a filter keeps. */
  private passing(tid: number, ids: number[], filter: FilterExpr): Set<number> {
    const params: unknown[] = [JSON.stringify(ids)];
    const where = filterToSql(filter, params);
    return new Set(this.sqlite.statement(`SELECT p.rowid FROM si_${tid}_parts p WHERE p.rowid IN (SELECT value FROM json_each(?)) AND ${where}`).pluck().all(...params) as number[]);
  }

  /** Called on every write to an index: its word counts are stale. */
  forget(tid: number): void {
    this.hits.delete(tid);
  }

  private hitsOf(tid: number, rows: number): Map<string, number> {
    const cached = this.hits.get(tid);
    if (cached && cached.rows === rows && cached.counts.size <= MAX_CACHED_STEMS) return cached.counts;
    const counts = new Map<string, number>();
    this.hits.set(tid, { rows, counts });
    return counts;
  }

  /** The best `pool` parts by their own BM25, with their document's row when asked (-1 otherwise). */
  private async parts(
    t: string,
    match: string,
    filter: FilterExpr | undefined,
    pool: number,
    titleWeight: number,
    withDocs: boolean,
    onThread: boolean,
  ): Promise<{ id: number; d: number; s: number }[]> {
    const bm25 = `bm25(${t}_fts, 1.0, ${titleWeight})`;
    if (filter) {
      const params: unknown[] = [match];
      const where = filterToSql(filter, params);
      const sql = `SELECT p.rowid AS id, p.doc_row AS d, -${bm25} AS s FROM ${t}_fts JOIN ${t}_parts p ON p.rowid = ${t}_fts.rowid WHERE ${t}_fts MATCH ? AND ${where} ORDER BY ${bm25} LIMIT ?`;
      return this.reader.all(sql, [...params, pool], { onThread, table: t });
    }
    // Without a filter, rank on the FTS table alone and read only the winners' document rows.
    const ranked = await this.reader.all<{ id: number; s: number }>(`SELECT rowid AS id, -${bm25} AS s FROM ${t}_fts WHERE ${t}_fts MATCH ? ORDER BY ${bm25} LIMIT ?`, [match, pool], { onThread, table: t });
    if (ranked.length === 0 || !withDocs) return ranked.map((r) => ({ ...r, d: -1 }));
    const docRows = this.sqlite
      .statement(`SELECT rowid, doc_row FROM ${t}_parts WHERE rowid IN (SELECT value FROM json_each(?))`)
      .raw()
      .all(JSON.stringify(ranked.map((r) => r.id))) as [number, number][];
    const docOf = new Map(docRows);
    return ranked.map((r) => ({ ...r, d: docOf.get(r.id)! }));
  }
}

/** Each part's score blends its own normalised BM25 with its document's (docs/search.md), best first. */
function blend(parts: { id: number; d: number; s: number }[], docs: [number, number][], partIdf: number, docIdf: number, pool: number, limit: number): LexicalScore[] {
  const { documentWeight } = LEXICAL_TUNING;
  const docScore = new Map(docs.map(([d, s]) => [d, s / docIdf]));
  // A document past the pool scored at most the pool's last; when the pool was not full it did not match.
  const docFloor = docs.length === pool ? docs[docs.length - 1][1] / docIdf : 0;
  return parts
    .map(({ id, d, s }) => {
      const raw = (s / partIdf + documentWeight * (docScore.get(d) ?? docFloor)) / (1 + documentWeight);
      return { id, raw, relevance: calibrate(raw) };
    })
    .sort((a, b) => b.raw - a.raw)
    .slice(0, limit);
}
