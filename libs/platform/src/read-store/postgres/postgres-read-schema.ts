import { createHash } from 'node:crypto';
import { escapeIdentifier, type Pool, type PoolClient } from 'pg';
import { isConnectionError } from '../../kernel/store-errors';
import { DomainError } from '../../kernel/errors';

/** The part of `pg.Pool` the read store uses: a real `Pool` fits it. */
export type PgPool = Pick<Pool, 'query' | 'connect'>;

/**
 * The read store's bookkeeping tables. `rm_tables` lists every table a generation of a collection has, so that
 * activating one drops all the others (abandoned rebuilds included) without guessing names from the catalog.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS rm_collections (name text COLLATE "C" PRIMARY KEY, generation integer NOT NULL);
CREATE TABLE IF NOT EXISTS rm_tables (collection text COLLATE "C" NOT NULL, generation integer NOT NULL, PRIMARY KEY (collection, generation));
CREATE TABLE IF NOT EXISTS projection_state (name text COLLATE "C" PRIMARY KEY, generation integer NOT NULL, version integer NOT NULL);
CREATE TABLE IF NOT EXISTS projection_checkpoints (
  name text COLLATE "C" NOT NULL, generation integer NOT NULL, position bigint NOT NULL, PRIMARY KEY (name, generation)
);
CREATE TABLE IF NOT EXISTS projection_dead_letters (
  projection text COLLATE "C" NOT NULL, position bigint NOT NULL, letter jsonb NOT NULL, PRIMARY KEY (projection, position)
);
`;

/** Serialises DDL of every process on the database: concurrent `CREATE ... IF NOT EXISTS` can still collide. */
export const DDL_LOCK = 4_707_001;

const created = new WeakMap<object, Promise<void>>();

/** Creates the tables if absent, once per pool. */
export function ensureReadSchema(pool: PgPool): Promise<void> {
  let done = created.get(pool);
  if (!done) {
    done = inTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [DDL_LOCK]);
      await client.query(SCHEMA);
    });
    done.catch(() => created.delete(pool));
    created.set(pool, done);
  }
  return done;
}

/**
 * Runs `work` in a transaction on one connection of the pool; rolls back when it throws. A `derived` transaction
 * (a projection's writes with its checkpoint) commits without waiting for its WAL flush, as SQLite's projection
 * transactions commit with synchronous=NORMAL: a crash may lose the last few, atomically with their checkpoint, and
 * the projection applies those events again from the log.
 */
export async function inTransaction<T>(pool: PgPool, work: (client: PoolClient) => Promise<T>, kind: 'durable' | 'derived' = 'durable'): Promise<T> {
  const client = await pool.connect();
  // A connection whose rollback failed (the server went away mid-transaction) is destroyed, not pooled again. The pool
  // stops listening for a connection's errors while it is lent out: one ended between two statements would throw an
  // unhandled 'error' event (ending the process) without this listener; its next statement fails instead.
  let broken = false;
  const onError = () => (broken = true);
  client.on('error', onError);
  try {
    await client.query(kind === 'derived' ? 'BEGIN; SET LOCAL synchronous_commit TO off' : 'BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw err;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

/**
 * PostgreSQL truncates identifiers to 63 bytes, so two long collection names could meet in one table: a longer name
 * keeps a readable prefix and a hash of the whole.
 */
export function identifier(name: string): string {
  if (Buffer.byteLength(name) <= 63 && !name.includes('\u0000')) return escapeIdentifier(name);
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 16);
  const prefix = Buffer.from(name.replace(/\u0000/g, '')).subarray(0, 40).toString('utf8').replace(/\uFFFD/g, '');
  return escapeIdentifier(`${prefix}_${hash}`);
}

/**
 * The view queries read: it names the active generation's table, so a rebuild swaps in one statement. `rv_`, not `rm_`:
 * the view of a collection named `x_g1` must not take the name of the table of collection `x`, generation 1.
 */
export const viewName = (collection: string): string => identifier(`rv_${collection}`);
export const tableName = (collection: string, generation: number): string => identifier(`rm_${collection}_g${generation}`);
export const indexName = (collection: string, generation: number, i: number): string => identifier(`rm_${collection}_g${generation}_i${i}`);

/**
 * A lost or refused connection is a 503 (`read_store.unavailable`, Retry-After at the edge), not a 500; the projection
 * worker retries its batch without parking anything, since an empty batch fails as well. Driver messages carry no
 * password; the URL form is masked all the same.
 */
export function unavailable(e: unknown): unknown {
  if (e instanceof DomainError || !isConnectionError(e)) return e;
  const message = (e as Error).message.replace(/(postgres(?:ql)?:\/\/[^:/@\s]*:)[^@\s]*@/gi, '$1***@');
  return new DomainError('unavailable', 'read_store.unavailable', `The read store (PostgreSQL) cannot be reached: ${message}; retry shortly`);
}

/** Runs `work`, its connection failures as `unavailable`. */
export async function reachable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw unavailable(e);
  }
}
