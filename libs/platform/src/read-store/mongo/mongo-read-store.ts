import { filterToMongo } from './mongo-filter';
import { assertNever } from '../../kernel/errors';
import type { ApplyOptions, PositionedOps, ProjectionShape, ProjectionSink } from '../../projections/projection';
import { Condition, cursorOfPageKey, encodePageKey, FindQuery, getPath, MetadataFilter, Page, ReadDoc, ReadOp, ReadStore } from '../read-store.port';
import { MongoProjectionState } from './mongo-projection-state';

export type MongoFilter = Record<string, unknown>;

/** The bulk write models the adapters send; a subset of the driver's `AnyBulkWriteOperation`. */
export type MongoWriteModel =
  | { replaceOne: { filter: MongoFilter; replacement: MongoFilter; upsert: boolean } }
  | { updateOne: { filter: MongoFilter; update: MongoFilter | MongoFilter[]; upsert?: boolean } }
  | { deleteOne: { filter: MongoFilter } }
  | { deleteMany: { filter: MongoFilter } };

/** The part of the driver's `Collection` the Mongo adapters use: a real `Collection` fits it, and so does a test fake. */
export interface MongoCollectionLike {
  findOne(filter: MongoFilter, options?: { projection?: MongoFilter }): Promise<MongoFilter | null>;
  find(filter: MongoFilter, options?: { sort?: Record<string, 1 | -1>; limit?: number }): { toArray(): Promise<MongoFilter[]> };
  countDocuments(filter: MongoFilter): Promise<number>;
  aggregate(pipeline: MongoFilter[]): { toArray(): Promise<MongoFilter[]> };
  bulkWrite(operations: MongoWriteModel[], options: { ordered: boolean }): Promise<unknown>;
  createIndex(keys: Record<string, 1>, options: { unique: boolean; partialFilterExpression?: MongoFilter }): Promise<string>;
  updateOne(filter: MongoFilter, update: MongoFilter, options?: { upsert?: boolean }): Promise<unknown>;
  replaceOne(filter: MongoFilter, replacement: MongoFilter, options?: { upsert?: boolean }): Promise<unknown>;
  deleteOne(filter: MongoFilter): Promise<unknown>;
  deleteMany(filter: MongoFilter): Promise<unknown>;
}

/** The part of the driver's `Db` the Mongo adapters use. */
export interface MongoDbLike {
  collection(name: string): MongoCollectionLike;
  command(command: MongoFilter): Promise<unknown>;
  listCollections(filter: MongoFilter, options: { nameOnly: true }): { toArray(): Promise<{ name: string }[]> };
  dropCollection(name: string): Promise<boolean>;
}

const REGISTRY = 'rm_collections';
const physicalName = (collection: string, generation: number): string => `rm_${collection}_g${generation}`;
const mongoPath = (field: string): string => (field === 'id' ? '_id' : field);
const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function and(...parts: MongoFilter[]): MongoFilter {
  const nonEmpty = parts.filter((p) => Object.keys(p).length > 0);
  return nonEmpty.length === 0 ? {} : nonEmpty.length === 1 ? nonEmpty[0] : { $and: nonEmpty };
}

/** Conditions with the SQLite adapter's SQL semantics, where a comparison with a missing or null field is never true. */
export function conditionFilter(conditions: readonly Condition[] | undefined): MongoFilter {
  return and(
    ...(conditions ?? []).map((c): MongoFilter => {
      const path = mongoPath(c.field);
      if (c.op === 'in') return { [path]: { $in: c.value } };
      if (c.value === null) return { [path]: c.op === 'ne' ? { $ne: null } : null };
      // Mongo's `$ne` alone also matches documents where the field is missing or null; SQL's `<>` does not.
      if (c.op === 'ne') return { [path]: { $nin: [c.value, null] } };
      return { [path]: c.op === 'eq' ? c.value : { [`$${c.op}`]: c.value } };
    }),
  );
}

/** Conditions AND-ed with a metadata filter (see `filterToMongo`). */
export function queryFilter(where: readonly Condition[] | undefined, metadata: MetadataFilter | undefined): MongoFilter {
  return and(conditionFilter(where), metadata ? filterToMongo(metadata.filter, { doc: metadata.docField }) : {});
}

