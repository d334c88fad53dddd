import Database from 'better-sqlite3';
import { FTS5_TOKENIZE } from './fts5-statistics';

/** A row as FTS5 indexed it: its length (tokens over both columns) and each term's occurrences per column. */
export interface TokenizedRow {
  readonly len: number;
  readonly terms: Map<string, [text: number, title: number]>;
}

/**
 * Tokenizes rows with the search index's own FTS5 tokenizer, many per round trip: they are written to a private
 * in-memory contentless table and read back from its `instance` vocabulary (term, row, column per token). The
 * terms are then exactly those FTS5 indexed the real rows under, stems included. Rejected: a JavaScript
 * tokenizer and Porter stemmer (they drift from FTS5's on edge cases, and a drifted term scores differently).
 */
export class Fts5RowTokens {
  private readonly db = new Database(':memory:');
  private readonly insert;
  private readonly read;
  private readonly clear;

  constructor() {
    this.db.exec(`CREATE VIRTUAL TABLE r USING fts5(text, title, content='', tokenize='${FTS5_TOKENIZE}'); CREATE VIRTUAL TABLE r_terms USING fts5vocab(r, instance);`);
    this.insert = this.db.prepare('INSERT INTO r (rowid, text, title) VALUES (?, ?, ?)');
    this.read = this.db.prepare(`SELECT term, doc, col = 'title' FROM r_terms`).raw();
    this.clear = this.db.prepare(`INSERT INTO r (r) VALUES ('delete-all')`);
  }

  tokenize(rows: readonly { text: string; title: string | null }[]): TokenizedRow[] {
    const out: TokenizedRow[] = rows.map(() => ({ len: 0, terms: new Map() }));
    if (rows.length === 0) return out;
    this.db.transaction(() => {
      rows.forEach((r, i) => this.insert.run(i + 1, r.text, r.title));
      for (const [term, doc, isTitle] of this.read.iterate() as IterableIterator<[string, number, number]>) {
        const row = out[doc - 1] as { len: number; terms: Map<string, [number, number]> };
        row.len++;
        let counts = row.terms.get(term);
        if (!counts) row.terms.set(term, (counts = [0, 0]));
        counts[isTitle ? 1 : 0]++;
      }
      this.clear.run();
    })();
    return out;
  }

  close(): void {
    this.db.close();
  }
}
