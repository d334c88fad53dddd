import type { RankedPart, SearchIndex, SearchOp } from '@lib/platform';
import { SqliteDatabase, SqliteProjectionState, SqliteSearchIndex } from '@lib/platform/sqlite';
import { Candidate, CandidateCorpus, corpusCandidates, resultsOf } from './candidates';

/** The same index seen as an adapter that returns content with its ranking (as Typesense does): no rank, no hitsOf. */
const withoutRefs = (si: SqliteSearchIndex): SearchIndex => ({
  search: (index, request) => si.search(index, request),
  distinctValues: (index, field, options) => si.distinctValues(index, field, options),
  fieldValues: (index, field, options) => si.fieldValues(index, field, options),
  documentParts: (index, documentId) => si.documentParts(index, documentId),
  ping: () => si.ping(),
});

const WORDS = ['whales', 'krill', 'sharks', 'seals', 'tides', 'moon', 'coast', 'deep', 'blue', 'ocean', 'the', 'of'];

describe('candidates ranked by ref, content read for the kept ones only', () => {
  let sqlite: SqliteDatabase;
  let si: SqliteSearchIndex;
  let pos = 0;
  const apply = (ops: SearchOp[]) => si.applyBatch('search', 1, [{ position: ++pos, ops }], pos);
  const corpus: CandidateCorpus = { key: 'c', index: 0, encoder: 'test' };

  beforeEach(async () => {
    sqlite = new SqliteDatabase({ path: ':memory:' });
    si = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite));
    await si.prepare({ name: 'search', version: 1 }, 1);
    await si.activate({ name: 'search', version: 1 }, 1);
    const documents = Array.from({ length: 40 }, (_, d) => ({
      documentId: `d${d}`,
      documentMetadata: { n: d },
      parts: Array.from({ length: 3 }, (_, seq) => ({
        seq,
        text: Array.from({ length: 6 }, (_, w) => WORDS[(d * 7 + seq * 3 + w * 5) % WORDS.length]).join(' '),
        partMetadata: {},
        vector: [Math.cos(d + seq), Math.sin(d * seq + 1), ((d + 2 * seq) % 5) / 5],
      })),
    }));
    await apply([{ op: 'createIndex', index: 'c', dimensions: 3 }, ...documents.map((document) => ({ op: 'upsertDocument' as const, index: 'c', document }))]);
  });
  afterEach(async () => {
    await si.close();
    sqlite.close();
  });

  const cases = [
    { name: 'lexical', weight: 1 },
    { name: 'hybrid', weight: 0.7 },
    { name: 'vector', weight: 0 },
  ];
  it.each(cases)('ranks as the content-reading path does ($name), page and all', async ({ weight }) => {
    const request = { text: 'whales krill deep ocean', weight, depth: 10, side: 100, withVectors: true };
    const vector = async () => [0.3, 0.8, 0.2];
    const byRef = await corpusCandidates(si, corpus, request, vector);
    const byHit = await corpusCandidates(withoutRefs(si), corpus, request, vector);
    expect(byRef.every((c) => c.ranked && !c.hit)).toBe(true);
    expect(byRef.map((c) => c.score)).toEqual(byHit.map((c) => c.score));
    const all = (cs: Candidate[], s: SearchIndex) => resultsOf(s, [...cs].sort((a, b) => b.score - a.score), cs.length, true);
    expect(await all(byRef, si)).toEqual(await all(byHit, si));
  });

  it('reads the rows of the page only, and fills the page past a part deleted since it was ranked', async () => {
    const read: RankedPart[][] = [];
    const counting = Object.assign(Object.create(si) as SqliteSearchIndex, {
      hitsOf: (index: string, ranked: readonly RankedPart[], withVectors?: boolean) => {
        read.push([...ranked]);
        return si.hitsOf(index, ranked, withVectors);
      },
    });
    const candidates = (await corpusCandidates(counting, corpus, { text: 'whales krill', weight: 0.7, depth: 5, side: 100, withVectors: false }, async () => [1, 0, 0])).sort(
      (a, b) => b.score - a.score,
    );
    expect(candidates.length).toBeGreaterThan(20);
    const page = await resultsOf(counting, candidates, 5, false);
    expect(read.map((r) => r.length)).toEqual([5]);
    const second = page[1].document_id;
    await apply([{ op: 'deleteDocument', index: 'c', documentId: second }]);
    read.length = 0;
    const after = await resultsOf(counting, candidates, 5, false);
    expect(after).toHaveLength(5);
    expect(after.some((r) => r.document_id === second)).toBe(false);
    expect(after.filter((r) => r.document_id !== second).slice(0, 4)).toEqual(page.filter((r) => r.document_id !== second).slice(0, 4));
    // The page's 5, then as many more as were missing (the deleted document has 3 parts), never the whole list.
    expect(read[0]).toHaveLength(5);
    expect(read.flat().length).toBeLessThanOrEqual(5 + 3);
  });
});