/**
 * A document's version is the position of the event that last wrote it, then the op's index among that event's
 * ops: one event may put and then patch the same document, and the patch must not look like a replay.
 */
const versionBelow = (pos: number, seq: number): MongoFilter => ({ $or: [{ _pos: { $lt: pos } }, { _pos: pos, _seq: { $lt: seq } }, { _pos: { $exists: false } }] });
const versionAtLeast = (pos: number, seq: number): MongoFilter => ({ $or: [{ _pos: { $gt: pos } }, { _pos: pos, _seq: { $gte: seq } }] });

type Patch = Extract<ReadOp, { op: 'patch' }>;

/**
 * An update pipeline rather than `$set`/`$unset`/`$inc`: its stages run in turn like `applyPatch`, so overlapping
 * paths (`set a`, `unset a.b`) and `inc` on a non-number (counts from 0) behave as on SQLite instead of failing the batch.
 */
function patchPipeline(op: Pick<Patch, 'set' | 'unset' | 'inc' | 'create'>, pos: number, seq: number): MongoFilter[] {
  // An upserted document starts as `{_id}` alone: no `_pos` yet tells the creating write from a later one.
  const created = { $eq: [{ $type: '$_pos' }, 'missing'] };
  return [
    ...Object.entries(op.create ?? {}).map(([field, value]) => ({ $set: { [field]: { $cond: [created, { $literal: value }, `$${field}`] } } })),
    ...Object.entries(op.set ?? {}).map(([path, value]) => ({ $set: { [path]: { $literal: value } } })),
    ...(op.unset ?? []).map((path) => ({ $unset: path })),
    ...Object.entries(op.inc ?? {}).map(([path, by]) => ({
      $set: { [path]: { $add: [{ $cond: [{ $isNumber: `$${path}` }, `$${path}`, 0] }, by] } },
    })),
    { $set: { _pos: pos, _seq: seq } },
  ];
}

type StagedOp = { readonly op: ReadOp; readonly pos: number; readonly seq: number };

/** Every write is guarded by version, so replaying it after a crash, before the checkpoint was stored, changes nothing. */
function writeModel({ op, pos, seq }: StagedOp): MongoWriteModel {
  switch (op.op) {
    case 'put':
      return { replaceOne: { filter: { _id: op.doc.id, ...versionBelow(pos, seq) }, replacement: { _id: op.doc.id, ...op.doc, _pos: pos, _seq: seq }, upsert: true } };
    case 'patch':
      // With `create`, a document already at this version fails the upsert with E11000, as a guarded put does.
      return { updateOne: { filter: { _id: op.id, ...versionBelow(pos, seq) }, update: patchPipeline(op, pos, seq), ...(op.create ? { upsert: true } : {}) } };
    case 'delete':
      return { deleteOne: { filter: { _id: op.id, ...versionBelow(pos, seq) } } };
    case 'deleteWhere':
      // Unguarded, a replay would also delete documents that a later event moved into the condition.
      return { deleteMany: { filter: and(conditionFilter(op.where), versionBelow(pos, seq)) } };
    default:
      return assertNever(op);
  }
}

/** Index of the op that stopped an ordered bulk write, when a duplicate key stopped it. */
function duplicateKeyAt(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const errors: unknown = (err as { writeErrors?: unknown }).writeErrors;
  const first = (Array.isArray(errors) ? errors[0] : errors) as { code?: unknown; index?: unknown } | undefined;
  return first?.code === 11000 && typeof first.index === 'number' ? first.index : undefined;
}

const toDoc = <T extends ReadDoc>({ _id, _pos, _seq, ...doc }: MongoFilter): T => doc as T;

/**
 * Read models as documents in MongoDB, one collection per collection name and generation (`rm_<name>_g<n>`);
 * `rm_collections` names the generation queries read. Without transactions, a batch's writes are guarded by
 * version and its checkpoint is stored after them (engine-guarantees §2.2).
 */
export class MongoReadStore implements ReadStore, ProjectionSink<ReadOp> {
  constructor(
    private readonly db: MongoDbLike,
    private readonly state: MongoProjectionState = new MongoProjectionState(db),
  ) {}

