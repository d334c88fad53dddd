import { Pool } from 'pg';
import { havePostgres, testDatabase } from '../../../../../test/support/postgres';
import type { PositionedOps } from '../../projections/projection';
import type { ReadOp } from '../read-store.port';
import { describeReadStoreContract } from '../contract/read-store.contract';
import { PostgresProjectionState } from './postgres-projection-state';
import { PostgresReadStore } from './postgres-read-store';

if (!havePostgres('ReadStore contract: PostgresReadStore')) {
  describe.skip('ReadStore contract: PostgresReadStore', () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  jest.setTimeout(30_000);
  const pools: Pool[] = [];
  let url: string;
  beforeAll(async () => {
    url = (await testDatabase('read_store'))!;
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
  });

  /** One database for the file; every contract test uses collections of its own (random suffixes). */
  const fixture = async () => {
    const pool = new Pool({ connectionString: url, max: 4 });
    // As connectPostgresReads does: a test below ends every connection of the database, idle ones included.
    pool.on('error', () => undefined);
    pools.push(pool);
    return { pool, store: new PostgresReadStore(pool), dispose: async () => undefined };
  };

  describeReadStoreContract('PostgresReadStore', fixture);

  describe('PostgresReadStore replay after a crash between the writes and the checkpoint', () => {
    let n = 0;
    const shapeOf = () => {
      const name = `replay_${++n}`;
      return { name, version: 1, collections: [{ name: `items_${n}`, indexes: [{ fields: ['code'], unique: true }] }] };
    };
    const put = (collection: string, id: string, extra: Record<string, unknown> = {}): ReadOp => ({ op: 'put', collection, doc: { id, code: `c-${id}`, ...extra } });

    it('skips guarded writes that were applied, and still applies the rest in order', async () => {
      const fx = await fixture();
      const shape = shapeOf();
      const c = shape.collections[0].name;
      await fx.store.prepare(shape, 1);
      await fx.store.activate(shape, 1);
      const batch = [
        { position: 1, ops: [put(c, 'a', { n: 0 })] },
        { position: 2, ops: [put(c, 'b', { n: 5 })] },
        { position: 3, ops: [{ op: 'patch', collection: c, id: 'b', inc: { n: 1 }, set: { 'meta.t': 'x' } } as ReadOp] },
      ];
      // A lost checkpoint (another projection name) stands for a crash after the writes: the whole batch again.
      await fx.store.applyBatch(shape.name, 1, batch, 3);
      await fx.store.applyBatch(`${shape.name}_lost`, 1, batch, 3);
      expect(await fx.store.get(c, 'a')).toEqual({ id: 'a', code: 'c-a', n: 0 });
      expect(await fx.store.get(c, 'b')).toEqual({ id: 'b', code: 'c-b', n: 6, meta: { t: 'x' } });
      expect(await fx.store.checkpoint(shape.name, 1)).toBe(3);
    });

    it('replays a delete followed by a put that reuses a unique value, and rejects a genuine duplicate with the batch', async () => {
      const fx = await fixture();
      const shape = shapeOf();
      const c = shape.collections[0].name;
      await fx.store.prepare(shape, 1);
      await fx.store.activate(shape, 1);
      const batch = [
        { position: 1, ops: [put(c, 'a', { code: 'X' })] },
        { position: 2, ops: [{ op: 'delete', collection: c, id: 'a' } as ReadOp] },
        { position: 3, ops: [put(c, 'b', { code: 'X' })] },
      ];
      await fx.store.applyBatch(shape.name, 1, batch, 3);
      await fx.store.applyBatch(`${shape.name}_lost`, 1, batch, 3);
      expect(await fx.store.get(c, 'a')).toBeUndefined();
      expect(await fx.store.get(c, 'b')).toMatchObject({ code: 'X' });
      await expect(fx.store.applyBatch(shape.name, 1, [{ position: 4, ops: [put(c, 'd'), put(c, 'c', { code: 'X' })] }], 4)).rejects.toMatchObject({ code: '23505' });
      // Nothing of the failed batch stays, its checkpoint included.
      expect(await fx.store.get(c, 'd')).toBeUndefined();
      expect(await fx.store.checkpoint(shape.name, 1)).toBe(3);
    });

    it('skips an older put without reading the row first, in a batch that only puts', async () => {
      const fx = await fixture();
      const shape = shapeOf();
      const c = shape.collections[0].name;
      await fx.store.prepare(shape, 1);
      await fx.store.activate(shape, 1);
      await fx.store.applyBatch(shape.name, 1, [{ position: 10, ops: [put(c, 'a', { n: 10 })] }], 10);
      // Under a lost checkpoint: only the guard in the upsert stands between the old puts and the newer row.
      await fx.store.applyBatch(`${shape.name}_lost`, 1, [{ position: 8, ops: [put(c, 'a', { n: 8 })] }, { position: 9, ops: [put(c, 'b', { n: 9 })] }], 9);
      expect(await fx.store.get(c, 'a')).toEqual({ id: 'a', code: 'c-a', n: 10 });
      expect(await fx.store.get(c, 'b')).toEqual({ id: 'b', code: 'c-b', n: 9 });
      await fx.store.applyBatch(`${shape.name}_lost`, 1, [{ position: 11, ops: [put(c, 'a', { n: 11 })] }, { position: 12, ops: [put(c, 'a', { n: 12 })] }], 12);
      expect(await fx.store.get(c, 'a')).toEqual({ id: 'a', code: 'c-a', n: 12 });
      // A dead letter replayed (`replay`) applies an old put over a newer row, as on SQLite, and keeps the newer position.
      await fx.store.applyBatch(shape.name, 1, [{ position: 5, ops: [put(c, 'a', { n: 5 })] }], 5, { replay: true });
      expect(await fx.store.get(c, 'a')).toEqual({ id: 'a', code: 'c-a', n: 5 });
      await fx.store.applyBatch(`${shape.name}_lost_again`, 1, [{ position: 12, ops: [put(c, 'a', { n: 12 })] }], 12);
      expect(await fx.store.get(c, 'a')).toEqual({ id: 'a', code: 'c-a', n: 5 });
    });

    it('patches overlapping paths in order and counts a non-number up from 0, as the SQLite adapter does', async () => {
      const fx = await fixture();
      const shape = shapeOf();
      const c = shape.collections[0].name;
      await fx.store.prepare(shape, 1);
      await fx.store.activate(shape, 1);
      await fx.store.applyBatch(shape.name, 1, [{ position: 1, ops: [put(c, 'a', { meta: { t: 'x', u: 1 }, n: 'text' })] }], 1);
      const patch: ReadOp = { op: 'patch', collection: c, id: 'a', set: { meta: { t: 'y' }, 'meta.v': 2 }, unset: ['meta.t'], inc: { n: 2 } };
      await fx.store.applyBatch(shape.name, 1, [{ position: 2, ops: [patch] }], 2);
      expect(await fx.store.get(c, 'a')).toEqual({ id: 'a', code: 'c-a', meta: { v: 2 }, n: 2 });
    });
  });

  describe('PostgresReadStore on PostgreSQL itself', () => {
    it('applies overlapping batches that two processes deliver at the same time as if one after the other', async () => {
      const [one, two] = [await fixture(), await fixture()];
      const counter = (position: number) => ({ position, ops: [{ op: 'patch', collection: 'counters', id: 'c', create: { n: 0 }, inc: { n: 1 } } as ReadOp] });
      for (let round = 0; round < 10; round++) {
        const shape = { name: `concurrent_${round}`, version: 1, collections: [{ name: 'counters' }] };
        await one.store.prepare(shape, round + 1);
        await one.store.activate(shape, round + 1);
        const upTo = (n: number) => Array.from({ length: n }, (_, i) => counter(i + 1));
        // The one that reaches 60 may commit first or second: either way every event counts once.
        await Promise.all([one.store.applyBatch(shape.name, round + 1, upTo(50), 50), two.store.applyBatch(shape.name, round + 1, upTo(60), 60)]);
        expect(await two.store.get('counters', 'c')).toMatchObject({ n: 60 });
        expect(await two.store.checkpoint(shape.name, round + 1)).toBe(60);
      }
    });

    it('keeps collections with long names that share their first 63 bytes apart', async () => {
      const fx = await fixture();
      const long = 'x'.repeat(70);
      const shape = { name: 'long_names', version: 1, collections: [{ name: `${long}_a`, indexes: [{ fields: ['k'] }] }, { name: `${long}_b`, indexes: [{ fields: ['k'] }] }] };
      await fx.store.prepare(shape, 1);
      await fx.store.activate(shape, 1);
      await fx.store.applyBatch(shape.name, 1, [{ position: 1, ops: [{ op: 'put', collection: `${long}_a`, doc: { id: '1', k: 'a' } }, { op: 'put', collection: `${long}_b`, doc: { id: '1', k: 'b' } }] }], 1);
      expect(await fx.store.get(`${long}_a`, '1')).toEqual({ id: '1', k: 'a' });
      expect(await fx.store.get(`${long}_b`, '1')).toEqual({ id: '1', k: 'b' });
    });

    it('answers a condition and a sort from the declared expression index', async () => {
      const fx = await fixture();
      const shape = { name: 'planned', version: 1, collections: [{ name: 'planned_items', indexes: [{ fields: ['group', 'rank'] }] }] };
      await fx.store.prepare(shape, 1);
      await fx.store.activate(shape, 1);
      const ops: ReadOp[] = Array.from({ length: 5000 }, (_, i) => ({ op: 'put', collection: 'planned_items', doc: { id: `d${i}`, group: `g${i % 50}`, rank: i } }));
      await fx.store.applyBatch(shape.name, 1, [{ position: 1, ops }], 1);
      await fx.pool.query('ANALYZE rm_planned_items_g1');
      const page = await fx.store.find('planned_items', { where: [{ field: 'group', op: 'eq', value: 'g7' }], sort: { field: 'rank', direction: 'desc' }, limit: 3 });
      expect(page.items.map((d) => d.rank)).toEqual([4957, 4907, 4857]);
      const { rows } = await fx.pool.query(
        `EXPLAIN SELECT doc FROM rv_planned_items WHERE NULLIF(doc -> 'group', 'null'::jsonb) = $1::jsonb
         ORDER BY NULLIF(doc -> 'rank', 'null'::jsonb) DESC NULLS LAST, id DESC LIMIT 4`,
        ['"g7"'],
      );
      expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('rm_planned_items_g1_i0');
    });

    it('holds U+0000 in ids, names and values (glossary entry ids are `<key>\\0<term>`), in the order SQLite keeps', async () => {
      const fx = await fixture();
      const shape = { name: 'controls', version: 1, collections: [{ name: 'entries', indexes: [{ fields: ['term'] }] }] };
      await fx.store.prepare(shape, 1);
      await fx.store.activate(shape, 1);
      const ids = ['a', 'a\u0000x', 'a\u0000', 'a\u0001', 'a\u0001\u0001', 'a\u0002', 'a\\u0000', 'b'];
      const ops: ReadOp[] = ids.map((id, i) => ({ op: 'put', collection: 'entries', doc: { id, term: id, n: i, 'k\u0000\u0001': { v: `x${id}` } } }));
      await fx.store.applyBatch(shape.name, 1, [{ position: 1, ops }], 1);
      await fx.store.applyBatch(shape.name, 1, [{ position: 2, ops: [{ op: 'patch', collection: 'entries', id: 'a\u0000x', set: { 'k\u0000\u0001.w': '\u0000' } }] }], 2);
      expect(await fx.store.get('entries', 'a\u0000x')).toEqual({ id: 'a\u0000x', term: 'a\u0000x', n: 1, 'k\u0000\u0001': { v: 'xa\u0000x', w: '\u0000' } });
      const byCodeUnits = [...ids].sort();
      const all = async (sort?: { field: string; direction: 'asc' | 'desc' }) => {
        const seen: string[] = [];
        let pageKey: string | undefined;
        do {
          const page = await fx.store.find('entries', { sort, limit: 3, pageKey });
          seen.push(...page.items.map((d) => d.id));
          pageKey = page.nextPageKey;
        } while (pageKey);
        return seen;
      };
      expect(await all()).toEqual(byCodeUnits);
      expect(await all({ field: 'term', direction: 'desc' })).toEqual([...byCodeUnits].reverse());
      const where = async (value: string, op: 'eq' | 'gt' = 'eq') => (await fx.store.find('entries', { where: [{ field: 'term', op, value }], limit: 20 })).items.map((d) => d.id);
      expect(await where('a\u0000')).toEqual(['a\u0000']);
      expect(await where('a\u0001', 'gt')).toEqual(['a\u0001\u0001', 'a\u0002', 'a\\u0000', 'b']);
      expect((await fx.store.find('entries', { where: [{ field: 'id', op: 'in', value: ['a\u0000', 'a\u0001'] }], limit: 20 })).items.map((d) => d.id)).toEqual(['a\u0000', 'a\u0001']);
      await fx.store.applyBatch(shape.name, 1, [{ position: 3, ops: [{ op: 'deleteWhere', collection: 'entries', where: [{ field: 'term', op: 'lt', value: 'a\u0001' }] }] }], 3);
      expect(await all()).toEqual(['a\u0001', 'a\u0001\u0001', 'a\u0002', 'a\\u0000', 'b']);
    });

    it('stores a lone surrogate as U+FFFD instead of failing the batch', async () => {
      const fx = await fixture();
      const shape = { name: 'surrogates', version: 1, collections: [{ name: 'texts' }] };
      await fx.store.prepare(shape, 1);
      await fx.store.activate(shape, 1);
      await fx.store.applyBatch(shape.name, 1, [{ position: 1, ops: [{ op: 'put', collection: 'texts', doc: { id: 't', a: 'x\ud800y', b: '\udc00', pair: '\ud83d\ude00' } }] }], 1);
      expect(await fx.store.get('texts', 't')).toEqual({ id: 't', a: 'x\ufffdy', b: '\ufffd', pair: '\ud83d\ude00' });
    });

    it('goes on after the server ends its connections, idle or in a transaction', async () => {
      const fx = await fixture();
      const shape = { name: 'terminated', version: 1, collections: [{ name: 'survivors' }] };
      await fx.store.prepare(shape, 1);
      await fx.store.activate(shape, 1);
      const put = (position: number): PositionedOps<ReadOp> => ({ position, ops: [{ op: 'put', collection: 'survivors', doc: { id: `r${position}` } }] });
      await fx.store.applyBatch(shape.name, 1, [put(1)], 1);
      const admin = new Pool({ connectionString: url, max: 1 });
      admin.on('error', () => undefined);
      pools.push(admin);
      const terminateOthers = () => admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      await terminateOthers();
      // A batch whose connection is ended mid-transaction fails whole; the next one runs on a new connection.
      const slow = new PostgresReadStore({
        query: fx.pool.query.bind(fx.pool),
        connect: async () => {
          const client = await fx.pool.connect();
          const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
          (client as unknown as { query: typeof query }).query = async (...args: unknown[]) => {
            if (typeof args[0] === 'string' && args[0].startsWith('INSERT INTO "rm_survivors')) await terminateOthers();
            return query(...args);
          };
          return client;
        },
      } as unknown as Pool);
      await expect(slow.applyBatch(shape.name, 1, [put(2)], 2)).rejects.toThrow();
      await fx.store.applyBatch(shape.name, 1, [put(2), put(3)], 3);
      expect((await fx.store.find('survivors', { limit: 10 })).items.map((d) => d.id)).toEqual(['r1', 'r2', 'r3']);
      expect(await fx.store.checkpoint(shape.name, 1)).toBe(3);
    });

    it('answers unavailable (a 503, not a 500) while the server cannot be reached, without the password', async () => {
      const down = new URL(url);
      // A port nothing listens on: the database's own port plus one, on the loopback address.
      down.port = String(Number(down.port) + 1);
      down.password = 'secret-pw-s3cr3t';
      const pool = new Pool({ connectionString: down.toString(), max: 1, connectionTimeoutMillis: 2000 });
      pool.on('error', () => undefined);
      pools.push(pool);
      const store = new PostgresReadStore(pool);
      const state = new PostgresProjectionState(pool);
      const unavailable = { kind: 'unavailable', code: 'read_store.unavailable' };
      for (const call of [
        () => store.get('things', 'a'),
        () => store.find('things', { where: [{ field: 'k', op: 'eq', value: 1 }], limit: 5 }),
        () => store.ping(),
        () => store.applyBatch('p', 1, [], 1),
        () => state.active('p'),
      ]) {
        const err = await call().then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(err).toMatchObject(unavailable);
        expect(`${err?.message}`).not.toContain('s3cr3t');
      }
    });

    it('keeps dead letters and the active generation', async () => {
      const fx = await fixture();
      const state = new PostgresProjectionState(fx.pool);
      const letter = { projection: 'p', position: 7, eventId: 'e', eventType: 'T', streamId: 's', error: 'boom \u0000 \u0001', attempts: 3, parkedAt: '2026-12-03T00:00:00Z' };
      await state.park(letter);
      expect(await state.deadLetters('p')).toEqual([letter]);
      await state.unpark('p', 7);
      expect(await state.deadLetters()).toEqual([]);
      await state.save('p', 1, 5);
      await state.save('p', 2, 9);
      await state.setActive('p', 2, 3);
      expect(await state.active('p')).toEqual({ generation: 2, version: 3 });
      expect(await state.load('p', 1)).toBe(0);
      expect(await state.load('p', 2)).toBe(9);
    });
  });
}
