import type { DeadLetter, ProjectionStateStore } from '../../projections/projection';
import { ensureReadSchema, inTransaction, type PgPool, reachable } from './postgres-read-schema';
import { fromJsonb, toJsonb } from './postgres-text';

/** A query runner: the pool, or the one connection of a transaction. */
export type PgQueryable = Pick<PgPool, 'query'>;

/**
 * Projection bookkeeping in PostgreSQL, with the semantics of `SqliteProjectionState`; a lost connection is
 * `unavailable` (read_store.unavailable). `PostgresReadStore` writes its
 * checkpoints through `saveIn`/`loadIn`, inside the transaction of each batch's writes.
 */
export class PostgresProjectionState implements ProjectionStateStore {
  constructor(private readonly pool: PgPool) {}

  async loadIn(q: PgQueryable, projection: string, generation: number): Promise<number> {
    const { rows } = await q.query<{ position: string }>('SELECT position FROM projection_checkpoints WHERE name = $1 AND generation = $2', [projection, generation]);
    return rows.length ? Number(rows[0].position) : 0;
  }

  /**
   * The checkpoint, with its row locked until the caller's transaction ends: a second process applying the same
   * projection waits here, then reads the first one's checkpoint (an upsert that conflicts works on the latest
   * committed row, also under READ COMMITTED). One round trip for the lock and the read.
   */
  async lockIn(q: PgQueryable, projection: string, generation: number): Promise<number> {
    const { rows } = await q.query<{ position: string }>(
      `INSERT INTO projection_checkpoints (name, generation, position) VALUES ($1, $2, 0)
       ON CONFLICT (name, generation) DO UPDATE SET position = projection_checkpoints.position RETURNING position`,
      [projection, generation],
    );
    return Number(rows[0].position);
  }

  /** GREATEST: a retried or late batch never moves a checkpoint back. */
  async saveIn(q: PgQueryable, projection: string, generation: number, position: number): Promise<void> {
    await q.query(
      `INSERT INTO projection_checkpoints (name, generation, position) VALUES ($1, $2, $3)
       ON CONFLICT (name, generation) DO UPDATE SET position = GREATEST(projection_checkpoints.position, excluded.position)`,
      [projection, generation, position],
    );
  }

  async load(projection: string, generation: number): Promise<number> {
    return reachable(async () => {
      await ensureReadSchema(this.pool);
      return this.loadIn(this.pool, projection, generation);
    });
  }

  async save(projection: string, generation: number, position: number): Promise<void> {
    return reachable(async () => {
      await ensureReadSchema(this.pool);
      await this.saveIn(this.pool, projection, generation, position);
    });
  }

  async active(projection: string): Promise<{ generation: number; version: number } | undefined> {
    return reachable(async () => {
      await ensureReadSchema(this.pool);
      const { rows } = await this.pool.query<{ generation: number; version: number }>('SELECT generation, version FROM projection_state WHERE name = $1', [projection]);
      return rows[0] ? { generation: rows[0].generation, version: rows[0].version } : undefined;
    });
  }

  async setActive(projection: string, generation: number, version: number): Promise<void> {
    return reachable(async () => {
      await ensureReadSchema(this.pool);
      await inTransaction(this.pool, async (client) => {
        await client.query(
          `INSERT INTO projection_state (name, generation, version) VALUES ($1, $2, $3)
           ON CONFLICT (name) DO UPDATE SET generation = excluded.generation, version = excluded.version`,
          [projection, generation, version],
        );
        await client.query('DELETE FROM projection_checkpoints WHERE name = $1 AND generation <> $2', [projection, generation]);
      });
    });
  }

  async park(letter: DeadLetter): Promise<void> {
    return reachable(async () => {
      await ensureReadSchema(this.pool);
      await this.pool.query(
        `INSERT INTO projection_dead_letters (projection, position, letter) VALUES ($1, $2, $3)
         ON CONFLICT (projection, position) DO UPDATE SET letter = excluded.letter`,
        [letter.projection, letter.position, toJsonb(letter)],
      );
    });
  }

  async deadLetters(projection?: string): Promise<DeadLetter[]> {
    return reachable(async () => {
      await ensureReadSchema(this.pool);
      const { rows } = projection
        ? await this.pool.query<{ letter: string }>('SELECT letter::text AS letter FROM projection_dead_letters WHERE projection = $1 ORDER BY position', [projection])
        : await this.pool.query<{ letter: string }>('SELECT letter::text AS letter FROM projection_dead_letters ORDER BY projection, position');
      return rows.map((r) => fromJsonb<DeadLetter>(r.letter));
    });
  }

  async unpark(projection: string, position: number): Promise<void> {
    return reachable(async () => {
      await ensureReadSchema(this.pool);
      await this.pool.query('DELETE FROM projection_dead_letters WHERE projection = $1 AND position = $2', [projection, position]);
    });
  }
}
