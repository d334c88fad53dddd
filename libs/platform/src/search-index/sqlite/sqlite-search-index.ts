// Over 300 lines: one adapter whose query side (lexical, vector, fields) and write side share the per-index tables.
import type { Statement } from 'better-sqlite3';
import { assertNever } from '../../kernel/errors';
import { yieldToLoop } from '../../kernel/yield';
import type { ApplyOptions, PositionedOps, ProjectionShape, ProjectionSink, SharedTransaction } from '../../projections/projection';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../sqlite/sqlite-projection-state';
import type { FieldRef, FilterExpr } from '../../filter/filter';
import { IndexedDocument, RankedPart, SearchHit, SearchIndex, SearchOp, SearchRequest } from '../search-index.port';
import { fuseRanked, hitsOfRows, partColumns, PartRow, parsedOncePerDocument, toHit } from './sqlite-part-rows';
import { fieldSql, filterToSql } from '../../sqlite/sqlite-filter';
import { Fts5Merges } from './fts5/fts5-merges';
import { dropFts5Vocabularies, Fts5Stemmer, FTS5_TOKENIZE, fts5RowCount } from './fts5/fts5-statistics';
import { LEXICAL_TUNING, SqliteLexicalRanker } from './lexical/sqlite-lexical';
import { LexicalIndexOptions, SqliteLexicalIndex } from './lexical/sqlite-lexical-index';
import { AnnOptions, SqliteVectorAnn } from './ann/sqlite-vector-ann';
import { SqliteDocumentWrites } from './sqlite-document-writes';
import { READ_THREAD_MIN_ROWS, SqliteReader } from './read-thread-client';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS si_indexes (
  name TEXT NOT NULL, generation INTEGER NOT NULL, tid INTEGER NOT NULL UNIQUE, PRIMARY KEY (name, generation)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS si_active (one INTEGER PRIMARY KEY CHECK (one = 1), generation INTEGER NOT NULL);
`;

/** A value read with its JSON type: json_extract gives 1/0 for JSON booleans and JSON text for arrays. */
const jsonValue = ([v, t]: [unknown, string]): unknown => (t === 'true' ? true : t === 'false' ? false : t === 'array' ? (JSON.parse(v as string) as unknown[]) : v);

/**
 * The embedded search index: per index (corpus) a parts table, an external-content FTS5 table of parts and a
 * contentless one of whole documents, ranked together by BM25 (sqlite-lexical.ts; porter stemming, unicode
 * folding), and float32 vectors: an HNSW graph answers nearest-neighbour queries on a large table, sqlite-vec's
 * exact cosine scan on a small one, a lagging graph or a selective filter (sqlite-vector-ann.ts).
 * Hybrid search fuses the two ranked lists as Typesense does (G14), so both adapters rank alike.
 */
/** A table left to a slower path because its in-memory index would pass its memory bound (cache-budget.ts). */
export interface LeftOverBound {
  /** The search index (its name in the projection: the corpus's index). */
  readonly index: string;
  /** `fts5`: lexical queries rank by FTS5's bm25() (the postings' bound); `exact-scan`: vector queries scan (the graphs'). */
  readonly to: 'fts5' | 'exact-scan';
  /** Its parts (fts5) or vectors (exact-scan) then; it is indexed again once they fall by a quarter, or at a restart. */
  readonly rows: number;
}

export class SqliteSearchIndex implements SearchIndex, ProjectionSink<SearchOp> {
  private readonly stemmer = new Fts5Stemmer();
  private readonly ranker: SqliteLexicalRanker;
  /** The approximate vector index: a cache of the vectors in the parts tables, kept in step through a change log. */
  readonly ann: SqliteVectorAnn;
  /** The lexical postings of large tables: a cache of the FTS5 rows, kept in step through a change log. */
  readonly postings: SqliteLexicalIndex;
  /** FTS5's segment merges, in small steps of their own rather than inside the projection's commits. */
  readonly merges: Fts5Merges;
  /** Tables whose vectors the transaction being applied changed, told to the graphs once it commits. */
  private touched = new Set<number>();
  /** Tables whose rows it changed, told to the lexical postings once it commits. */
  private written = new Set<number>();
  private readonly documents: SqliteDocumentWrites;
  /** Statements that scan a large table, on a thread of their own (read-thread-client.ts). */
  private readonly reader: SqliteReader;

  constructor(
    private readonly sqlite: SqliteDatabase,
    private readonly state: SqliteProjectionState,
    ann: AnnOptions = {},
    lexical: LexicalIndexOptions = {},
    /** Told when a memory bound leaves a table to the slower path (the service logs a warning). */
    onLeft?: (left: LeftOverBound) => void,
  ) {
    sqlite.db.exec(SCHEMA);
    const { partTitleWeight, documentTitleWeight } = LEXICAL_TUNING;
    const tell = (to: LeftOverBound['to']) => (tid: number, rows: number) => onLeft?.({ index: this.indexNameOf(tid) ?? `#${tid}`, to, rows });
    if (onLeft) {
      lexical = { ...lexical, onLeft: tell('fts5') };
      ann = { ...ann, onLeft: tell('exact-scan') };
    }
    this.postings = new SqliteLexicalIndex(sqlite, { partWeights: [1, partTitleWeight], documentWeights: [1, documentTitleWeight], ...lexical });
    this.reader = new SqliteReader(sqlite);
    this.ranker = new SqliteLexicalRanker(sqlite, this.stemmer, this.postings, this.reader);
    // Added after the first release: files made before have the table without it.
    sqlite.addColumnIfMissing('si_indexes', 'incarnation', 'TEXT');
    this.ann = new SqliteVectorAnn(sqlite, ann);
    this.merges = new Fts5Merges(sqlite);
    this.documents = new SqliteDocumentWrites(sqlite, {
      forget: (tid) => this.ranker.forget(tid),
      rowsChanged: (tid, docs, lo, hi) => this.rowsChanged(tid, docs, lo, hi),
      vectorChanged: (tid, rowid) => this.vectorChanged(tid, rowid),
    });
  }

  /**
   * Saves the graphs (so the next start loads rather than rebuilds them) and stops the index's threads, resolving once
   * they are gone (none then holds the database file open); call before closing the database.
   */
  async close(): Promise<void> {
    this.merges.close();
    await Promise.all([this.postings.close(), this.reader.close(), this.ann.close()]);
  }

  private stmt(sql: string): Statement {
    return this.sqlite.statement(sql);
  }

  private activeGeneration(): number | undefined {
    return this.stmt('SELECT generation FROM si_active WHERE one = 1').pluck().get() as number | undefined;
  }

  private tableId(index: string, generation = this.activeGeneration()): number | undefined {
    if (generation === undefined) return undefined;
    return this.stmt('SELECT tid FROM si_indexes WHERE name = ? AND generation = ?').pluck().get(index, generation) as number | undefined;
  }

  /** The index's table, when the op may write it: any index for an op without incarnation, else only the same one. */
  private tableFor(index: string, generation: number, incarnation: string | undefined): number | undefined {
    if (incarnation === undefined) return this.tableId(index, generation);
    return this.stmt('SELECT tid FROM si_indexes WHERE name = ? AND generation = ? AND incarnation = ?').pluck().get(index, generation, incarnation) as number | undefined;
  }

  private createIndex(index: string, generation: number, incarnation?: string): number {
    const existing = this.tableId(index, generation);
    if (existing !== undefined) {
      if (incarnation !== undefined) this.stmt('UPDATE si_indexes SET incarnation = ? WHERE tid = ?').run(incarnation, existing);
      return existing;
    }
    const tid = ((this.stmt('SELECT COALESCE(MAX(tid), 0) FROM si_indexes').pluck().get() as number) ?? 0) + 1;
    this.stmt('INSERT INTO si_indexes (name, generation, tid, incarnation) VALUES (?, ?, ?, ?)').run(index, generation, tid, incarnation ?? null);
    this.ann.stampTable(tid);
    const t = `si_${tid}`;
    this.sqlite.db.exec(`
      CREATE TABLE ${t}_parts (rowid INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, seq INTEGER NOT NULL, text TEXT NOT NULL,
        title TEXT, part_meta TEXT NOT NULL, doc_meta TEXT NOT NULL, vector BLOB, doc_row INTEGER);
      CREATE INDEX ${t}_parts_doc ON ${t}_parts (doc_id, seq);
      CREATE VIRTUAL TABLE ${t}_fts USING fts5(text, title, content='${t}_parts', content_rowid='rowid', tokenize='${FTS5_TOKENIZE}');
      CREATE TABLE ${t}_docs (rowid INTEGER PRIMARY KEY, doc_id TEXT NOT NULL UNIQUE);
      CREATE VIRTUAL TABLE ${t}_dfts USING fts5(text, title, content='', contentless_delete=1, tokenize='${FTS5_TOKENIZE}');`);
    Fts5Merges.disableAutomerge(this.sqlite, `${t}_fts`);
    Fts5Merges.disableAutomerge(this.sqlite, `${t}_dfts`);
    // The FTS table is kept in step by hand rather than by triggers: twice as fast on bulk writes (rebuilds).
    return tid;
  }

  private dropIndex(index: string, generation: number): void {
    const tid = this.tableId(index, generation);
    if (tid === undefined) return;
    const t = `si_${tid}`;
    dropFts5Vocabularies(this.sqlite, `${t}_fts`);
    dropFts5Vocabularies(this.sqlite, `${t}_dfts`);
    this.sqlite.db.exec(`DROP TABLE IF EXISTS ${t}_fts;
      DROP TABLE IF EXISTS ${t}_parts; DROP TABLE IF EXISTS ${t}_dfts; DROP TABLE IF EXISTS ${t}_docs;`);
    this.stmt('DELETE FROM si_indexes WHERE tid = ?').run(tid);
    this.ranker.forget(tid);
    this.ann.dropped(tid);
    this.postings.dropped(tid);
    this.merges.dropped(`si_${tid}_fts`);
    this.merges.dropped(`si_${tid}_dfts`);
    this.sqlite.forgetStatements();
  }

  /** Parts (or document rows) lo..hi were written or deleted: logged for the lexical postings. */
  private rowsChanged(tid: number, docs: boolean, lo: number, hi: number): void {
    this.postings.changed(tid, docs, lo, hi);
    this.written.add(tid);
  }

  private vectorChanged(tid: number, rowid: number | bigint): void {
    this.ann.changed(tid, rowid);
    this.touched.add(tid);
  }

  async search(index: string, request: SearchRequest): Promise<SearchHit[]> {
    const tid = this.tableId(index);
    if (tid === undefined) return [];
    if (request.mode !== 'hybrid') return present(this.hitsIn(tid, await this.rankIn(tid, { ...request, mode: request.mode }), request.withVectors));
    const k = Math.max(request.limit, 100);
    // The vector side first: the graph's thread searches while the lexical side ranks on this one.
    const vector = request.vector ? this.rankIn(tid, { ...request, mode: 'vector', limit: k }) : Promise.resolve([]);
    const lexical = await this.rankIn(tid, { ...request, mode: 'lexical', limit: k });
    return present(this.hitsIn(tid, fuseRanked(lexical, await vector, request.alpha ?? 0.3).slice(0, request.limit), request.withVectors));
  }

  async rank(index: string, request: SearchRequest & { readonly mode: 'lexical' | 'vector' }): Promise<RankedPart[]> {
    const tid = this.tableId(index);
    return tid === undefined ? [] : this.rankIn(tid, request);
  }

  async hitsOf(index: string, ranked: readonly RankedPart[], withVectors?: boolean): Promise<(SearchHit | undefined)[]> {
    const tid = this.tableId(index);
    return tid === undefined ? [] : this.hitsIn(tid, ranked, withVectors);
  }

  private hitsIn(tid: number, ranked: readonly RankedPart[], withVectors: boolean | undefined): (SearchHit | undefined)[] {
    return hitsOfRows(this.stmt(`SELECT p.rowid AS id, ${partColumns(withVectors)} FROM si_${tid}_parts p WHERE p.rowid IN (SELECT value FROM json_each(?))`), ranked);
  }

  /**
   * Ranked without reading the parts' rows: lexically by sqlite-lexical.ts (`textScore` the raw blended BM25,
   * `score` its calibrated relevance), by vector through the graph or sqlite-vec's exact scan (cosine distance).
   */
  private async rankIn(tid: number, request: SearchRequest & { readonly mode: 'lexical' | 'vector' }): Promise<RankedPart[]> {
    const { filter, limit } = request;
    if (request.mode === 'lexical') {
      return (await this.ranker.rank(tid, request.text ?? '', filter, limit)).map((r) => ({ ref: r.id, textScore: r.raw, lexicalRelevance: r.relevance, score: r.relevance }));
    }
    if (!request.vector) return [];
    const toRanked = ({ id, s }: { id: number; s: number }) => ({ ref: id, vectorDistance: s, score: 1 - s });
    const approximate = await this.ann.nearest(tid, request.vector, limit, filter && ((ids) => this.passing(tid, ids, filter)));
    if (approximate) return approximate.map(toRanked);
    const params: unknown[] = [Buffer.from(new Float32Array(request.vector).buffer)];
    const where = filter ? ` AND ${filterToSql(filter, params)}` : '';
    // The exact scan reads every vector: at a million parts (the graph loading or behind) ~1 s, off the loop.
    const onThread = fts5RowCount(this.sqlite, `si_${tid}_fts`) >= READ_THREAD_MIN_ROWS;
    const exact = await this.reader.all<{ id: number; s: number }>(
      `SELECT p.rowid AS id, vec_distance_cosine(p.vector, ?) AS s FROM si_${tid}_parts p WHERE p.vector IS NOT NULL${where} ORDER BY s LIMIT ?`,
      [...params, limit],
      { onThread, table: `si_${tid}` },
    );
    return exact.map(toRanked);
  }

  /** The index's name, if it is still there (and the database still open: the graphs' thread may tell late). */
  private indexNameOf(tid: number): string | undefined {
    try {
      return this.stmt('SELECT name FROM si_indexes WHERE tid = ?').pluck().get(tid) as string | undefined;
    } catch {
      return undefined;
    }
  }

  /** The candidates a filter keeps. */
  private passing(tid: number, ids: number[], filter: FilterExpr): Set<number> {
    const params: unknown[] = [JSON.stringify(ids)];
    const where = filterToSql(filter, params);
    return new Set(this.stmt(`SELECT p.rowid FROM si_${tid}_parts p WHERE p.rowid IN (SELECT value FROM json_each(?)) AND ${where}`).pluck().all(...params) as number[]);
  }

  async distinctValues(index: string, field: FieldRef, options: { filter?: FilterExpr; limit?: number } = {}): Promise<unknown[]> {
    const q = this.fieldQuery(index, field, options.filter);
    if (!q) return [];
    const rows = this.stmt(
      `SELECT DISTINCT ${q.value} AS v, ${q.type} AS t FROM ${q.table} p WHERE ${q.type} IN ('integer', 'real', 'text', 'true', 'false')${q.where} ORDER BY v LIMIT ?`,
    )
      .raw()
      .all(...q.params, options.limit ?? 1000) as [unknown, string][];
    return rows.map(jsonValue);
  }

  async fieldValues(index: string, field: FieldRef, options: { filter?: FilterExpr } = {}): Promise<unknown[]> {
    const q = this.fieldQuery(index, field, options.filter);
    if (!q) return [];
    // Every part of a document carries the same document metadata, so any one row stands for the document.
    const perDocument = field.level === 'doc' ? ' GROUP BY p.doc_id' : '';
    const rows = this.stmt(`SELECT ${q.value} AS v, ${q.type} AS t FROM ${q.table} p WHERE ${q.type} NOT IN ('null', 'object')${q.where}${perDocument}`)
      .raw()
      .all(...q.params) as [unknown, string][];
    return rows.map(jsonValue);
  }

  /** A metadata field's SQL value and JSON type over an index's parts, with the filter's WHERE fragment. */
  private fieldQuery(index: string, field: FieldRef, filter: FilterExpr | undefined) {
    const tid = this.tableId(index);
    if (tid === undefined) return undefined;
    const params: unknown[] = [];
    const where = filter ? ` AND ${filterToSql(filter, params)}` : '';
    const value = fieldSql(field);
    return { table: `si_${tid}_parts`, value, type: value.replace(/^json_extract\(/, 'json_type('), where, params };
  }

  async documentParts(index: string, documentId: string): Promise<SearchHit[]> {
    const tid = this.tableId(index);
    if (tid === undefined) return [];
    const rows = this.stmt(
      `SELECT doc_id, seq, text, title, part_meta, doc_meta, 0 AS s FROM si_${tid}_parts WHERE doc_id = ? ORDER BY seq`,
    ).all(documentId) as PartRow[];
    const documentMetadata = parsedOncePerDocument();
    return rows.map((r) => toHit(r, { score: 0 }, documentMetadata));
  }

  async ping(): Promise<void> {
    this.activeGeneration();
  }

  async prepare(_projection: ProjectionShape, _generation: number): Promise<void> {
    this.sqlite.db.prepare('INSERT OR IGNORE INTO si_active (one, generation) VALUES (1, ?)').run(_generation);
  }

  async applyBatch(projection: string, generation: number, batch: readonly PositionedOps<SearchOp>[], checkpoint: number, options: ApplyOptions = {}): Promise<void> {
    this.write(() => {
      const applied = options.replay ? -1 : this.state.loadSync(projection, generation);
      for (const { position, ops } of batch) {
        if (position > applied) for (const op of ops) this.applyOp(op, generation);
      }
      if (!options.replay) this.state.saveSync(projection, generation, checkpoint);
    });
  }

  /**
   * A large document's parts, written ahead of its batch in slices of their own transactions, a turn of the loop
   * between (sqlite-document-writes.ts): one transaction of a 20,000-part document held every request ~3 s. Only
   * for an upsert no earlier op of the batch touches (its index or its document), so the batch's order holds.
   */
  async writeAhead(projection: string, generation: number, batch: readonly PositionedOps<SearchOp>[]): Promise<void> {
    const applied = this.state.loadSync(projection, generation);
    const touched = new Set<string>();
    for (const { position, ops } of batch) {
      for (const op of ops) {
        const key = `${op.index}\u0000${'document' in op ? op.document.documentId : 'documentId' in op ? op.documentId : ''}`;
        if (op.op === 'upsertDocument' && position > applied && !touched.has(op.index) && !touched.has(key) && SqliteDocumentWrites.isLarge(op.document)) {
          const tid = op.incarnation === undefined ? this.tableId(op.index, generation) : this.tableFor(op.index, generation, op.incarnation);
          if (tid !== undefined) {
            for (const step of this.documents.writeAhead(tid, op.document)) {
              this.write(step);
              await yieldToLoop();
            }
          }
        }
        touched.add(op.op === 'createIndex' || op.op === 'dropIndex' ? op.index : key);
      }
    }
  }

  /** One transaction of this index's writes (nested in the projections' shared one when under way); its changes told once it commits. */
  private write(work: () => void): void {
    this.touched = new Set();
    this.written = new Set();
    this.sqlite.transaction(work, 'derived');
    const { touched, written } = this;
    this.sqlite.afterCommit(() => {
      this.ann.touched(touched);
      this.postings.touched(written);
      this.merges.touched([...written].flatMap((tid) => [`si_${tid}_fts`, `si_${tid}_dfts`]));
    });
  }

  get sharedTransaction(): SharedTransaction {
    return this.sqlite.derivedTransactions;
  }

  private applyOp(op: SearchOp, generation: number): void {
    switch (op.op) {
      case 'createIndex':
        this.createIndex(op.index, generation, op.incarnation);
        return;
      case 'dropIndex':
        this.dropIndex(op.index, generation);
        return;
      case 'upsertDocument': {
        const tid = op.incarnation === undefined ? this.createIndex(op.index, generation) : this.tableFor(op.index, generation, op.incarnation);
        if (tid !== undefined) this.documents.upsertDocument(tid, op.document);
        return;
      }
      case 'deleteDocument': {
        const tid = this.tableFor(op.index, generation, op.incarnation);
        if (tid !== undefined) this.documents.deleteParts(tid, op.documentId);
        return;
      }
      case 'deleteDocumentsWhere': {
        const tid = this.tableFor(op.index, generation, op.incarnation);
        if (tid === undefined) break;
        const params: unknown[] = [];
        const where = filterToSql(op.filter, params);
        const ids = this.stmt(`SELECT DISTINCT p.doc_id FROM si_${tid}_parts p WHERE ${where}`).pluck().all(...params) as string[];
        for (const id of ids) this.documents.deleteParts(tid, id);
        break;
      }
      case 'setPartVector': {
        const tid = this.tableFor(op.index, generation, op.incarnation);
        if (tid !== undefined) this.documents.setVector(tid, op.documentId, op.seq, op.vector);
        return;
      }
      case 'setDocumentMetadata': {
        const tid = this.tableFor(op.index, generation, op.incarnation);
        if (tid !== undefined) this.stmt(`UPDATE si_${tid}_parts SET doc_meta = ? WHERE doc_id = ?`).run(JSON.stringify(op.metadata), op.documentId);
        return;
      }
      default:
        assertNever(op);
    }
  }

  async checkpoint(projection: string, generation: number): Promise<number> {
    return this.state.loadSync(projection, generation);
  }

  async activate(_projection: ProjectionShape, generation: number): Promise<void> {
    this.sqlite.transaction(() => {
      this.sqlite.db.prepare('INSERT INTO si_active (one, generation) VALUES (1, ?) ON CONFLICT (one) DO UPDATE SET generation = excluded.generation').run(generation);
      const stale = this.sqlite.db.prepare('SELECT name, generation FROM si_indexes WHERE generation <> ?').all(generation) as { name: string; generation: number }[];
      for (const s of stale) this.dropIndex(s.name, s.generation);
    });
  }
}

const present = (hits: (SearchHit | undefined)[]): SearchHit[] => hits.filter((h): h is SearchHit => h !== undefined);
