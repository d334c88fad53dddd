import { BulkWriteResult, MongoBulkWriteError, type WriteError } from 'mongodb';
import { filterToMongo } from './mongo-filter';
import { parseFilter } from '../../filter/parse-filter';
import type { PositionedOps } from '../../projections/projection';
import { encodePageKey, ReadOp } from '../read-store.port';
import { MongoProjectionState } from './mongo-projection-state';
import { conditionFilter, MongoCollectionLike, MongoDbLike, MongoFilter, MongoReadStore, MongoWriteModel } from './mongo-read-store';

type Call = { coll: string; method: string; args: unknown[] };

/** Records every call at the driver boundary; answers reads from `rows` or from a test's own `answer`. */
class FakeCollection implements MongoCollectionLike {
  readonly rows: MongoFilter[] = [];
  readonly bulkErrors: unknown[] = [];
  answer = (filter: MongoFilter): MongoFilter | null => this.rows.find((r) => r._id === filter._id) ?? null;
  constructor(private readonly name: string, private readonly log: Call[]) {}
  private record(method: string, ...args: unknown[]): void {
    this.log.push({ coll: this.name, method, args });
  }
  async findOne(filter: MongoFilter, options?: MongoFilter) {
    this.record('findOne', filter, options);
    return this.answer(filter);
  }
  find(filter: MongoFilter, options?: { sort?: Record<string, 1 | -1>; limit?: number }) {
    this.record('find', filter, options);
    return { toArray: async () => this.rows.slice(0, options?.limit) };
  }
  aggregate(pipeline: MongoFilter[]) {
    this.record('aggregate', pipeline);
    return { toArray: async () => [] };
  }
  async countDocuments(filter: MongoFilter) {
    this.record('countDocuments', filter);
    return this.rows.length;
  }
  async bulkWrite(models: MongoWriteModel[], options: { ordered: boolean }) {
    this.record('bulkWrite', models, options);
    const error = this.bulkErrors.shift();
    if (error) throw error;
  }
  async createIndex(keys: Record<string, 1>, options: MongoFilter) {
    this.record('createIndex', keys, options);
    return 'ix';
  }
  async updateOne(filter: MongoFilter, update: MongoFilter, options: { upsert?: boolean } = {}) {
    this.record('updateOne', filter, update, options);
    let row = this.rows.find((r) => r._id === filter._id);
    if (!row && !options.upsert) return;
    if (!row) this.rows.push((row = { _id: filter._id, ...(update.$setOnInsert as MongoFilter) }));
    Object.assign(row, update.$set);
    for (const [k, v] of Object.entries((update.$max ?? {}) as Record<string, number>)) row[k] = Math.max(Number(row[k] ?? -Infinity), v);
  }
  replaceOne = async (...args: unknown[]) => this.record('replaceOne', ...args);
  deleteOne = async (filter: MongoFilter) => this.record('deleteOne', filter);
  deleteMany = async (filter: MongoFilter) => this.record('deleteMany', filter);
}

class FakeDb implements MongoDbLike {
  readonly log: Call[] = [];
  readonly existing: string[] = [];
  private readonly collections = new Map<string, FakeCollection>();
  collection(name: string): FakeCollection {
    if (!this.collections.has(name)) this.collections.set(name, new FakeCollection(name, this.log));
    return this.collections.get(name)!;
  }
  command = async (command: MongoFilter) => this.log.push({ coll: '', method: 'command', args: [command] });
  listCollections = () => ({ toArray: async () => this.existing.map((name) => ({ name })) });
  async dropCollection(name: string) {
    this.log.push({ coll: name, method: 'dropCollection', args: [] });
    return true;
  }
  calls(method: string, coll?: string): unknown[][] {
    return this.log.filter((c) => c.method === method && (coll === undefined || c.coll === coll)).map((c) => c.args);
  }
}

const setup = (db = new FakeDb()) => ({ db, store: new MongoReadStore(db) });
const guard = (pos: number, seq: number) => ({ $or: [{ _pos: { $lt: pos } }, { _pos: pos, _seq: { $lt: seq } }, { _pos: { $exists: false } }] });
const atLeast = (pos: number, seq: number) => ({ $or: [{ _pos: { $gt: pos } }, { _pos: pos, _seq: { $gte: seq } }] });
const put = (id: string, extra: Record<string, unknown> = {}): ReadOp => ({ op: 'put', collection: 'items', doc: { id, ...extra } });
/** The driver's own error class; its `WriteError`s are not exported at runtime, so a look-alike with the same fields. */
const bulkError = (code: number, index: number) => {
  const writeError = { code, index, errmsg: `E${code} duplicate key error` } as unknown as WriteError;
  return new MongoBulkWriteError({ message: writeError.errmsg ?? '', code, writeErrors: [writeError] }, {} as BulkWriteResult);
};
const batch = (position: number, ...ops: ReadOp[]): PositionedOps<ReadOp> => ({ position, ops });

