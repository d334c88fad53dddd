import { SqliteDatabase } from '../../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../../sqlite/sqlite-projection-state';
import type { IndexedDocument, SearchOp } from '../../search-index.port';
import { SqliteSearchIndex } from '../sqlite-search-index';

/** A document as a user sends a structured one: one section, its title on every sentence-sized part. */
const titled = (documentId: string, title: string | undefined, sentences: string[]): IndexedDocument => ({
  documentId,
  documentMetadata: {},
  parts: sentences.map((text, seq) => ({ seq, text, partMetadata: {}, ...(title ? { sectionTitle: title } : {}) })),
});

const FILLER = ['Rainfall in the valley rose over the decade.', 'The committee met twice in spring.', 'Bridges need regular inspection.', 'Wheat prices fell in autumn.'];

describe('SqliteSearchIndex lexical ranking and scores (docs/search.md)', () => {
  let sqlite: SqliteDatabase;
  let index: SqliteSearchIndex;
  let pos = 0;
  const shape = { name: 'search', version: 1 };
  const load = async (docs: IndexedDocument[]) => {
    const ops: SearchOp[] = [{ op: 'createIndex', index: 'c' }, ...docs.map((document) => ({ op: 'upsertDocument' as const, index: 'c', document }))];
    await index.applyBatch('search', 1, [{ position: ++pos, ops }], pos);
  };
  const search = (text: string, limit = 10) => index.search('c', { mode: 'lexical', text, limit });

  beforeEach(async () => {
    sqlite = new SqliteDatabase({ path: ':memory:' });
    index = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite));
    await index.prepare(shape, 1);
    await index.activate(shape, 1);
  });
  afterEach(() => sqlite.close());

  it('scores a clear match in a one-document corpus as a clear match, not as noise', async () => {
    await load([titled('only', undefined, ['Mitochondria produce most of the energy a cell uses.'])]);
    const [hit] = await search('How do mitochondria produce energy?');
    expect(hit.documentId).toBe('only');
    expect(hit.score).toBeGreaterThan(0.5);
    expect(hit.score).toBeLessThanOrEqual(1);
    expect(hit.lexicalRelevance).toBe(hit.score);
  });

  it('scores a part matching one of several query words lower than one matching them all, both in 0–1', async () => {
    await load([titled('all', undefined, ['Statins lower cholesterol in older adults.']), titled('one', undefined, ['Older bridges need inspection.']), ...FILLER.map((t, i) => titled(`f${i}`, undefined, [t]))]);
    const hits = await search('statins cholesterol older adults');
    expect(hits.map((h) => h.documentId)).toEqual(['all', 'one']);
    expect(hits[0].score).toBeGreaterThan(0.6);
    expect(hits[1].score).toBeLessThan(hits[0].score / 2);
  });

  it('ranks a document whose title and sentences together hold the query above one sentence repeating part of it', async () => {
    await load([
      titled('paper', 'Statin therapy and heart attacks', ['We followed 4,000 patients for ten years.', 'Treatment halved the risk of a second event.']),
      titled('news', 'Winter news', ['Heart attacks rise in winter; heart attacks peak in January.', 'Snow closed the roads.']),
      ...FILLER.map((t, i) => titled(`f${i}`, 'Notes', [t])),
    ]);
    const hits = await search('statin therapy heart attacks');
    expect(hits[0].documentId).toBe('paper');
  });

  it('never lets the calibrated score disagree with the ranking', async () => {
    await load([...FILLER, 'Rainfall and wheat prices in the valley.', 'Wheat grows in the valley.'].map((t, i) => titled(`d${i}`, i % 2 ? 'Valley wheat' : undefined, [t, 'Prices of wheat.'])));
    const hits = await search('wheat valley prices rainfall', 20);
    expect(hits.length).toBeGreaterThan(3);
    hits.slice(1).forEach((h, i) => {
      expect(h.score).toBeLessThanOrEqual(hits[i].score);
      expect(h.textScore!).toBeLessThanOrEqual(hits[i].textScore!);
    });
  });
});
