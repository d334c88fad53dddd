import { createHash } from 'node:crypto';
import type { ApplyOptions, PositionedOps, ProjectionShape, ProjectionSink } from '../../projections/projection';
import { Condition, cursorOfPageKey, encodePageKey, FindQuery, getPath, MetadataFilter, Page, ReadDoc, ReadOp, ReadStore } from '../read-store.port';
import { PostgresPendingWrites } from './postgres-pending-writes';
import { PostgresProjectionState } from './postgres-projection-state';
import { encodeText, fromJsonb } from './postgres-text';
import { column, conditionSql, cursorSql, orderSql, whereSql } from './postgres-read-sql';
import { DDL_LOCK, ensureReadSchema, indexName, inTransaction, type PgPool, reachable, tableName, unavailable, viewName } from './postgres-read-schema';

/** `undefined_table`: the view of a collection no projection has prepared yet. */
const UNDEFINED_TABLE = '42P01';

const isUndefinedTable = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === UNDEFINED_TABLE;

/**
 * Read models as JSONB rows in PostgreSQL: one table per collection and generation (`rm_<collection>_g<n>`: id, doc,
 * pos), the declared indexes as expression indexes on the document, and one view per collection (`rv_<collection>`)
 * naming the active generation's table, so that a query is one round trip and a rebuild swaps in one statement.
 * A batch's writes and its checkpoint commit in one transaction, as on SQLite (G6); the rows also carry the position
 * of the event that last wrote them, so a batch replayed under a lost checkpoint changes nothing.
 */
export class PostgresReadStore implements ReadStore, ProjectionSink<ReadOp> {
  constructor(
    private readonly pool: PgPool,
    private readonly state: PostgresProjectionState = new PostgresProjectionState(pool),
  ) {}

  /** Creates the bookkeeping tables if absent (also done by the first `prepare`). */
  async ensureSchema(): Promise<void> {
    await ensureReadSchema(this.pool);
  }

  /**
   * Rows of a collection no projection prepared yet read as none, as on SQLite. A `prepared` statement is parsed once
   * per connection (named by its text's hash): for the shapes code writes (get, conditions, sorts), a bounded set.
   * Never for metadata filters, whose shapes are the users' own and would pile up in every server process.
   */
  private async rows<R extends Record<string, unknown>>(sql: string, params: unknown[], prepared: boolean): Promise<R[] | undefined> {
    try {
      const name = prepared ? `rs_${createHash('sha1').update(sql).digest('base64url')}` : undefined;
      return (await this.pool.query<R>({ text: sql, values: params, ...(name ? { name } : {}) })).rows;
    } catch (err) {
      if (isUndefinedTable(err)) return undefined;
      throw unavailable(err);
    }
  }

  async get<T extends ReadDoc>(collection: string, id: string): Promise<T | undefined> {
    const rows = await this.rows<{ doc: string }>(`SELECT doc::text AS doc FROM ${viewName(collection)} WHERE id = $1`, [encodeText(id)], true);
    return rows?.[0] ? fromJsonb<T>(rows[0].doc) : undefined;
  }

  async find<T extends ReadDoc>(collection: string, query: FindQuery): Promise<Page<T>> {
    // Translated first: a filter the store cannot run fails even where the collection is still empty.
    const params: unknown[] = [];
    const where = whereSql(query.where, query.metadata, params);
    const sortField = query.sort?.field ?? 'id';
    const desc = query.sort?.direction === 'desc';
    const key = cursorOfPageKey(query.pageKey);
    const cursor = key ? ` AND ${cursorSql(sortField, desc, key, params)}` : '';
    params.push(query.limit + 1);
    const sql = `SELECT doc::text AS doc FROM ${viewName(collection)} WHERE ${where}${cursor} ORDER BY ${orderSql(sortField, desc)} LIMIT $${params.length}`;
    const rows = (await this.rows<{ doc: string }>(sql, params, !query.metadata)) ?? [];
    const items = rows.slice(0, query.limit).map((r) => fromJsonb<T>(r.doc));
    const last = items[items.length - 1];
    return rows.length > query.limit && last
      ? { items, nextPageKey: encodePageKey(sortField === 'id' ? last.id : getPath(last, sortField), last.id) }
      : { items };
  }

  async count(collection: string, where?: readonly Condition[], metadata?: MetadataFilter): Promise<number> {
    const params: unknown[] = [];
    const w = whereSql(where, metadata, params);
    const rows = await this.rows<{ n: string }>(`SELECT count(*) AS n FROM ${viewName(collection)} WHERE ${w}`, params, !metadata);
    return rows ? Number(rows[0].n) : 0;
  }