describe('MongoReadStore at the driver boundary', () => {
  it('sends one ordered bulk write per collection, every write guarded by the version (position, op index)', async () => {
    const { db, store } = setup();
    const ops: ReadOp[] = [
      put('a', { group: 'g1' }),
      { op: 'patch', collection: 'items', id: 'a', set: { 'meta.title': 'T' }, unset: ['tag'], inc: { n: 2 } },
      { op: 'delete', collection: 'items', id: 'b' },
      { op: 'deleteWhere', collection: 'items', where: [{ field: 'group', op: 'eq', value: 'g1' }] },
    ];
    await store.applyBatch('p', 3, [batch(7, ...ops), batch(8, { op: 'delete', collection: 'tags', id: 't' })], 8);
    expect(db.calls('bulkWrite', 'rm_items_g3')).toEqual([
      [
        [
          { replaceOne: { filter: { _id: 'a', ...guard(7, 0) }, replacement: { _id: 'a', id: 'a', group: 'g1', _pos: 7, _seq: 0 }, upsert: true } },
          {
            updateOne: {
              filter: { _id: 'a', ...guard(7, 1) },
              update: [
                { $set: { 'meta.title': { $literal: 'T' } } },
                { $unset: 'tag' },
                { $set: { n: { $add: [{ $cond: [{ $isNumber: '$n' }, '$n', 0] }, 2] } } },
                { $set: { _pos: 7, _seq: 1 } },
              ],
            },
          },
          { deleteOne: { filter: { _id: 'b', ...guard(7, 2) } } },
          { deleteMany: { filter: { $and: [{ group: 'g1' }, guard(7, 3)] } } },
        ],
        { ordered: true },
      ],
    ]);
    expect(db.calls('bulkWrite', 'rm_tags_g3')).toEqual([[[{ deleteOne: { filter: { _id: 't', ...guard(8, 0) } } }], { ordered: true }]]);
  });

  it('writes what precedes a guarded op, then reads its guard row, and drops the op when the guard does not hold', async () => {
    const { db, store } = setup();
    const fence = { id: 'fence', field: 'incarnation', equals: 'crp_1~1' };
    db.collection('rm_items_g1').answer = (f) => (f.incarnation === 'crp_1~1' ? { _id: 'fence' } : null);
    await store.applyBatch('p', 1, [batch(1, put('fence', { incarnation: 'crp_1~1' }), { ...put('new'), onlyIf: fence }, { ...put('stale'), onlyIf: { ...fence, equals: 'crp_1' } })], 1);
    const writes = db.log.filter((c) => c.coll === 'rm_items_g1').map((c) => (c.method === 'bulkWrite' ? (c.args[0] as MongoWriteModel[]).map((m) => ('replaceOne' in m ? m.replaceOne.filter._id : '?')) : c.method));
    expect(writes).toEqual([['fence'], 'findOne', ['new'], 'findOne']);
    expect(db.calls('findOne', 'rm_items_g1')[0]).toEqual([{ _id: 'fence', incarnation: 'crp_1~1' }, { projection: { _id: 1 } }]);
  });

  it('skips events at or before the stored checkpoint and stores the new one with $max after the writes', async () => {
    const { db, store } = setup();
    db.collection('projection_checkpoints').rows.push({ _id: 'p:1', position: 7 });
    await store.applyBatch('p', 1, [batch(6, put('old')), batch(7, put('done')), batch(9, put('new'))], 9);
    const [[models]] = db.calls('bulkWrite') as [MongoWriteModel[]][];
    expect(models.map((m) => ('replaceOne' in m ? m.replaceOne.filter._id : undefined))).toEqual(['new']);
    const save = db.log.findIndex((c) => c.method === 'updateOne' && c.coll === 'projection_checkpoints');
    expect(save).toBeGreaterThan(db.log.findIndex((c) => c.method === 'bulkWrite'));
    expect(db.log[save].args).toEqual([{ _id: 'p:1' }, { $max: { position: 9 }, $setOnInsert: { projection: 'p', generation: 1 } }, { upsert: true }]);
    expect(await store.checkpoint('p', 1)).toBe(9);
    expect(await store.checkpoint('p', 2)).toBe(0);
  });

  it('upserts a patch with `create`, its fields set only on the document it creates; E11000 (already newer) is applied', async () => {
    const { db, store } = setup();
    const items = db.collection('rm_items_g1');
    const counter: ReadOp = { op: 'patch', collection: 'items', id: 'm', create: { family: 'query', minute: 60 }, inc: { 'v.count': 1 } };
    await store.applyBatch('p', 1, [batch(4, counter)], 4);
    const created = { $eq: [{ $type: '$_pos' }, 'missing'] };
    expect(db.calls('bulkWrite', 'rm_items_g1')[0][0]).toEqual([
      {
        updateOne: {
          filter: { _id: 'm', ...guard(4, 0) },
          update: [
            { $set: { family: { $cond: [created, { $literal: 'query' }, '$family'] } } },
            { $set: { minute: { $cond: [created, { $literal: 60 }, '$minute'] } } },
            { $set: { 'v.count': { $add: [{ $cond: [{ $isNumber: '$v.count' }, '$v.count', 0] }, 1] } } },
            { $set: { _pos: 4, _seq: 0 } },
          ],
          upsert: true,
        },
      },
    ]);
    // Replayed after a lost checkpoint: the guard fails, the upsert meets the existing _id, and the row is already past it.
    items.bulkErrors.push(bulkError(11000, 0));
    items.answer = (f) => (f._id === 'm' ? { _id: 'm' } : null);
    await store.applyBatch('p_lost_checkpoint', 1, [batch(4, counter)], 4);
    expect(await store.checkpoint('p_lost_checkpoint', 1)).toBe(4);
  });

  it('treats E11000 on a put whose document is already newer as applied, and resumes after it', async () => {
    const { db, store } = setup();
    const items = db.collection('rm_items_g1');
    items.bulkErrors.push(bulkError(11000, 1));
    items.answer = (f) => (f._id === 'b' ? { _id: 'b' } : null);
    await store.applyBatch('p', 1, [batch(5, put('a'), put('b'), { op: 'delete', collection: 'items', id: 'c' })], 5);
    expect(db.calls('findOne', 'rm_items_g1')).toEqual([[{ _id: 'b', ...atLeast(5, 1) }, { projection: { _id: 1 } }]]);
    const writes = db.calls('bulkWrite') as [MongoWriteModel[]][];
    expect(writes.map(([models]) => models.length)).toEqual([3, 1]);
    expect(writes[1][0]).toEqual([{ deleteOne: { filter: { _id: 'c', ...guard(5, 2) } } }]);
    expect(await store.checkpoint('p', 1)).toBe(5);
  });

  it('treats E11000 on another unique index as applied only when the collection already holds a later version', async () => {
    for (const later of [true, false]) {
      const { db, store } = setup();
      const items = db.collection('rm_items_g1');
      const error = bulkError(11000, 0);
      items.bulkErrors.push(error);
      items.answer = (f) => (later && f._id === undefined ? { _id: 'other' } : null);
      const apply = store.applyBatch('p', 1, [batch(5, put('a', { code: 'X' }))], 5);
      if (later) await expect(apply).resolves.toBeUndefined();
      else await expect(apply).rejects.toBe(error);
      expect(db.calls('findOne', 'rm_items_g1')[1]).toEqual([atLeast(5, 0), { projection: { _id: 1 } }]);
      expect(await store.checkpoint('p', 1)).toBe(later ? 5 : 0);
    }
  });

  it('rethrows any other write error without looking further or storing the checkpoint', async () => {
    const { db, store } = setup();
    const error = bulkError(121, 0);
    db.collection('rm_items_g1').bulkErrors.push(error);
    await expect(store.applyBatch('p', 1, [batch(5, put('a'))], 5)).rejects.toBe(error);
    expect(db.calls('findOne', 'rm_items_g1')).toEqual([]);
    expect(db.calls('updateOne', 'projection_checkpoints')).toEqual([]);
  });

  it('replays a dead letter behind the checkpoint, trusting only its own document, and leaves the checkpoint', async () => {
    const { db, store } = setup();
    db.collection('projection_checkpoints').rows.push({ _id: 'p:1', position: 10 });
    const items = db.collection('rm_items_g1');
    const error = bulkError(11000, 0);
    items.bulkErrors.push(error);
    items.answer = (f) => (f._id === undefined ? { _id: 'later' } : null);
    await expect(store.applyBatch('p', 1, [batch(4, put('a', { code: 'X' }))], 10, { replay: true })).rejects.toBe(error);
    expect(db.calls('findOne', 'rm_items_g1')).toHaveLength(1);
    expect(db.calls('updateOne', 'projection_checkpoints')).toEqual([]);
  });

  it('translates conditions with SQL semantics: ne and ranges never match a missing or null field', () => {
    expect(conditionFilter([{ field: 'group', op: 'eq', value: 'g1' }])).toEqual({ group: 'g1' });
    expect(conditionFilter([{ field: 'group', op: 'ne', value: 'g1' }])).toEqual({ group: { $nin: ['g1', null] } });
    expect(conditionFilter([{ field: 'flag', op: 'ne', value: false }])).toEqual({ flag: { $nin: [false, null] } });
    expect(conditionFilter([{ field: 'flag', op: 'eq', value: true }])).toEqual({ flag: true });
    expect(conditionFilter([{ field: 'flag', op: 'eq', value: null }])).toEqual({ flag: null });
    expect(conditionFilter([{ field: 'flag', op: 'ne', value: null }])).toEqual({ flag: { $ne: null } });
    expect(conditionFilter([{ field: 'a.b', op: 'in', value: ['x', 'y'] }])).toEqual({ 'a.b': { $in: ['x', 'y'] } });
    expect(conditionFilter([{ field: 'id', op: 'gte', value: 'k' }])).toEqual({ _id: { $gte: 'k' } });
    expect(conditionFilter([{ field: 'rank', op: 'gt', value: 1 }, { field: 'rank', op: 'lte', value: 5 }])).toEqual({
      $and: [{ rank: { $gt: 1 } }, { rank: { $lte: 5 } }],
    });
    expect(conditionFilter(undefined)).toEqual({});
  });

  it('sorts on one field with an _id tiebreak, reads one extra row to detect more, and pages by keyset', async () => {
    const { db, store } = setup();
    db.collection('rm_collections').rows.push({ _id: 'items', generation: 2 });
    db.collection('rm_items_g2').rows.push(...['a', 'b', 'c'].map((id) => ({ _id: id, id, rank: 5, _pos: 1, _seq: 0 })));
    const where = [{ field: 'group', op: 'eq' as const, value: 'g' }];
    const page = await store.find('items', { where, sort: { field: 'rank', direction: 'desc' }, limit: 2 });
    expect(page).toEqual({ items: [{ id: 'a', rank: 5 }, { id: 'b', rank: 5 }], nextPageKey: encodePageKey(5, 'b') });
    await store.find('items', { where, sort: { field: 'rank', direction: 'desc' }, limit: 2, pageKey: page.nextPageKey });
    await store.find('items', { sort: { field: 'rank', direction: 'asc' }, limit: 2, pageKey: encodePageKey(null, 'b') });
    await store.find('items', { limit: 2, pageKey: encodePageKey('b', 'b') });
    const finds = db.calls('find', 'rm_items_g2') as [MongoFilter, { sort: Record<string, number>; limit: number }][];
    expect(finds.map(([filter]) => filter)).toEqual([
      { group: 'g' },
      { $and: [{ group: 'g' }, { $or: [{ rank: { $lt: 5 } }, { rank: 5, _id: { $lt: 'b' } }] }] },
      { $or: [{ rank: { $ne: null } }, { rank: null, _id: { $gt: 'b' } }] },
      { _id: { $gt: 'b' } },
    ]);
    expect(finds.map(([, o]) => [Object.entries(o.sort), o.limit])).toEqual([
      [[['rank', -1], ['_id', -1]], 3],
      [[['rank', -1], ['_id', -1]], 3],
      [[['rank', 1], ['_id', 1]], 3],
      [[['_id', 1]], 3],
    ]);
    expect(await store.find('unprepared', { limit: 2 })).toEqual({ items: [] });
    expect(await store.count('unprepared')).toBe(0);
  });

  it('sends a metadata filter as filterToMongo over the doc field, AND-ed with conditions and the cursor, to find and count', async () => {
    const { db, store } = setup();
    db.collection('rm_collections').rows.push({ _id: 'items', generation: 1 });
    const filter = parseFilter(`doc."a.b" >= 2020 AND NOT doc.kind LIKE 'x%'`);
    const metadata = { filter, docField: 'meta.data' };
    const translated = filterToMongo(filter, { doc: 'meta.data' });
    const where = [{ field: 'group', op: 'eq' as const, value: 'g' }];
    await store.find('items', { where, metadata, sort: { field: 'rank', direction: 'asc' }, limit: 2, pageKey: encodePageKey(3, 'b') });
    await store.find('items', { metadata, limit: 2 });
    await store.count('items', where, metadata);
    expect(db.calls('find', 'rm_items_g1').map(([f]) => f)).toEqual([
      { $and: [{ $and: [{ group: 'g' }, translated] }, { $or: [{ rank: { $gt: 3 } }, { rank: 3, _id: { $gt: 'b' } }] }] },
      translated,
    ]);
    expect(db.calls('countDocuments', 'rm_items_g1')).toEqual([[{ $and: [{ group: 'g' }, translated] }]]);
    expect(JSON.stringify(translated)).toContain('"$meta.data"');
  });

  it('rejects a metadata filter on part fields before calling the driver', async () => {
    const { db, store } = setup();
    const metadata = { filter: parseFilter(`part.lang = 'eng'`), docField: 'metadata' };
    await expect(store.find('items', { metadata, limit: 2 })).rejects.toMatchObject({ code: 'filter.level_unsupported' });
    await expect(store.count('items', undefined, metadata)).rejects.toMatchObject({ code: 'filter.level_unsupported' });
    expect(db.log).toEqual([]);
  });

  it('activate switches the registry first, then drops every other generation of the collection', async () => {
    const { db, store } = setup();
    db.collection('rm_collections').rows.push({ _id: 'items', generation: 1 });
    db.existing.push('rm_items_g1', 'rm_items_g2', 'rm_items_g3', 'rm_items_x_g1', 'rm_itemsx_g1', 'projection_state');
    await store.activate({ name: 'p', version: 1, collections: [{ name: 'items' }] }, 2);
    expect(db.log.filter((c) => c.method === 'dropCollection').map((c) => c.coll)).toEqual(['rm_items_g1', 'rm_items_g3']);
    const switched = db.log.findIndex((c) => c.method === 'updateOne' && c.coll === 'rm_collections');
    expect(db.log[switched].args).toEqual([{ _id: 'items' }, { $set: { generation: 2 } }, { upsert: true }]);
    expect(switched).toBeLessThan(db.log.findIndex((c) => c.method === 'dropCollection'));
    await store.get('items', 'a');
    expect(db.calls('findOne', 'rm_items_g2')).toEqual([[{ _id: 'a' }, undefined]]);
  });

  it('prepare creates the declared indexes and registers a collection that never ran, without moving an active one', async () => {
    const { db, store } = setup();
    db.collection('rm_collections').rows.push({ _id: 'items', generation: 1 });
    const indexes = [{ fields: ['group', 'rank'] }, { fields: ['code'], unique: true }, { fields: ['id'], unique: true }];
    await store.prepare({ name: 'p', version: 1, collections: [{ name: 'items', indexes }, { name: 'tags' }] }, 2);
    expect(db.calls('createIndex', 'rm_items_g2')).toEqual([
      [{ group: 1, rank: 1 }, { unique: false }],
      [{ code: 1 }, { unique: true, partialFilterExpression: { code: { $exists: true } } }],
    ]);
    expect(db.calls('updateOne', 'rm_collections')[0]).toEqual([{ _id: 'items' }, { $setOnInsert: { generation: 2 } }, { upsert: true }]);
    expect(db.collection('rm_collections').rows).toEqual([{ _id: 'items', generation: 1 }, { _id: 'tags', generation: 2 }]);
    await store.ping();
    expect(db.calls('command')).toEqual([[{ ping: 1 }]]);
  });
});

