import fc from 'fast-check';
import { Query } from 'mingo';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProjectionShape } from '../projections/projection';
import { SqliteReadStore } from '../read-store/sqlite/sqlite-read-store';
import { filterFields, type FilterExpr } from './filter';
import type { IndexedDocument } from '../search-index/search-index.port';
import { SqliteSearchIndex } from '../search-index/sqlite/sqlite-search-index';
import { SqliteDatabase } from '../sqlite/sqlite-database';
import { SqliteProjectionState } from '../sqlite/sqlite-projection-state';
import { anyFilterArbitrary, COMMON_WORD, corpusArbitrary, MIXED_PROFILE } from './contract/filter-arbitraries';
import { formatFilter } from './format-filter';
import { matchesFilter } from './match-filter';
import { filterToMongo } from '../read-store/mongo/mongo-filter';
import { parseFilter } from './parse-filter';

/**
 * One grammar, one AST, four evaluators: for random metadata of mixed types and random expressions, the text form
 * reads back to the same AST, and matchesFilter, the SQLite search index, the SQLite read store and a MongoDB
 * query engine (mingo, over filterToMongo) select the same parts, and the same documents for doc-only filters.
 */
const SEEDS = [20240611, 7, 424242];
const RUNS_PER_CORPUS = 100;
const INDEX = 'equivalence';
const COLLECTION = 'docs';
const shape: ProjectionShape = { name: 'equivalence', version: 1, collections: [{ name: COLLECTION }] };

const partKey = (documentId: string, seq: number) => `${documentId}:${seq}`;
const sorted = (keys: Iterable<string>) => [...keys].sort();

describe.each(SEEDS)('filter evaluators agree (corpus seed %i)', (seed) => {
  const [corpus] = fc.sample(corpusArbitrary(MIXED_PROFILE), { seed, numRuns: 1 }) as [IndexedDocument[]];
  const parts = corpus.flatMap((d) => d.parts.map((p) => ({ id: partKey(d.documentId, p.seq), doc: d.documentMetadata, part: p.partMetadata })));
  const documents = corpus.map((d, i) => ({ id: d.documentId, rank: i % 4, metadata: d.documentMetadata }));
  let dir: string;
  let sqlite: SqliteDatabase;
  let search: SqliteSearchIndex;
  let reads: SqliteReadStore;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'filter-equivalence-'));
    sqlite = new SqliteDatabase({ path: join(dir, 'filters.db') });
    const state = new SqliteProjectionState(sqlite);
    search = new SqliteSearchIndex(sqlite, state);
    reads = new SqliteReadStore(sqlite, state);
    await search.prepare(shape, 1);
    await search.activate(shape, 1);
    await search.applyBatch('search', 1, [{ position: 1, ops: corpus.map((document) => ({ op: 'upsertDocument' as const, index: INDEX, document })) }], 1);
    await reads.prepare(shape, 1);
    await reads.activate(shape, 1);
    await reads.applyBatch('reads', 1, [{ position: 1, ops: documents.map((doc) => ({ op: 'put' as const, collection: COLLECTION, doc })) }], 1);
  });
  afterAll(() => {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every page of a sorted find, so the filter is checked together with the keyset cursor. */
  async function readStoreIds(filter: FilterExpr): Promise<string[]> {
    const ids: string[] = [];
    let pageKey: string | undefined;
    do {
      const page = await reads.find(COLLECTION, { metadata: { filter, docField: 'metadata' }, sort: { field: 'rank', direction: 'desc' }, limit: 3, pageKey });
      ids.push(...page.items.map((d) => d.id));
      pageKey = page.nextPageKey;
    } while (pageKey);
    return ids;
  }

  it(`selects the same parts and documents in ${RUNS_PER_CORPUS} random filters`, async () => {
    let selectedSomething = 0;
    await fc.assert(
      fc.asyncProperty(anyFilterArbitrary(MIXED_PROFILE), async (filter) => {
        expect(parseFilter(formatFilter(filter))).toEqual(filter);

        const expectedParts = sorted(parts.filter((p) => matchesFilter(filter, p)).map((p) => p.id));
        const hits = await search.search(INDEX, { mode: 'lexical', text: COMMON_WORD, filter, limit: 1000 });
        expect(sorted(hits.map((h) => partKey(h.documentId, h.seq)))).toEqual(expectedParts);
        const mongoParts = new Query(filterToMongo(filter, { doc: 'doc', part: 'part' })).find<{ id: string }>(parts).all();
        expect(sorted(mongoParts.map((p) => p.id))).toEqual(expectedParts);
        if (expectedParts.length > 0) selectedSomething++;

        if (filterFields(filter).some((f) => f.level === 'part')) return;
        const expectedDocs = documents.filter((d) => matchesFilter(filter, { doc: d.metadata }));
        // The store's order: rank descending, then id descending.
        const expectedOrder = [...expectedDocs].sort((a, b) => b.rank - a.rank || (a.id < b.id ? 1 : -1)).map((d) => d.id);
        expect(await readStoreIds(filter)).toEqual(expectedOrder);
        expect(await reads.count(COLLECTION, undefined, { filter, docField: 'metadata' })).toBe(expectedDocs.length);
        const mongoDocs = new Query(filterToMongo(filter, { doc: 'metadata' })).find<{ id: string }>(documents).all();
        expect(sorted(mongoDocs.map((d) => d.id))).toEqual(sorted(expectedDocs.map((d) => d.id)));
      }),
      { seed, numRuns: RUNS_PER_CORPUS },
    );
    // A generator that only ever selected nothing would make every comparison vacuous.
    expect(selectedSomething).toBeGreaterThan(RUNS_PER_CORPUS / 5);
  });
});