  /** Read on every call: another process may activate a generation and drop the one a cache would still name. */
  private async active(collection: string): Promise<MongoCollectionLike | undefined> {
    const row = await this.db.collection(REGISTRY).findOne({ _id: collection });
    return typeof row?.generation === 'number' ? this.db.collection(physicalName(collection, row.generation)) : undefined;
  }

  async get<T extends ReadDoc>(collection: string, id: string): Promise<T | undefined> {
    const raw = await (await this.active(collection))?.findOne({ _id: id });
    return raw ? toDoc<T>(raw) : undefined;
  }

  async find<T extends ReadDoc>(collection: string, query: FindQuery): Promise<Page<T>> {
    // Translated first: a filter the store cannot run fails even where the collection is still empty.
    const where = queryFilter(query.where, query.metadata);
    const coll = await this.active(collection);
    if (!coll) return { items: [] };
    const sortField = query.sort?.field ?? 'id';
    const path = mongoPath(sortField);
    const dir = query.sort?.direction === 'desc' ? -1 : 1;
    const key = cursorOfPageKey(query.pageKey);
    const filter = and(where, key ? cursorFilter(path, dir, key) : {});
    const sort: Record<string, 1 | -1> = path === '_id' ? { _id: dir } : { [path]: dir, _id: dir };
    const rows = await coll.find(filter, { sort, limit: query.limit + 1 }).toArray();
    const items = rows.slice(0, query.limit).map((r) => toDoc<T>(r));
    const last = items[items.length - 1];
    return rows.length > query.limit && last
      ? { items, nextPageKey: encodePageKey(sortField === 'id' ? last.id : getPath(last, sortField), last.id) }
      : { items };
  }

  async count(collection: string, where?: readonly Condition[], metadata?: MetadataFilter): Promise<number> {
    const filter = queryFilter(where, metadata);
    const coll = await this.active(collection);
    return coll ? coll.countDocuments(filter) : 0;
  }

