import Database from 'better-sqlite3';
import { SqliteDatabase } from '../../sqlite/sqlite-database';

/** The tokenizer every FTS5 table of the search index uses; the query's words are stemmed by the same one. */
export const FTS5_TOKENIZE = 'porter unicode61 remove_diacritics 2';

/** Words whose stems are kept; past it the cache starts afresh (a query costs ~0.05 ms per uncached word). */
const STEM_CACHE_SIZE = 50_000;

/**
 * Stems query words with the index's own FTS5 tokenizer, so a word's document frequency can be read from the
 * index's vocabulary exactly as BM25 counted it. A private in-memory database: stemming writes a scratch row,
 * which must never touch the service's files or their transactions. Rejected: a JavaScript Porter stemmer (it
 * drifts from FTS5's on edge cases, and a wrong stem reads a frequency of 0).
 */
export class Fts5Stemmer {
  private readonly db = new Database(':memory:');
  private readonly cache = new Map<string, string>();
  private readonly insert;
  private readonly read;
  private readonly clear;

  constructor() {
    this.db.exec(`CREATE VIRTUAL TABLE q USING fts5(t, content='', tokenize='${FTS5_TOKENIZE}'); CREATE VIRTUAL TABLE q_terms USING fts5vocab(q, instance);`);
    this.insert = this.db.prepare('INSERT INTO q (rowid, t) VALUES (?, ?)');
    this.read = this.db.prepare('SELECT doc, term FROM q_terms');
    this.clear = this.db.prepare(`INSERT INTO q (q) VALUES ('delete-all')`);
  }

  /** Each word's first token (query words are letters and digits only, so one token each). */
  stems(words: readonly string[]): string[] {
    const missing = [...new Set(words.filter((w) => !this.cache.has(w)))];
    if (missing.length) {
      if (this.cache.size + missing.length > STEM_CACHE_SIZE) this.cache.clear();
      this.db.transaction(() => {
        missing.forEach((w, i) => this.insert.run(i + 1, w));
        const found = new Map<number, string>();
        for (const { doc, term } of this.read.all() as { doc: number; term: string }[]) if (!found.has(doc)) found.set(doc, term);
        missing.forEach((w, i) => this.cache.set(w, found.get(i + 1) ?? w));
        this.clear.run();
      })();
    }
    return words.map((w) => this.cache.get(w)!);
  }

  close(): void {
    this.db.close();
  }
}

/** FTS5's IDF, floored as FTS5 floors it, so sums match what its bm25() added up. */
export function fts5Idf(rows: number, hits: number): number {
  const idf = Math.log((rows - hits + 0.5) / (hits + 0.5));
  return idf <= 0 ? 1e-6 : idf;
}

/** The rows an FTS5 table holds, from its averages record (id 1 of `<table>_data`: a varint row count first). */
export function fts5RowCount(sqlite: SqliteDatabase, table: string): number {
  const block = sqlite.statement(`SELECT block FROM ${table}_data WHERE id = 1`).pluck().get() as Buffer | undefined;
  return block ? readVarint(block) : 0;
}

/** SQLite's varint: big-endian 7-bit groups with a continuation bit, the ninth byte whole. */
function readVarint(b: Buffer): number {
  let value = 0;
  for (let i = 0; i < 9 && i < b.length; i++) {
    if (i === 8) return value * 256 + b[i];
    value = value * 128 + (b[i] & 0x7f);
    if ((b[i] & 0x80) === 0) return value;
  }
  return value;
}

/**
 * The most BM25 can give a query's words on one FTS5 table, per unit of term-frequency saturation: the sum of
 * their IDFs (a word repeated in the query counts each time, as bm25() scores each phrase).
 */
export function idfSum(sqlite: SqliteDatabase, table: string, stems: readonly string[], cache: Map<string, number>): number {
  const rows = fts5RowCount(sqlite, table);
  const count = sqlite.statement(`SELECT doc FROM ${table}_vocab WHERE term = ?`).pluck();
  let sum = 0;
  for (const stem of stems) {
    const key = `${table}\u0000${stem}`;
    let hits = cache.get(key);
    if (hits === undefined) cache.set(key, (hits = (count.get(stem) as number | undefined) ?? 0));
    if (hits > 0) sum += fts5Idf(rows, hits);
  }
  return sum;
}
