import fc from 'fast-check';
import { Pool } from 'pg';
import { havePostgres, testDatabase } from '../../../../../test/support/postgres';
import { filterArbitrary, corpusArbitrary, MIXED_PROFILE } from '../../filter/contract/filter-arbitraries';
import type { FilterExpr } from '../../filter/filter';
import { matchesFilter } from '../../filter/match-filter';
import type { IndexedDocument } from '../../search-index/search-index.port';
import { PostgresReadStore } from './postgres-read-store';

/**
 * The filter equivalence property (filter/filter-equivalence.int.spec.ts) for the PostgreSQL read store: for random
 * metadata of mixed types and random document-level expressions, the store selects the documents `matchesFilter`
 * selects, in the store's order, through every page of a sorted find, and counts them.
 */
const SEEDS = [20240611, 7, 424242];
const RUNS_PER_CORPUS = 100;

if (!havePostgres('filter evaluators agree: PostgresReadStore')) {
  describe.skip('filter evaluators agree: PostgresReadStore', () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  jest.setTimeout(60_000);
  let pool: Pool;
  beforeAll(async () => {
    pool = new Pool({ connectionString: (await testDatabase('filter_equivalence'))!, max: 2 });
  });
  afterAll(async () => pool?.end());

  describe.each(SEEDS)('filter evaluators agree: PostgresReadStore (corpus seed %i)', (seed) => {
    const [corpus] = fc.sample(corpusArbitrary(MIXED_PROFILE), { seed, numRuns: 1 }) as [IndexedDocument[]];
    const documents = corpus.map((d, i) => ({ id: d.documentId, rank: i % 4, metadata: d.documentMetadata }));
    const collection = `docs_${seed}`;
    let reads: PostgresReadStore;

    beforeAll(async () => {
      reads = new PostgresReadStore(pool);
      const shape = { name: `equivalence_${seed}`, version: 1, collections: [{ name: collection, indexes: [{ fields: ['rank'] }] }] };
      await reads.prepare(shape, 1);
      await reads.activate(shape, 1);
      await reads.applyBatch(shape.name, 1, [{ position: 1, ops: documents.map((doc) => ({ op: 'put' as const, collection, doc })) }], 1);
    });

    async function ids(filter: FilterExpr): Promise<string[]> {
      const out: string[] = [];
      let pageKey: string | undefined;
      do {
        const page = await reads.find(collection, { metadata: { filter, docField: 'metadata' }, sort: { field: 'rank', direction: 'desc' }, limit: 3, pageKey });
        out.push(...page.items.map((d) => d.id));
        pageKey = page.nextPageKey;
      } while (pageKey);
      return out;
    }

    it(`selects the documents matchesFilter selects in ${RUNS_PER_CORPUS} random filters`, async () => {
      let selectedSomething = 0;
      await fc.assert(
        fc.asyncProperty(filterArbitrary(MIXED_PROFILE, ['doc']), async (filter) => {
          const expected = documents.filter((d) => matchesFilter(filter, { doc: d.metadata }));
          // The store's order: rank descending, then id descending.
          const expectedOrder = [...expected].sort((a, b) => b.rank - a.rank || (a.id < b.id ? 1 : -1)).map((d) => d.id);
          expect(await ids(filter)).toEqual(expectedOrder);
          expect(await reads.count(collection, undefined, { filter, docField: 'metadata' })).toBe(expected.length);
          if (expected.length > 0) selectedSomething++;
        }),
        { seed, numRuns: RUNS_PER_CORPUS },
      );
      // A generator that only ever selected nothing would make every comparison vacuous.
      expect(selectedSomething).toBeGreaterThan(RUNS_PER_CORPUS / 5);
    });
  });
}
