import type { DeadLetter, ProjectionStateStore } from '../../projections/projection';

type MongoFilter = Record<string, unknown>;

/** The part of the driver's `Db` this class uses; declared here so that the read store can depend on this file, not the reverse. */
export interface MongoStateDb {
  collection(name: string): {
    findOne(filter: MongoFilter): Promise<MongoFilter | null>;
    find(filter: MongoFilter, options: { sort: Record<string, 1 | -1> }): { toArray(): Promise<MongoFilter[]> };
    updateOne(filter: MongoFilter, update: MongoFilter, options: { upsert: boolean }): Promise<unknown>;
    replaceOne(filter: MongoFilter, replacement: MongoFilter, options: { upsert: boolean }): Promise<unknown>;
    deleteOne(filter: MongoFilter): Promise<unknown>;
    deleteMany(filter: MongoFilter): Promise<unknown>;
  };
}

const STATE = 'projection_state';
const CHECKPOINTS = 'projection_checkpoints';
const DEAD_LETTERS = 'projection_dead_letters';

/**
 * Projection bookkeeping in MongoDB, with the semantics of `SqliteProjectionState`. `MongoReadStore` stores its
 * checkpoints through this class, after each batch's writes.
 */
export class MongoProjectionState implements ProjectionStateStore {
  constructor(private readonly db: MongoStateDb) {}

  async load(projection: string, generation: number): Promise<number> {
    const row = await this.db.collection(CHECKPOINTS).findOne({ _id: `${projection}:${generation}` });
    return typeof row?.position === 'number' ? row.position : 0;
  }

  async save(projection: string, generation: number, position: number): Promise<void> {
    // `$max`: a retried or late batch never moves a checkpoint back.
    await this.db
      .collection(CHECKPOINTS)
      .updateOne({ _id: `${projection}:${generation}` }, { $max: { position }, $setOnInsert: { projection, generation } }, { upsert: true });
  }

  async active(projection: string): Promise<{ generation: number; version: number } | undefined> {
    const row = await this.db.collection(STATE).findOne({ _id: projection });
    return typeof row?.generation === 'number' && typeof row.version === 'number' ? { generation: row.generation, version: row.version } : undefined;
  }

  async setActive(projection: string, generation: number, version: number): Promise<void> {
    await this.db.collection(STATE).updateOne({ _id: projection }, { $set: { generation, version } }, { upsert: true });
    // Not atomic with the switch: a crash in between leaves stale checkpoints, which the next switch removes.
    await this.db.collection(CHECKPOINTS).deleteMany({ projection, generation: { $ne: generation } });
  }

  async park(letter: DeadLetter): Promise<void> {
    await this.db.collection(DEAD_LETTERS).replaceOne({ _id: `${letter.projection}:${letter.position}` }, { ...letter }, { upsert: true });
  }

  async deadLetters(projection?: string): Promise<DeadLetter[]> {
    const filter: MongoFilter = projection ? { projection } : {};
    const rows = await this.db.collection(DEAD_LETTERS).find(filter, { sort: { projection: 1, position: 1 } }).toArray();
    return rows.map(({ _id, ...letter }) => letter as unknown as DeadLetter);
  }

  async unpark(projection: string, position: number): Promise<void> {
    await this.db.collection(DEAD_LETTERS).deleteOne({ _id: `${projection}:${position}` });
  }
}