describe('MongoProjectionState', () => {
  it('switching the active generation drops the other generations’ checkpoints; dead letters read back without _id', async () => {
    const { db } = setup();
    const state = new MongoProjectionState(db);
    await state.setActive('p', 2, 3);
    expect(await state.active('p')).toEqual({ generation: 2, version: 3 });
    expect(db.calls('deleteMany', 'projection_checkpoints')).toEqual([[{ projection: 'p', generation: { $ne: 2 } }]]);
    const letter = { projection: 'p', position: 4, eventId: 'e', eventType: 't', streamId: 's', error: 'x', attempts: 1, parkedAt: 'now' };
    await state.park(letter);
    expect(db.calls('replaceOne', 'projection_dead_letters')).toEqual([[{ _id: 'p:4' }, letter, { upsert: true }]]);
    db.collection('projection_dead_letters').rows.push({ _id: 'p:4', ...letter });
    expect(await state.deadLetters('p')).toEqual([letter]);
    expect(db.calls('find', 'projection_dead_letters')).toEqual([[{ projection: 'p' }, { sort: { projection: 1, position: 1 } }]]);
    await state.unpark('p', 4);
    expect(db.calls('deleteOne', 'projection_dead_letters')).toEqual([[{ _id: 'p:4' }]]);
  });
});
