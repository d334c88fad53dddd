import type { SqliteDatabase } from '../../sqlite/sqlite-database';
import type { IndexedDocument, IndexedPart } from '../search-index.port';
import { documentRowOf } from './document-row';

/** A document is written ahead of its batch when its parts exceed one slice in count or text. */
export const AHEAD_SLICE_PARTS = 250;
export const AHEAD_SLICE_CHARS = 128 * 1024;

/** Who hears of a write: the ranker's cached counts, the lexical postings' and the graphs' change logs. */
export interface DocumentWriteListeners {
  forget(tid: number): void;
  rowsChanged(tid: number, docs: boolean, lo: number, hi: number): void;
  vectorChanged(tid: number, rowid: number | bigint): void;
}

/** Parts a write-ahead has committed for a document (the op's own object), and its document row. */
interface Ahead {
  readonly tid: number;
  readonly docRow: number;
  written: number;
}

/**
 * A document's rows in an index's tables (`si_<tid>_parts`, its external-content FTS table, the document row in
 * `_docs` and the contentless `_dfts`). A large document's parts can be written ahead of its batch, a slice per
 * transaction (docs/search.md, "Large documents"): the batch's own transaction then writes the document row, and
 * with it the checkpoint, so a crash in between leaves parts the batch's replay deletes and writes again.
 */
export class SqliteDocumentWrites {
  private readonly ahead = new WeakMap<IndexedDocument, Ahead>();

  constructor(
    private readonly sqlite: SqliteDatabase,
    private readonly on: DocumentWriteListeners,
  ) {}

  /** Whether `doc` is written ahead of its batch rather than in the batch's one transaction. */
  static isLarge(doc: IndexedDocument): boolean {
    if (doc.parts.length > AHEAD_SLICE_PARTS) return true;
    let chars = 0;
    for (const p of doc.parts) if ((chars += p.text.length) > AHEAD_SLICE_CHARS) return true;
    return false;
  }

  /**
   * Writes `doc`'s parts in slices; run each step in a transaction of its own, with a turn of the loop between.
   * The first step removes what an earlier, interrupted write left of the document.
   */
  *writeAhead(tid: number, doc: IndexedDocument): Generator<() => void> {
    let ahead: Ahead | undefined;
    yield () => {
      this.deleteParts(tid, doc.documentId);
      ahead = { tid, docRow: this.insertDocumentRow(tid, doc.documentId), written: 0 };
    };
    while (ahead!.written < doc.parts.length) {
      yield () => {
        const from = ahead!.written;
        let to = from;
        let chars = 0;
        while (to < doc.parts.length && to - from < AHEAD_SLICE_PARTS && chars < AHEAD_SLICE_CHARS) chars += doc.parts[to++].text.length;
        this.insertParts(tid, doc, ahead!.docRow, from, to);
        ahead!.written = to;
        this.ahead.set(doc, ahead!);
      };
    }
  }

  /** Removes a document's rows; external-content FTS needs the old values to delete a row. */
  deleteParts(tid: number, documentId: string): void {
    this.on.forget(tid);
    const docRow = this.sqlite.statement(`SELECT rowid FROM si_${tid}_docs WHERE doc_id = ?`).pluck().get(documentId) as number | undefined;
    if (docRow !== undefined) {
      this.sqlite.statement(`DELETE FROM si_${tid}_dfts WHERE rowid = ?`).run(docRow);
      this.sqlite.statement(`DELETE FROM si_${tid}_docs WHERE rowid = ?`).run(docRow);
      this.on.rowsChanged(tid, true, docRow, docRow);
    }
    const old = this.sqlite.statement(`SELECT rowid, text, title, vector IS NOT NULL FROM si_${tid}_parts WHERE doc_id = ?`).raw().all(documentId) as [number, string, string | null, number][];
    if (old.length === 0) return;
    const ftsDelete = this.sqlite.statement(`INSERT INTO si_${tid}_fts (si_${tid}_fts, rowid, text, title) VALUES ('delete', ?, ?, ?)`);
    for (const [rowid, text, title, hasVector] of old) {
      ftsDelete.run(rowid, text, title);
      if (hasVector) this.on.vectorChanged(tid, rowid);
    }
    this.sqlite.statement(`DELETE FROM si_${tid}_parts WHERE doc_id = ?`).run(documentId);
    this.on.rowsChanged(tid, false, old.reduce((m, [r]) => Math.min(m, r), Infinity), old.reduce((m, [r]) => Math.max(m, r), 0));
  }

  /** Writes the document, or completes what a write-ahead of this very op began. */
  upsertDocument(tid: number, doc: IndexedDocument): void {
    const ahead = this.ahead.get(doc);
    let docRow: number;
    let from = 0;
    if (ahead?.tid === tid) {
      this.on.forget(tid);
      ({ docRow, written: from } = ahead);
      this.ahead.delete(doc);
    } else {
      this.deleteParts(tid, doc.documentId);
      docRow = this.insertDocumentRow(tid, doc.documentId);
    }
    this.insertParts(tid, doc, docRow, from, doc.parts.length);
    this.on.rowsChanged(tid, true, docRow, docRow);
    const row = documentRowOf(doc.parts.map((p) => ({ text: p.text, title: p.sectionTitle })));
    this.sqlite.statement(`INSERT INTO si_${tid}_dfts (rowid, text, title) VALUES (?, ?, ?)`).run(docRow, row.text, row.title);
  }

  /** Sets one existing part's vector (the graphs hear of it); a part that does not exist is left alone. */
  setVector(tid: number, documentId: string, seq: number, vector: IndexedPart['vector']): void {
    const rowid = this.sqlite.statement(`SELECT rowid FROM si_${tid}_parts WHERE doc_id = ? AND seq = ?`).pluck().get(documentId, seq) as number | undefined;
    if (rowid === undefined) return;
    this.sqlite.statement(`UPDATE si_${tid}_parts SET vector = ? WHERE rowid = ?`).run(vectorBlob(vector), rowid);
    this.on.forget(tid);
    this.on.vectorChanged(tid, rowid);
  }

  private insertDocumentRow(tid: number, documentId: string): number {
    return Number(this.sqlite.statement(`INSERT INTO si_${tid}_docs (doc_id) VALUES (?)`).run(documentId).lastInsertRowid);
  }

  private insertParts(tid: number, doc: IndexedDocument, docRow: number, from: number, to: number): void {
    if (from >= to) return;
    this.on.forget(tid);
    const insert = this.sqlite.statement(`INSERT INTO si_${tid}_parts (doc_id, seq, text, title, part_meta, doc_meta, vector, doc_row) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    const ftsInsert = this.sqlite.statement(`INSERT INTO si_${tid}_fts (rowid, text, title) VALUES (?, ?, ?)`);
    const docMeta = JSON.stringify(doc.documentMetadata);
    let first = 0;
    let last = 0;
    for (let i = from; i < to; i++) {
      const part: IndexedPart = doc.parts[i];
      const vector = vectorBlob(part.vector);
      const title = part.sectionTitle ?? null;
      const { lastInsertRowid } = insert.run(doc.documentId, part.seq, part.text, title, JSON.stringify(part.partMetadata), docMeta, vector, docRow);
      ftsInsert.run(lastInsertRowid, part.text, title);
      if (vector) this.on.vectorChanged(tid, lastInsertRowid);
      last = Number(lastInsertRowid);
      first ||= last;
    }
    this.on.rowsChanged(tid, false, first, last);
  }
}

function vectorBlob(vector: IndexedPart['vector']): Buffer | null {
  const v = vector instanceof Float32Array ? vector : vector && new Float32Array(vector);
  return v ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : null;
}