  async sum<F extends string>(collection: string, fields: readonly F[], where?: readonly Condition[]): Promise<Record<F, number>> {
    const zero = Object.fromEntries(fields.map((f) => [f, 0])) as Record<F, number>;
    if (fields.length === 0) return zero;
    const params: unknown[] = [];
    const w = conditionSql(where, params);
    const sums = fields.map((f, i) => {
      const col = column(f);
      return `COALESCE(SUM(CASE WHEN jsonb_typeof(${col}) = 'number' THEN (${col})::numeric END), 0) AS s${i}`;
    });
    const rows = await this.rows<Record<string, string>>(`SELECT ${sums.join(', ')} FROM ${viewName(collection)} WHERE ${w}`, params, true);
    if (!rows) return zero;
    return Object.fromEntries(fields.map((f, i) => [f, Number(rows[0][`s${i}`])])) as Record<F, number>;
  }

  async ping(): Promise<void> {
    await reachable(() => this.pool.query('SELECT 1'));
  }

  async prepare(projection: ProjectionShape, generation: number): Promise<void> {
    return reachable(async () => {
      await ensureReadSchema(this.pool);
      await inTransaction(this.pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [DDL_LOCK]);
        for (const spec of projection.collections ?? []) {
          const table = tableName(spec.name, generation);
          await client.query(`CREATE TABLE IF NOT EXISTS ${table} (id text COLLATE "C" PRIMARY KEY, doc jsonb NOT NULL, pos bigint NOT NULL)`);
          for (const [i, ix] of (spec.indexes ?? []).entries()) {
            // NULLS FIRST: the order of `find` ascending (SQLite's), and read backwards, of `find` descending.
            const cols = ix.fields.map((f) => `(${column(f)}) NULLS FIRST`).join(', ');
            await client.query(`CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${indexName(spec.name, generation, i)} ON ${table} (${cols})`);
          }
          await client.query('INSERT INTO rm_tables (collection, generation) VALUES ($1, $2) ON CONFLICT DO NOTHING', [spec.name, generation]);
          // A collection read before its projection ever ran reads as empty, not as missing.
          await client.query('INSERT INTO rm_collections (name, generation) VALUES ($1, $2) ON CONFLICT DO NOTHING', [spec.name, generation]);
          const { rows } = await client.query<{ generation: number }>('SELECT generation FROM rm_collections WHERE name = $1', [spec.name]);
          if (rows[0].generation === generation) await client.query(`CREATE OR REPLACE VIEW ${viewName(spec.name)} AS SELECT id, doc, pos FROM ${table}`);
        }
      });
    });
  }

  async applyBatch(projection: string, generation: number, batch: readonly PositionedOps<ReadOp>[], checkpoint: number, options: ApplyOptions = {}): Promise<void> {
    return reachable(async () => {
      await ensureReadSchema(this.pool);
      if (!batch.some((b) => b.ops.length > 0)) {
        // Only the checkpoint moves (events this projection does not handle): no lock, no read, GREATEST keeps it monotonic.
        if (!options.replay) await inTransaction(this.pool, (client) => this.state.saveIn(client, projection, generation, checkpoint), 'derived');
        return;
      }
      await inTransaction(this.pool, async (client) => {
        // Two processes applying the same projection take turns on its checkpoint row, so the second sees the first's
        // checkpoint; a replay of events at or before it (a retried batch) applies nothing twice.
        const stored = await this.state.lockIn(client, projection, generation);
        const applied = options.replay ? -1 : stored;
        const staged = batch.filter((b) => b.position > applied).flatMap(({ position, ops }) => ops.map((op) => ({ op, position })));
        await new PostgresPendingWrites(client, generation).run(staged, !options.replay);
        if (!options.replay) await this.state.saveIn(client, projection, generation, checkpoint);
      }, 'derived');
    });
  }

  async checkpoint(projection: string, generation: number): Promise<number> {
    return reachable(() => this.state.load(projection, generation));
  }

  async activate(projection: ProjectionShape, generation: number): Promise<void> {
    return reachable(async () => {
      await ensureReadSchema(this.pool);
      await inTransaction(this.pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [DDL_LOCK]);
        for (const spec of projection.collections ?? []) {
          await client.query(
            'INSERT INTO rm_collections (name, generation) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET generation = excluded.generation',
            [spec.name, generation],
          );
          // The view first: the old generation's table can only be dropped once nothing names it.
          await client.query(`CREATE OR REPLACE VIEW ${viewName(spec.name)} AS SELECT id, doc, pos FROM ${tableName(spec.name, generation)}`);
          const { rows } = await client.query<{ generation: number }>('DELETE FROM rm_tables WHERE collection = $1 AND generation <> $2 RETURNING generation', [
            spec.name,
            generation,
          ]);
          for (const old of rows) await client.query(`DROP TABLE IF EXISTS ${tableName(spec.name, old.generation)}`);
        }
      });
    });
  }
}
