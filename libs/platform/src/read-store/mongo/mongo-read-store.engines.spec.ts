import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import type { ReadOp } from '../read-store.port';
import { describeReadStoreContract } from '../contract/read-store.contract';
import { MongoReadStore } from './mongo-read-store';

const url = process.env.MONGODB_URL;

if (!url) {
  // Not the console: Jest drops the console output of an all-skipped file when it runs files in workers.
  process.stderr.write('skipped: MONGODB_URL is not set (start one with docker compose up -d mongo)\n');
  describe.skip('ReadStore contract: MongoReadStore', () => {
    it('needs MONGODB_URL', () => undefined);
  });
} else {
  // Index builds and drops on a replica set outlast Jest's 5 s default; a server that is down fails after 3 s.
  jest.setTimeout(30_000);
  const run = `ars_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  let client: MongoClient | undefined;
  let fixtures = 0;
  const connect = async (): Promise<MongoClient> => (client ??= await MongoClient.connect(url, { serverSelectionTimeoutMS: 3000 }));
  afterAll(async () => client?.close());

  /** A fresh database per fixture, dropped afterwards, so runs and tests never see each other's data. */
  const fixture = async () => {
    const db = (await connect()).db(`${run}_${++fixtures}`);
    return { db, store: new MongoReadStore(db), dispose: async () => void (await db.dropDatabase()) };
  };

  describeReadStoreContract('MongoReadStore', fixture);

  describe('MongoReadStore replay after a crash between the writes and the checkpoint', () => {
    const shape = { name: 'replay', version: 1, collections: [{ name: 'items', indexes: [{ fields: ['code'], unique: true }] }] };
    const put = (id: string, extra: Record<string, unknown> = {}): ReadOp => ({ op: 'put', collection: 'items', doc: { id, code: `c-${id}`, ...extra } });

    it('skips guarded writes that were applied, and still applies the rest in order', async () => {
      const fx = await fixture();
      try {
        await fx.store.prepare(shape, 1);
        await fx.store.activate(shape, 1);
        const batch = [
          { position: 1, ops: [put('a', { n: 0 }), { op: 'patch', collection: 'items', id: 'a', inc: { n: 1 } } as ReadOp] },
          { position: 2, ops: [put('b', { n: 5 })] },
          { position: 3, ops: [{ op: 'patch', collection: 'items', id: 'b', inc: { n: 1 }, set: { 'meta.t': 'x' } } as ReadOp] },
        ];
        // Checkpoint 0 stands for a crash after the writes: the whole batch is delivered again.
        await fx.store.applyBatch(shape.name, 1, batch, 0);
        await fx.store.applyBatch(shape.name, 1, batch, 3);
        expect(await fx.store.get('items', 'a')).toEqual({ id: 'a', code: 'c-a', n: 1 });
        expect(await fx.store.get('items', 'b')).toEqual({ id: 'b', code: 'c-b', n: 6, meta: { t: 'x' } });
        expect(await fx.store.checkpoint(shape.name, 1)).toBe(3);
      } finally {
        await fx.dispose();
      }
    });

    it('replays a delete followed by a put that reuses a unique value, and rejects a genuine duplicate', async () => {
      const fx = await fixture();
      try {
        await fx.store.prepare(shape, 1);
        await fx.store.activate(shape, 1);
        const batch = [
          { position: 1, ops: [put('a', { code: 'X' })] },
          { position: 2, ops: [{ op: 'delete', collection: 'items', id: 'a' } as ReadOp] },
          { position: 3, ops: [put('b', { code: 'X' })] },
        ];
        await fx.store.applyBatch(shape.name, 1, batch, 0);
        await fx.store.applyBatch(shape.name, 1, batch, 3);
        expect(await fx.store.get('items', 'a')).toBeUndefined();
        expect(await fx.store.get('items', 'b')).toMatchObject({ code: 'X' });
        await expect(fx.store.applyBatch(shape.name, 1, [{ position: 4, ops: [put('c', { code: 'X' })] }], 4)).rejects.toMatchObject({
          writeErrors: [expect.objectContaining({ code: 11000 })],
        });
        expect(await fx.store.checkpoint(shape.name, 1)).toBe(3);
      } finally {
        await fx.dispose();
      }
    });

    it('patches overlapping paths in order and counts a non-number up from 0, as the SQLite adapter does', async () => {
      const fx = await fixture();
      try {
        await fx.store.prepare(shape, 1);
        await fx.store.activate(shape, 1);
        await fx.store.applyBatch(shape.name, 1, [{ position: 1, ops: [put('a', { meta: { t: 'x', u: 1 }, n: 'text' })] }], 1);
        const patch: ReadOp = { op: 'patch', collection: 'items', id: 'a', set: { meta: { t: 'y' }, 'meta.v': 2 }, unset: ['meta.t'], inc: { n: 2 } };
        await fx.store.applyBatch(shape.name, 1, [{ position: 2, ops: [patch] }], 2);
        expect(await fx.store.get('items', 'a')).toEqual({ id: 'a', code: 'c-a', meta: { v: 2 }, n: 2 });
      } finally {
        await fx.dispose();
      }
    });
  });
}
