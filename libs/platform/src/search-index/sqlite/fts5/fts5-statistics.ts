import Database from 'better-sqlite3';
import { SqliteDatabase } from '../../../sqlite/sqlite-database';

/** The tokenizer every FTS5 table of the search index uses; the query's words are stemmed by the same one. */
export const FTS5_TOKENIZE = 'porter unicode61 remove_diacritics 2';

/** Per connection, the vocabularies it has made in its temp schema. */
const vocabularies = new WeakMap<SqliteDatabase, Set<string>>();
const VOCABULARY_SUFFIX = { row: 'vocab', instance: 'ivocab' } as const;

/**
 * An fts5vocab view of the FTS5 table, made on first use in this connection's temp schema: `row`, each term's row
 * count (`SELECT doc FROM <it> WHERE term = ?`); `instance`, each occurrence's row and column (the postings' build).
 * In the file's schema, two per corpus made every schema change and every connection's schema load ~60% dearer
 * (docs/deployment.md, "How many corpora"); files made before keep their row vocabularies there, unused, until the
 * corpus is dropped.
 */
export function fts5Vocabulary(sqlite: SqliteDatabase, table: string, kind: keyof typeof VOCABULARY_SUFFIX): string {
  const name = `temp.${table}_${VOCABULARY_SUFFIX[kind]}`;
  let made = vocabularies.get(sqlite);
  if (!made) vocabularies.set(sqlite, (made = new Set()));
  if (!made.has(name)) {
    sqlite.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${name} USING fts5vocab(main, ${table}, ${kind})`);
    made.add(name);
  }
  return name;
}

/** Drops the table's vocabularies, in the temp schema and (files made before) in the file's. */
export function dropFts5Vocabularies(sqlite: SqliteDatabase, table: string): void {
  const made = vocabularies.get(sqlite);
  for (const suffix of Object.values(VOCABULARY_SUFFIX)) {
    sqlite.db.exec(`DROP TABLE IF EXISTS temp.${table}_${suffix}`);
    made?.delete(`temp.${table}_${suffix}`);
  }
  sqlite.db.exec(`DROP TABLE IF EXISTS main.${table}_vocab`);
}

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
  /** Words FTS5 does not read as exactly one token: as a query phrase they need FTS5's own matching. */
  private readonly notOneToken = new Set<string>();
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
      if (this.cache.size + missing.length > STEM_CACHE_SIZE) {
        this.cache.clear();
        this.notOneToken.clear();
      }
      this.db.transaction(() => {
        missing.forEach((w, i) => this.insert.run(i + 1, w));
        const found = new Map<number, string>();
        const tokens = new Map<number, number>();
        for (const { doc, term } of this.read.all() as { doc: number; term: string }[]) {
          if (!found.has(doc)) found.set(doc, term);
          tokens.set(doc, (tokens.get(doc) ?? 0) + 1);
        }
        missing.forEach((w, i) => {
          this.cache.set(w, found.get(i + 1) ?? w);
          if (tokens.get(i + 1) === 1) this.notOneToken.delete(w);
          else this.notOneToken.add(w);
        });
        this.clear.run();
      })();
    }
    return words.map((w) => this.cache.get(w)!);
  }

  /** The words' stems when each is exactly one FTS5 token (a single-term phrase), else undefined. */
  singleTokenStems(words: readonly string[]): string[] | undefined {
    const stems = this.stems(words);
    return words.some((w) => this.notOneToken.has(w)) ? undefined : stems;
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

/**
 * fts5Idf as bm25() computes it, bit for bit: through SQLite's ln(), which is the C library's log(), as
 * fts5_aux.c calls it. V8's Math.log differs from it in the last bit for ~8% of arguments, and a last-bit
 * difference reorders rows BM25 scores alike (ties are common: same counts, same length).
 */
export function fts5IdfInC(sqlite: SqliteDatabase, rows: number, hits: number): number {
  const idf = sqlite.statement('SELECT ln(?)').pluck().get((rows - hits + 0.5) / (hits + 0.5)) as number;
  return idf <= 0 ? 1e-6 : idf;
}

/** The rows an FTS5 table holds, from its averages record (id 1 of `<table>_data`: a varint row count first). */
export function fts5RowCount(sqlite: SqliteDatabase, table: string): number {
  const block = sqlite.statement(`SELECT block FROM ${table}_data WHERE id = 1`).pluck().get() as Buffer | undefined;
  return block ? readVarint(block)[0] : 0;
}

/**
 * What bm25() reads from an FTS5 table's averages record: its row count and the tokens of all its columns. A
 * contentless table never lowers them on delete (FTS5 cannot know the deleted row's tokens), so they can count
 * rows long gone: whoever reproduces bm25() must read them here, not count live rows.
 */
export function fts5Averages(sqlite: SqliteDatabase, table: string): { rows: number; tokens: number } {
  const block = sqlite.statement(`SELECT block FROM ${table}_data WHERE id = 1`).pluck().get() as Buffer | undefined;
  if (!block) return { rows: 0, tokens: 0 };
  let at = 0;
  const next = () => {
    const [value, length] = readVarint(block, at);
    at += length;
    return value;
  };
  const rows = next();
  let tokens = 0;
  while (at < block.length) tokens += next();
  return { rows, tokens };
}

/** SQLite's varint at `from`: big-endian 7-bit groups with a continuation bit, the ninth byte whole; and its length. */
function readVarint(b: Buffer, from = 0): [number, number] {
  let value = 0;
  for (let i = 0; i < 9 && from + i < b.length; i++) {
    const byte = b[from + i];
    if (i === 8) return [value * 256 + byte, 9];
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  return [value, b.length - from];
}

/**
 * The most BM25 can give a query's words on one FTS5 table, per unit of term-frequency saturation: the sum of
 * their IDFs (a word repeated in the query counts each time, as bm25() scores each phrase).
 */
export function idfSum(sqlite: SqliteDatabase, table: string, stems: readonly string[], cache: Map<string, number>): number {
  const rows = fts5RowCount(sqlite, table);
  const count = sqlite.statement(`SELECT doc FROM ${fts5Vocabulary(sqlite, table, 'row')} WHERE term = ?`).pluck();
  let sum = 0;
  for (const stem of stems) {
    const key = `${table}\u0000${stem}`;
    let hits = cache.get(key);
    if (hits === undefined) cache.set(key, (hits = (count.get(stem) as number | undefined) ?? 0));
    if (hits > 0) sum += fts5Idf(rows, hits);
  }
  return sum;
}