  async sum<F extends string>(collection: string, fields: readonly F[], where?: readonly Condition[]): Promise<Record<F, number>> {
    const coll = await this.active(collection);
    const zero = Object.fromEntries(fields.map((f) => [f, 0])) as Record<F, number>;
    if (!coll || fields.length === 0) return zero;
    // $sum ignores missing and non-numeric values, as the SQLite adapter does.
    const group: MongoFilter = { _id: null };
    fields.forEach((f, i) => (group[`s${i}`] = { $sum: `$${mongoPath(f)}` }));
    const [row] = await coll.aggregate([{ $match: queryFilter(where, undefined) }, { $group: group }]).toArray();
    return Object.fromEntries(fields.map((f, i) => [f, Number(row?.[`s${i}`] ?? 0)])) as Record<F, number>;
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async prepare(projection: ProjectionShape, generation: number): Promise<void> {
    for (const spec of projection.collections ?? []) {
      const coll = this.db.collection(physicalName(spec.name, generation));
      for (const index of spec.indexes ?? []) {
        const keys = Object.fromEntries(index.fields.map((f): [string, 1] => [mongoPath(f), 1]));
        // `_id` is always indexed and unique; Mongo refuses to be asked again with options.
        if (Object.keys(keys).join() === '_id') continue;
        // Mongo indexes a missing field as null, so two documents without it would collide; SQLite's NULLs never do.
        const present = Object.fromEntries(Object.keys(keys).map((k) => [k, { $exists: true }]));
        await coll.createIndex(keys, index.unique ? { unique: true, partialFilterExpression: present } : { unique: false });
      }
      // A collection read before its projection ever ran reads as empty, not as missing.
      await this.db.collection(REGISTRY).updateOne({ _id: spec.name }, { $setOnInsert: { generation } }, { upsert: true });
    }
  }

  async applyBatch(projection: string, generation: number, batch: readonly PositionedOps<ReadOp>[], checkpoint: number, options: ApplyOptions = {}): Promise<void> {
    // Events at or before the stored checkpoint were applied completely: skip them, as the SQLite adapter does.
    const applied = options.replay ? -1 : await this.state.load(projection, generation);
    const byCollection = new Map<string, StagedOp[]>();
    for (const { position, ops } of batch) {
      if (position <= applied) continue;
      ops.forEach((op, seq) => {
        const staged = byCollection.get(op.collection) ?? [];
        staged.push({ op, pos: position, seq });
        byCollection.set(op.collection, staged);
      });
    }
    // Documents of different collections never interact, so only the order within a collection matters.
    for (const [collection, staged] of byCollection) {
      await this.write(this.db.collection(physicalName(collection, generation)), staged, options.replay ?? false);
    }
    if (!options.replay) await this.state.save(projection, generation, checkpoint);
  }

  /**
   * Ordered, because one batch may put, patch and delete a document in turn. A guarded put whose document is
   * already newer fails with E11000 (the upsert tries to insert an existing `_id`), which stops an ordered write.
   * When that op proves to be applied already, resume after it; the retries cost a round trip each, and only
   * happen while replaying after a crash. `ordered: false` would lose the order, and per-op calls every round trip.
   */
  private async write(coll: MongoCollectionLike, staged: readonly StagedOp[], replay: boolean): Promise<void> {
    // A guarded op reads its guard row after the ops before it are written: runs of unguarded ops go in one bulk.
    let run: StagedOp[] = [];
    for (const s of staged) {
      if (s.op.onlyIf) {
        await this.writeRun(coll, run, replay);
        run = [];
        const { id, field, equals } = s.op.onlyIf;
        if (!(await coll.findOne({ _id: id, [field]: equals }, { projection: { _id: 1 } }))) continue;
      }
      run.push(s);
    }
    await this.writeRun(coll, run, replay);
  }

  private async writeRun(coll: MongoCollectionLike, staged: readonly StagedOp[], replay: boolean): Promise<void> {
    let from = 0;
    while (from < staged.length) {
      try {
        await coll.bulkWrite(staged.slice(from).map(writeModel), { ordered: true });
        return;
      } catch (err) {
        const at = duplicateKeyAt(err);
        if (at === undefined || !(await this.alreadyApplied(coll, staged[from + at], replay))) throw err;
        from += at + 1;
      }
    }
  }

  /**
   * True when the collection already went past this op: its document carries this version or a later one (the
   * guard failed), or, for a clash on another unique index, any document does. Writes reach a collection in order,
   * so only an earlier attempt that passed this op leaves a later version; a genuine violation is rethrown, as on
   * SQLite. A replayed dead letter sits behind later writes by design, so there only its document counts.
   */
  private async alreadyApplied(coll: MongoCollectionLike, staged: StagedOp | undefined, replay: boolean): Promise<boolean> {
    if (!staged) return false;
    const { op, pos, seq } = staged;
    const id = op.op === 'put' ? op.doc.id : op.op === 'patch' ? op.id : undefined;
    if (id !== undefined && (await coll.findOne({ _id: id, ...versionAtLeast(pos, seq) }, { projection: { _id: 1 } }))) return true;
    return !replay && (await coll.findOne(versionAtLeast(pos, seq), { projection: { _id: 1 } })) !== null;
  }

  async checkpoint(projection: string, generation: number): Promise<number> {
    return this.state.load(projection, generation);
  }

  async activate(projection: ProjectionShape, generation: number): Promise<void> {
    const existing = (await this.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    for (const spec of projection.collections ?? []) {
      // Switch first, so that queries never name a dropped collection in this process.
      await this.db.collection(REGISTRY).updateOne({ _id: spec.name }, { $set: { generation } }, { upsert: true });
      const keep = physicalName(spec.name, generation);
      const ours = new RegExp(`^rm_${escapeRegExp(spec.name)}_g\\d+$`);
      for (const name of existing) if (ours.test(name) && name !== keep) await this.db.dropCollection(name);
    }
  }
}

/**
 * Keyset continuation after `key`: `(f > v) OR (f = v AND _id > id)`. Missing and null sort first ascending and
 * last descending, and no value compares greater than null in Mongo, so a null key gets its own filter.
 */
function cursorFilter(path: string, dir: 1 | -1, key: { sortValue: unknown; id: string }): MongoFilter {
  const after = dir === 1 ? '$gt' : '$lt';
  if (path === '_id') return { _id: { [after]: key.id } };
  const tie = { [path]: key.sortValue ?? null, _id: { [after]: key.id } };
  if (key.sortValue === null || key.sortValue === undefined) return dir === 1 ? { $or: [{ [path]: { $ne: null } }, tie] } : tie;
  return { $or: [{ [path]: { [after]: key.sortValue } }, tie] };
}
