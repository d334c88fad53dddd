import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../../../sqlite/sqlite-database';
import type { LexicalTable } from './lexical-postings';
import { fts5Vocabulary } from '../fts5/fts5-statistics';

/** Rows read per step: 20,000 at once held the loop ~15 ms by themselves. */
const PAGE = 2_000;
/** Terms of the vocabulary read per step. */
const TERM_PAGE = 256;
/** Characters of a term's occurrence list parsed between two looks at the clock. */
const PARSE_STEP = 16_384;
/** ms per row holding a term, before the build has measured any (a common term: ~0.3 µs per row on a quiet machine). */
const FIRST_MS_PER_ROW = 0.0005;

export interface BuildControl {
  /** False once the table is gone or the process closing: the build stops. */
  keepGoing(): boolean;
  /** Yields the event loop between slices. */
  turn(): Promise<void>;
  readonly sliceMs: number;
}

/** The sum of a docsize blob's varints: the row's tokens over all its columns, as bm25() reads its length. */
function rowLength(sz: Buffer): number {
  let total = 0;
  let value = 0;
  for (let i = 0; i < sz.length; i++) {
    value = value * 128 + (sz[i] & 0x7f);
    if ((sz[i] & 0x80) === 0) {
      total += value;
      value = 0;
    }
  }
  return total;
}

/**
 * Fills a table's postings from FTS5's own index: the rows and their lengths from `<fts>_docsize`, then term by
 * term the row and column of every occurrence from an `instance` vocabulary, one string per term (a round trip
 * per row of it was 5× slower). Writes may land between slices: a row read in a changed state is in the log
 * after the position the build started from, and replaying the log re-reads it, so the result is exact.
 */
async function buildTable(sqlite: SqliteDatabase, fts: string, rowsSql: string, table: LexicalTable, ctl: BuildControl): Promise<boolean> {
  const page = sqlite.statement(rowsSql).raw();
  const slice = new Slice(ctl);
  let after = -1;
  for (;;) {
    const rows = page.all(after) as [number, Buffer, number | null][];
    for (const [rowid, sz, docRow] of rows) table.addRow(rowid, rowLength(sz), docRow ?? -1);
    slice.worked();
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1][0];
    if (!(await slice.pause())) return false;
  }
  const vocab = fts5Vocabulary(sqlite, fts, 'instance');
  // The vocabulary a page of terms at a time: all at once, FTS5 walked every doclist of the table in one step. No ORDER
  // BY: fts5vocab gives terms in the index's order, and the `term >` bound is a seek in it (a sort would read them all).
  const termPage = sqlite.statement(`SELECT term, doc FROM ${fts5Vocabulary(sqlite, fts, 'row')} WHERE term > ? LIMIT ${TERM_PAGE}`).raw();
  const postings = new TermPostings(sqlite.statement(`SELECT group_concat(doc * 2 + (col = 'title')) FROM ${vocab} WHERE term = ?`).pluck(), table, slice);
  let last = '';
  for (;;) {
    if (!(await slice.pause())) return false;
    const terms = termPage.all(last) as [string, number][];
    slice.worked();
    for (const [term, rowsWithTerm] of terms) if (!(await postings.add(term, rowsWithTerm))) return false;
    if (terms.length < TERM_PAGE) return true;
    last = terms[terms.length - 1][0];
  }
}

/** A term's postings from its occurrences, `doc * 2 + (col = 'title')` for each, in row order. */
class TermPostings {
  /** ms per row holding a term, as measured on the common terms read so far. */
  private msPerRow = FIRST_MS_PER_ROW;

  constructor(
    private readonly occurrences: Statement,
    private readonly table: LexicalTable,
    private readonly slice: Slice,
  ) {}

  async add(term: string, rowsWithTerm: number): Promise<boolean> {
    const { table, slice } = this;
    // A term's occurrences come from SQLite in one step (a common term's: several ms): when that step would overrun
    // the slice, the loop gets its turn first, so the step starts a slice of its own.
    if (!(await slice.pause(rowsWithTerm * this.msPerRow))) return false;
    const read = performance.now();
    const list = (this.occurrences.get(term) as string | null) ?? '';
    slice.worked();
    if (rowsWithTerm >= 1000) this.msPerRow = 0.7 * this.msPerRow + 0.3 * ((performance.now() - read) / rowsWithTerm);
    let id = -1;
    let text = 0;
    let title = 0;
    let value = 0;
    let look = PARSE_STEP;
    for (let i = 0; i <= list.length; i++) {
      // Parsing and adding a common term's postings is as long again: it is cut into slices too (the table is not
      // in use until the build ends, so a term's postings may arrive over several turns).
      if (i === look) {
        look += PARSE_STEP;
        slice.worked();
        if (!(await slice.pause())) return false;
      }
      const c = i < list.length ? list.charCodeAt(i) : 44;
      if (c !== 44) {
        value = value * 10 + (c - 48);
        continue;
      }
      const rowid = Math.floor(value / 2);
      const next = table.internal(rowid);
      value -= rowid * 2;
      if (next !== id) {
        if (id >= 0) table.addPosting(term, id, text, title, rowsWithTerm);
        id = next;
        text = title = 0;
      }
      if (value) title++;
      else text++;
      value = 0;
    }
    if (id >= 0) table.addPosting(term, id, text, title, rowsWithTerm);
    return true;
  }
}

/** The build's share of the loop: work until `sliceMs` is spent (or the next step would overrun it), then a turn. */
class Slice {
  private started = performance.now();
  private fresh = true;

  constructor(private readonly ctl: BuildControl) {}

  worked(): void {
    this.fresh = false;
  }

  /** False when the build must stop. A step longer than a whole slice still runs, alone, at the start of one. */
  async pause(nextMs = 0): Promise<boolean> {
    if (this.fresh || performance.now() - this.started + nextMs < this.ctl.sliceMs) return true;
    await this.ctl.turn();
    this.started = performance.now();
    this.fresh = true;
    return this.ctl.keepGoing();
  }
}

/** Builds both tables of a search-index table; false when stopped. */
export async function buildLexicon(sqlite: SqliteDatabase, tid: number, lx: { parts: LexicalTable; docs: LexicalTable }, ctl: BuildControl): Promise<boolean> {
  const t = `si_${tid}`;
  const parts = `SELECT p.rowid, d.sz, p.doc_row FROM ${t}_parts p JOIN ${t}_fts_docsize d ON d.id = p.rowid WHERE p.rowid > ? ORDER BY p.rowid LIMIT ${PAGE}`;
  const docs = `SELECT id, sz, NULL FROM ${t}_dfts_docsize WHERE id > ? ORDER BY id LIMIT ${PAGE}`;
  return (await buildTable(sqlite, `${t}_fts`, parts, lx.parts, ctl)) && (await buildTable(sqlite, `${t}_dfts`, docs, lx.docs, ctl));
}
