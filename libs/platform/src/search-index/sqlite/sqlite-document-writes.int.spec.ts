import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PositionedOps } from '../../projections/projection';
import { turnsDuring } from '../../kernel/yield';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../sqlite/sqlite-projection-state';
import type { IndexedDocument, SearchOp } from '../search-index.port';
import { DOCUMENT_ROW_CHARS, documentRowOf } from './document-row';
import { AHEAD_SLICE_PARTS } from './sqlite-document-writes';
import { SqliteSearchIndex } from './sqlite-search-index';

const P = 'large_docs';
const small = (id: string, text: string): IndexedDocument => ({ documentId: id, documentMetadata: {}, parts: [{ seq: 0, text, partMetadata: {} }] });
/** `parts` parts; part i holds `w<i>` and a word shared by every part, a title every 100 parts, a vector each. */
const large = (id: string, parts: number): IndexedDocument => ({
  documentId: id,
  documentMetadata: { big: true },
  parts: Array.from({ length: parts }, (_, i) => ({
    seq: i,
    text: `shared ${id} w${i} ${'filler '.repeat(i % 7)}`.trim(),
    sectionTitle: `section ${Math.floor(i / 100)}`,
    partMetadata: { i },
    vector: [1, i % 3, 0],
  })),
});

describe('SqliteSearchIndex: a large document written ahead of its batch', () => {
  let dir: string;
  let sqlite: SqliteDatabase;
  let index: SqliteSearchIndex;
  let position: number;

  const open = () => {
    sqlite = new SqliteDatabase({ path: join(dir, 'service.db'), synchronous: 'NORMAL' });
    index = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite));
  };
  const close = async () => {
    await index.close();
    sqlite.close();
  };
  const batchOf = (...ops: SearchOp[]): PositionedOps<SearchOp>[] => ops.map((op) => ({ position: ++position, ops: [op] }));
  /** As the projection worker applies a batch: the write-ahead, then the batch with its checkpoint. */
  const apply = async (batch: PositionedOps<SearchOp>[]) => {
    await index.writeAhead(P, 1, batch);
    await index.applyBatch(P, 1, batch, batch[batch.length - 1].position);
  };
  const upsert = (document: IndexedDocument): SearchOp => ({ op: 'upsertDocument', index: 'c', document });
  const hits = async (text: string) => (await index.search('c', { mode: 'lexical', text, limit: 20 })).map((h) => [h.documentId, h.seq, h.score]);
  const partCount = (id: string) => sqlite.db.prepare('SELECT COUNT(*) FROM si_1_parts WHERE doc_id = ?').pluck().get(id);

  /** A fresh database file with the index and one small document. */
  const fresh = async () => {
    dir = mkdtempSync(join(tmpdir(), 'si-ahead-'));
    position = 0;
    open();
    await index.prepare({ name: P, version: 1 }, 1);
    await index.activate({ name: P, version: 1 }, 1);
    await index.applyBatch(P, 1, batchOf({ op: 'createIndex', index: 'c', dimensions: 3 }, upsert(small('a', 'shared words of a small one'))), position);
  };
  const discard = async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  };
  beforeEach(fresh);
  afterEach(discard);

  it('gives the loop turns while it writes, and ends as the same document written in one transaction', async () => {
    const doc = large('big', 4 * AHEAD_SLICE_PARTS + 10);
    const { turns } = await turnsDuring(() => apply(batchOf(upsert(doc))));
    // One turn at least between each slice (four of parts, one for the document row): written in one step, none.
    expect(turns).toBeGreaterThanOrEqual(5);
    const ahead = { words: await hits('w3 shared'), title: await hits('section 4'), parts: await index.documentParts('c', 'big') };

    // The reference: the same document in the batch's one transaction (no write-ahead).
    await discard();
    await fresh();
    const batch = batchOf(upsert(doc));
    await index.applyBatch(P, 1, batch, position);
    expect({ words: await hits('w3 shared'), title: await hits('section 4'), parts: await index.documentParts('c', 'big') }).toEqual(ahead);
    expect(ahead.parts.map((p) => p.seq)).toEqual(doc.parts.map((p) => p.seq));
    expect(ahead.words[0]).toEqual(['big', 3, expect.any(Number)]);
  });

  it('a crash between the write-ahead and its batch leaves nothing twice: the replayed batch writes the document once', async () => {
    const doc = large('big', 2 * AHEAD_SLICE_PARTS + 1);
    const batch = batchOf(upsert(doc));
    await index.writeAhead(P, 1, batch);
    expect(partCount('big')).toBe(doc.parts.length);
    expect(await index.checkpoint(P, 1)).toBe(batch[0].position - 1); // the batch never committed
    await close();

    open(); // after the crash: the worker reads the batch again from its checkpoint
    const replayed = batchOf(upsert(large('big', 2 * AHEAD_SLICE_PARTS + 1)));
    await apply(replayed.map((b) => ({ ...b, position: batch[0].position })));
    expect(partCount('big')).toBe(doc.parts.length);
    expect(await index.checkpoint(P, 1)).toBe(batch[0].position);
    expect((await hits('w400'))[0]).toEqual(['big', 400, expect.any(Number)]);
  });

  it('keeps the batch order: a later delete removes it, an earlier one leaves the new document whole', async () => {
    await apply(batchOf(upsert(large('gone', AHEAD_SLICE_PARTS + 1)), { op: 'deleteDocument', index: 'c', documentId: 'gone' }));
    expect(partCount('gone')).toBe(0);
    expect(await hits('gone')).toEqual([]);

    await apply(batchOf(upsert(large('again', AHEAD_SLICE_PARTS + 1))));
    await apply(batchOf({ op: 'deleteDocument', index: 'c', documentId: 'again' }, upsert(large('again', AHEAD_SLICE_PARTS + 3))));
    expect(partCount('again')).toBe(AHEAD_SLICE_PARTS + 3);

    // A corpus reset in the same batch: the document lands in the new index, once.
    await apply(batchOf({ op: 'dropIndex', index: 'c' }, { op: 'createIndex', index: 'c', dimensions: 3 }, upsert(large('fresh', AHEAD_SLICE_PARTS + 1))));
    expect((await index.search('c', { mode: 'lexical', text: 'shared', limit: 100 })).every((h) => h.documentId === 'fresh')).toBe(true);
  });

  it('skips an op its checkpoint already holds', async () => {
    const batch = batchOf(upsert(large('big', AHEAD_SLICE_PARTS + 1)));
    await apply(batch);
    const rowids = sqlite.db.prepare('SELECT MAX(rowid) FROM si_1_parts').pluck().get();
    await apply(batch); // a retried batch
    expect(sqlite.db.prepare('SELECT MAX(rowid) FROM si_1_parts').pluck().get()).toBe(rowids);
  });
});

describe('a document row', () => {
  it('holds every part and each distinct title once, up to its bound, cut between words', () => {
    expect(documentRowOf([{ text: 'one two', title: 'T' }, { text: 'three', title: 'T' }, { text: 'four', title: null }])).toEqual({ text: 'one two\nthree\nfour', title: 'T' });
    const row = documentRowOf([{ text: 'alpha beta' }, { text: 'gamma delta epsilon' }, { text: 'zeta' }], 20);
    expect(row.text).toBe('alpha beta\ngamma');
    const words = Array.from({ length: 100_000 }, (_, i) => `word${i}`).join(' ');
    const big = documentRowOf([{ text: words }, { text: 'never' }]);
    expect(big.text.length).toBeLessThanOrEqual(DOCUMENT_ROW_CHARS);
    expect(big.text.length).toBeGreaterThan(DOCUMENT_ROW_CHARS - 20);
    expect(words.startsWith(big.text) && words[big.text.length] === ' ').toBe(true);
  });
});
