import fc from 'fast-check';
import { Pool } from 'pg';
import { havePostgres, testDatabase } from '../../../../../test/support/postgres';
import { filterArbitrary, corpusArbitrary, MIXED_PROFILE } from '../../filter/contract/filter-arbitraries';
import type { FilterExpr, Literal } from '../../filter/filter';
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

const control = (s: string) => s.replace(/b/g, '\u0000').replace(/B/g, '\u0001').replace(/a/g, '\u0002');

/**
 * Metadata with every string, names included, under `control`: `b` as U+0000, `B` as U+0001 and `a` as U+0002 (the
 * character PostgreSQL cannot hold, the escape character, and the one an escape pair ends with: postgres-text.ts).
 */
function controlMetadata(v: unknown): unknown {
  if (typeof v === 'string') return control(v);
  if (Array.isArray(v)) return v.map(controlMetadata);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [control(k), controlMetadata(x)]));
  return v;
}

/** The same filter over the controlled metadata: names, string literals and patterns under `control`. */
function controlFilter(e: FilterExpr): FilterExpr {
  const lit = (v: Literal): Literal => (typeof v === 'string' ? control(v) : v);
  switch (e.kind) {
    case 'and':
    case 'or':
      return { kind: e.kind, items: e.items.map(controlFilter) };
    case 'not':
      return { kind: 'not', item: controlFilter(e.item) };
    case 'cmp':
      return { ...e, field: { ...e.field, name: control(e.field.name) }, value: lit(e.value) };
    case 'in':
      return { ...e, field: { ...e.field, name: control(e.field.name) }, values: e.values.map(lit) };
    case 'is_null':
      return { ...e, field: { ...e.field, name: control(e.field.name) } };
    case 'like':
      return { ...e, field: { ...e.field, name: control(e.field.name) }, pattern: control(e.pattern) };
  }
}

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

  const cases = SEEDS.flatMap((seed) => [
    { seed, controls: false },
    { seed, controls: true },
  ]);
  describe.each(cases)('filter evaluators agree: PostgresReadStore (corpus seed $seed, control characters $controls)', ({ seed, controls }) => {
    const [corpus] = fc.sample(corpusArbitrary(MIXED_PROFILE), { seed, numRuns: 1 }) as [IndexedDocument[]];
    const documents = corpus.map((d, i) => ({
      id: controls ? control(`${d.documentId}-b`) : d.documentId,
      rank: i % 4,
      metadata: controls ? (controlMetadata(d.documentMetadata) as Record<string, unknown>) : d.documentMetadata,
    }));
    const collection = `docs_${seed}_${controls ? 'c' : 'p'}`;
    let reads: PostgresReadStore;

    beforeAll(async () => {
      reads = new PostgresReadStore(pool);
      const shape = { name: `equivalence_${collection}`, version: 1, collections: [{ name: collection, indexes: [{ fields: ['rank'] }] }] };
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
        fc.asyncProperty(filterArbitrary(MIXED_PROFILE, ['doc']).map((f) => (controls ? controlFilter(f) : f)), async (filter) => {
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
