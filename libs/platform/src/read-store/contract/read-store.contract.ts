import { parseFilter } from '../../filter/parse-filter';
import type { PositionedOps, ProjectionShape, ProjectionSink } from '../../projections/projection';
import type { ReadDoc, ReadOp, ReadStore } from '../read-store.port';

export interface ReadStoreFixture {
  store: ReadStore & ProjectionSink<ReadOp>;
  dispose(): Promise<void>;
}

type PositionedOpsLike = PositionedOps<ReadOp>;

const shape = (suffix: string): ProjectionShape => ({
  name: `contract_${suffix}`,
  version: 1,
  collections: [{ name: `items_${suffix}`, indexes: [{ fields: ['group', 'rank'] }, { fields: ['code'], unique: true }] }],
});

const item = (id: string, group: string, rank: number, extra: Record<string, unknown> = {}): ReadDoc => ({ id, group, rank, code: `c-${id}`, ...extra });

/** The one contract every ReadStore adapter passes: SQLite on every run, MongoDB when MONGODB_URL is set. */
export function describeReadStoreContract(adapter: string, create: () => Promise<ReadStoreFixture>): void {
  describe(`ReadStore contract: ${adapter}`, () => {
    let fx: ReadStoreFixture;
    let store: ReadStoreFixture['store'];
    let suffix: string;
    let coll: string;
    let p: ProjectionShape;
    let pos = 0;
    const apply = (ops: ReadOp[]) => store.applyBatch(p.name, 1, [{ position: ++pos, ops }], pos);

    beforeEach(async () => {
      fx = await create();
      store = fx.store;
      suffix = Math.random().toString(36).slice(2, 8);
      p = shape(suffix);
      coll = p.collections![0].name;
      pos = 0;
      await store.prepare(p, 1);
      await store.activate(p, 1);
    });
    afterEach(async () => fx.dispose());

    it('puts, gets, patches (set, unset, inc on dot paths) and deletes', async () => {
      await apply([{ op: 'put', collection: coll, doc: item('a', 'g1', 1, { stats: { docs: 1 }, tag: 'x' }) }]);
      expect(await store.get(coll, 'a')).toMatchObject({ id: 'a', group: 'g1', stats: { docs: 1 } });
      await apply([{ op: 'patch', collection: coll, id: 'a', set: { 'meta.title': 'T' }, unset: ['tag'], inc: { 'stats.docs': 2 } }]);
      const a = await store.get<ReadDoc & { meta: { title: string }; stats: { docs: number } }>(coll, 'a');
      expect(a?.meta.title).toBe('T');
      expect(a?.stats.docs).toBe(3);
      expect(a).not.toHaveProperty('tag');
      await apply([{ op: 'patch', collection: coll, id: 'missing', set: { x: 1 } }]);
      expect(await store.get(coll, 'missing')).toBeUndefined();
      await apply([{ op: 'delete', collection: coll, id: 'a' }]);
      expect(await store.get(coll, 'a')).toBeUndefined();
    });

    it('finds with equality, range, in, ne and null conditions, and counts', async () => {
      await apply([
        { op: 'put', collection: coll, doc: item('a', 'g1', 1, { flag: true }) },
        { op: 'put', collection: coll, doc: item('b', 'g1', 5, { flag: false }) },
        { op: 'put', collection: coll, doc: item('c', 'g2', 3) },
      ]);
      const ids = async (where: Parameters<ReadStore['find']>[1]['where']) =>
        (await store.find(coll, { where, limit: 10 })).items.map((d) => d.id);
      expect(await ids([{ field: 'group', op: 'eq', value: 'g1' }])).toEqual(['a', 'b']);
      expect(await ids([{ field: 'rank', op: 'gte', value: 3 }])).toEqual(['b', 'c']);
      expect(await ids([{ field: 'rank', op: 'gt', value: 1 }, { field: 'rank', op: 'lt', value: 5 }])).toEqual(['c']);
      expect(await ids([{ field: 'group', op: 'in', value: ['g2', 'g9'] }])).toEqual(['c']);
      expect(await ids([{ field: 'group', op: 'ne', value: 'g1' }])).toEqual(['c']);
      expect(await ids([{ field: 'flag', op: 'eq', value: true }])).toEqual(['a']);
      expect(await ids([{ field: 'flag', op: 'eq', value: null }])).toEqual(['c']);
      expect(await store.count(coll, [{ field: 'group', op: 'eq', value: 'g1' }])).toBe(2);
      expect(await store.count(coll)).toBe(3);
    });

    it('sums numeric fields over the documents a condition selects, missing and non-numeric values adding 0', async () => {
      await apply([
        { op: 'put', collection: coll, doc: item('a', 'g1', 1, { stats: { parts: 3, chars: 2.5 } }) },
        { op: 'put', collection: coll, doc: item('b', 'g1', 5, { stats: { parts: 4, chars: 'many' } }) },
        { op: 'put', collection: coll, doc: item('c', 'g2', 3, { stats: { parts: 10 } }) },
      ]);
      expect(await store.sum(coll, ['stats.parts', 'stats.chars', 'rank'])).toEqual({ 'stats.parts': 17, 'stats.chars': 2.5, rank: 9 });
      expect(await store.sum(coll, ['stats.parts'], [{ field: 'group', op: 'eq', value: 'g1' }])).toEqual({ 'stats.parts': 7 });
      expect(await store.sum('never_written', ['x'])).toEqual({ x: 0 });
    });

    it('filters by metadata with three-valued semantics, AND-ed with conditions, and counts', async () => {
      await apply([
        { op: 'put', collection: coll, doc: item('a', 'g1', 1, { metadata: { year: 2020, kind: 'x', 'created at': null }, 'back\\slash': 1 }) },
        { op: 'put', collection: coll, doc: item('b', 'g1', 2, { metadata: { year: 2021, kind: 'y', tags: ['x'] } }) },
        { op: 'put', collection: coll, doc: item('c', 'g2', 3, { metadata: { year: '2022', kind: 'X' } }) },
        { op: 'put', collection: coll, doc: item('d', 'g2', 4, { metadata: { year: 2019.5, 'a.b': true, $v: "it's" } }) },
        { op: 'put', collection: coll, doc: item('e', 'g2', 5) },
      ]);
      const ids = async (filter: string, where?: Parameters<ReadStore['find']>[1]['where']) =>
        (await store.find(coll, { where, metadata: { filter: parseFilter(filter), docField: 'metadata' }, limit: 10 })).items.map((d) => d.id);
      expect(await ids('doc.year >= 2020')).toEqual(['a', 'b']);
      // '2022' is a string and e has no metadata: UNKNOWN either way, so NOT selects neither.
      expect(await ids('NOT doc.year >= 2020')).toEqual(['d']);
      expect(await ids(`doc.kind IN ('x', 1)`)).toEqual(['a']);
      expect(await ids(`doc.kind NOT IN ('x', 1)`)).toEqual(['b', 'c']);
      expect(await ids(`doc."a.b" = true AND doc."$v" = 'it''s'`)).toEqual(['d']);
      expect(await ids('doc."a.b" = 1')).toEqual([]);
      expect(await ids(`doc."created at" IS NULL AND doc.tags IS NOT NULL`)).toEqual(['b']);
      expect(await ids(`doc.kind LIKE '_' AND doc.kind < 'y'`)).toEqual(['a', 'c']);
      expect(await ids('doc.year > 2000 OR doc.year IS NULL', [{ field: 'group', op: 'eq', value: 'g2' }])).toEqual(['d', 'e']);
      expect(await ids('doc.year IS NOT NULL', [{ field: 'back\\slash', op: 'eq', value: 1 }])).toEqual(['a']);
      const metadata = { filter: parseFilter('doc.year IS NOT NULL'), docField: 'metadata' };
      const seen: string[] = [];
      let pageKey: string | undefined;
      do {
        const page = await store.find(coll, { metadata, sort: { field: 'rank', direction: 'desc' }, limit: 1, pageKey });
        seen.push(...page.items.map((d) => d.id));
        pageKey = page.nextPageKey;
      } while (pageKey);
      expect(seen).toEqual(['d', 'c', 'b', 'a']);
      expect(await store.count(coll, [{ field: 'group', op: 'eq', value: 'g1' }], metadata)).toBe(2);
      expect(await store.count(coll, undefined, metadata)).toBe(4);
    });

    it('rejects part fields in a metadata filter, even on an empty collection', async () => {
      const metadata = { filter: parseFilter(`doc.year = 1 OR part.lang = 'eng'`), docField: 'metadata' };
      const unsupported = { kind: 'invalid', code: 'filter.level_unsupported', message: expect.stringContaining('part.lang') };
      await expect(store.find(coll, { metadata, limit: 10 })).rejects.toMatchObject(unsupported);
      await expect(store.count(coll, undefined, metadata)).rejects.toMatchObject(unsupported);
      await expect(store.find('never_prepared', { metadata, limit: 10 })).rejects.toMatchObject(unsupported);
    });

    it('sorts and pages with a cursor that visits every document once', async () => {
      const docs = Array.from({ length: 23 }, (_, i) => item(`d${String(i).padStart(2, '0')}`, 'g', i % 5));
      // Documents without the sort field must be paged through too.
      for (let i = 0; i < 5; i++) docs.push({ id: `n${i}`, group: 'g', code: `c-n${i}` });
      await apply(docs.map((doc) => ({ op: 'put' as const, collection: coll, doc })));
      for (const direction of ['asc', 'desc'] as const) {
        const seen: ReadDoc[] = [];
        let pageKey: string | undefined;
        do {
          const page = await store.find(coll, { sort: { field: 'rank', direction }, limit: 4, pageKey });
          seen.push(...page.items);
          pageKey = page.nextPageKey;
        } while (pageKey);
        expect(seen.map((d) => d.id).sort()).toEqual(docs.map((d) => d.id).sort());
        const ranks = seen.map((d) => d.rank as number).filter((r) => r !== undefined);
        expect(ranks).toEqual([...ranks].sort((x, y) => (direction === 'asc' ? x - y : y - x)));
      }
      const first = await store.find(coll, { limit: 5 });
      expect(first.items.map((d) => d.id)).toEqual(['d00', 'd01', 'd02', 'd03', 'd04']);
      const second = await store.find(coll, { limit: 5, pageKey: first.nextPageKey });
      expect(second.items[0].id).toBe('d05');
    });

    it('refuses a page key no list returned instead of restarting at the first page', async () => {
      await apply([{ op: 'put', collection: coll, doc: item('a', 'g1', 1) }]);
      for (const pageKey of ['not-a-key', Buffer.from('{"offset":3}').toString('base64url')]) {
        await expect(store.find(coll, { limit: 5, pageKey })).rejects.toMatchObject({ kind: 'invalid', code: 'request.invalid', details: { fieldErrors: { page_key: 'unknown page key' } } });
      }
    });

    it('deletes by condition', async () => {
      await apply([
        { op: 'put', collection: coll, doc: item('a', 'g1', 1) },
        { op: 'put', collection: coll, doc: item('b', 'g2', 1) },
      ]);
      await apply([{ op: 'deleteWhere', collection: coll, where: [{ field: 'group', op: 'eq', value: 'g1' }] }]);
      expect((await store.find(coll, { limit: 10 })).items.map((d) => d.id)).toEqual(['b']);
    });

    it('applies a guarded op only while its guard row holds, as the events before it left it', async () => {
      const fence = (equals: string) => ({ id: 'fence', field: 'incarnation', equals });
      await store.applyBatch(
        p.name,
        1,
        [
          { position: 1, ops: [{ op: 'put', collection: coll, doc: { id: 'fence', incarnation: 'one' } }] },
          { position: 2, ops: [{ op: 'put', collection: coll, doc: item('a', 'g', 1), onlyIf: fence('one') }] },
          { position: 3, ops: [{ op: 'put', collection: coll, doc: { id: 'fence', incarnation: 'two' } }] },
          { position: 4, ops: [{ op: 'put', collection: coll, doc: item('b', 'g', 1), onlyIf: fence('one') }, { op: 'patch', collection: coll, id: 'a', set: { rank: 9 }, onlyIf: fence('one') }] },
        ],
        4,
      );
      pos = 4;
      await apply([
        { op: 'delete', collection: coll, id: 'a', onlyIf: fence('one') },
        { op: 'put', collection: coll, doc: item('c', 'g', 1), onlyIf: { id: 'missing', field: 'incarnation', equals: 'two' } },
      ]);
      await apply([{ op: 'patch', collection: coll, id: 'a', inc: { rank: 1 }, onlyIf: fence('two') }]);
      expect((await store.find(coll, { limit: 10 })).items.map((d) => [d.id, d.rank])).toEqual([['a', 2], ['fence', undefined]]);
    });

    it('creates a missing row for a patch with `create`, and a replayed one adds nothing', async () => {
      const counter = (position: number): PositionedOpsLike => ({ position, ops: [{ op: 'patch', collection: coll, id: 'm', create: { group: 'g', rank: 0 }, inc: { n: 1, 'by.kind': 2 } }] });
      await store.applyBatch(p.name, 1, [counter(1), counter(2)], 2);
      expect(await store.get(coll, 'm')).toMatchObject({ id: 'm', group: 'g', rank: 0, n: 2, by: { kind: 4 } });
      // As after a crash that lost the checkpoint: the row's position guard skips what it holds already.
      await store.applyBatch(`${p.name}_lost_checkpoint`, 1, [counter(1), counter(2), counter(3)], 3);
      expect(await store.get(coll, 'm')).toMatchObject({ group: 'g', n: 3, by: { kind: 6 } });
      await apply([{ op: 'patch', collection: coll, id: 'plain', inc: { n: 1 } }]);
      expect(await store.get(coll, 'plain')).toBeUndefined();
    });

    it('stores the checkpoint with the batch, and a replayed batch changes nothing', async () => {
      const batch = [{ position: 10, ops: [{ op: 'put', collection: coll, doc: item('a', 'g', 1, { n: 0 }) } as ReadOp] },
        { position: 11, ops: [{ op: 'patch', collection: coll, id: 'a', inc: { n: 1 } } as ReadOp] }];
      await store.applyBatch(p.name, 1, batch, 11);
      expect(await store.checkpoint(p.name, 1)).toBe(11);
      await store.applyBatch(p.name, 1, batch, 11);
      expect((await store.get(coll, 'a'))?.n).toBe(1);
    });

    it('guards writes by position: an older put is skipped, and a later patch in the same batch sees the stored document', async () => {
      await store.applyBatch(p.name, 1, [{ position: 10, ops: [{ op: 'put', collection: coll, doc: item('a', 'g', 1, { n: 5 }) }] }], 10);
      // As after a crash that lost the checkpoint: only the per-document guards stand between the replay and the data.
      await store.applyBatch(
        `${p.name}_lost_checkpoint`,
        1,
        [
          { position: 8, ops: [{ op: 'put', collection: coll, doc: item('a', 'old', 0, { n: 0 }) }] },
          { position: 12, ops: [{ op: 'patch', collection: coll, id: 'a', inc: { n: 1 } }] },
        ],
        12,
      );
      expect(await store.get(coll, 'a')).toMatchObject({ group: 'g', n: 6 });
    });

    it('rebuilds into a new generation and swaps it in', async () => {
      await apply([{ op: 'put', collection: coll, doc: item('old', 'g', 1) }]);
      await store.prepare(p, 2);
      await store.applyBatch(p.name, 2, [{ position: 1, ops: [{ op: 'put', collection: coll, doc: item('new', 'g', 1) }] }], 1);
      expect(await store.get(coll, 'old')).toBeDefined();
      await store.activate(p, 2);
      expect(await store.get(coll, 'old')).toBeUndefined();
      expect(await store.get(coll, 'new')).toBeDefined();
    });
  });
}
