import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { MongoClient } from 'mongodb';
import type { Pool, QueryConfig, QueryResult } from 'pg';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterMongo, RateLimiterPostgres, RateLimiterSQLite } from 'rate-limiter-flexible';
import { ensurePrivateFile } from '@lib/platform';

/**
 * Makes the rate limiters of the edge. Every limiter of one name counts in one shared store, so N API processes
 * together allow the limit, not N times it (docs/security.md).
 */
export type RateLimits = (name: string, points: number, durationSeconds: number) => RateLimiterAbstract;

/**
 * The embedded default: one SQLite file beside the service's, `DATA_DIR/rate-limits.db`, which every process on the
 * data dir opens. Apart from `service.db` so that counting a request never waits for the event store's write lock
 * or its fsync; `synchronous=OFF` since counters lost to a power cut only forgive a minute of requests. Each count
 * is one atomic upsert (rate-limiter-flexible's `INSERT … ON CONFLICT … RETURNING`), so processes cannot both pass
 * the last point.
 */
export function sqliteRateLimits(dataDir: string): { limits: RateLimits; close: () => void } {
  const path = join(dataDir, 'rate-limits.db');
  // Keys name client addresses and credentials' ids: private like the service's own file.
  ensurePrivateFile(path);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  for (const side of ['-wal', '-shm']) ensurePrivateFile(path + side, undefined, false);
  db.pragma('synchronous = OFF');
  db.pragma('busy_timeout = 5000');
  // Expired counters are swept here rather than by the library's own timer, which outlives `close()` and then
  // throws on the closed connection.
  const tables = new Set<string>();
  const sweep = setInterval(() => {
    if (!db.open) return;
    for (const table of tables) db.prepare(`DELETE FROM ${table} WHERE expire < ?`).run(Date.now() - 3_600_000);
  }, 300_000);
  sweep.unref();
  const client = preparedOnce(db);
  const limits: RateLimits = (name, points, duration) => {
    const tableName = `rate_${name}`;
    tables.add(tableName);
    // Created here, synchronously: the library creates it asynchronously and refuses counts until then.
    db.prepare(`CREATE TABLE IF NOT EXISTS ${tableName} (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER)`).run();
    // A file that cannot be written (disk full, locked past the busy timeout) counts in memory rather than failing requests.
    const insuranceLimiter = new RateLimiterMemory({ points, duration });
    return new RateLimiterSQLite({ storeClient: client, storeType: 'better-sqlite3', tableName, tableCreated: true, clearExpiredByTimeout: false, points, duration, insuranceLimiter });
  };
  return {
    limits,
    close: () => {
      clearInterval(sweep);
      db.close();
    },
  };
}

/**
 * The connection as the library sees it, except that `prepare` compiles each statement once: the library prepares
 * its upsert on every count (two per request), ~15 µs of a count's 45 (29.9 against 45.2 µs per `consume`, 20,000
 * counts alternated; docs/benchmarks/2026-11-30-session-24.md). Its statements run to completion synchronously (`get`,
 * `run` in a transaction), so one compiled statement per text is never in use twice at once.
 */
function preparedOnce(db: Database.Database): Database.Database {
  const statements = new Map<string, Database.Statement>();
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (sql: string) => {
          let statement = statements.get(sql);
          if (!statement) statements.set(sql, (statement = target.prepare(sql)));
          return statement;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * With MongoDB configured, the limiters count in its collections `rate_<name>` (atomic `$inc` upserts, expiry by a
 * TTL index). While MongoDB cannot be reached, each process falls back to counting in memory (the insurance
 * limiter) rather than refusing every request.
 */
export function mongoRateLimits(client: MongoClient, dbName: string): RateLimits {
  return (name, points, duration) =>
    new RateLimiterMongo({ storeClient: client, dbName, tableName: `rate_${name}`, points, duration, insuranceLimiter: new RateLimiterMemory({ points, duration }) });
}

/** The one table every PostgreSQL limiter counts in: a limiter's name is its keys' prefix (`<name>:<key>`). */
const POSTGRES_TABLE = 'rate_limits';
/**
 * How long a count may wait for PostgreSQL before it is counted in memory instead: a count normally takes a
 * millisecond or two, and a request must not hang on a database being restarted or cut off.
 */
const POSTGRES_COUNT_DEADLINE_MS = 1_000;

/**
 * With PostgreSQL configured (API processes on several hosts, each with its own DATA_DIR), the limiters count in
 * its table `rate_limits`: one atomic `INSERT … ON CONFLICT DO UPDATE … RETURNING` per count (rate-limiter-flexible's
 * `RateLimiterPostgres`), so processes cannot both pass the last point. The table is made here, before any count
 * (the library would make it asynchronously and refuse counts until then); one table for every limiter, told apart
 * by the key prefix, so nothing is created while requests are served. While PostgreSQL cannot be reached, or a
 * count takes longer than a second, each process counts in memory (the insurance limiter), like the MongoDB store.
 * The pool is the caller's: `close()` stops only the sweep of expired counters.
 */
export async function postgresRateLimits(pool: Pick<Pool, 'query'>): Promise<{ limits: RateLimits; close: () => void }> {
  await createTable(pool);
  // Expired counters are swept by one timer here, not by one per limiter (the library's default).
  const sweep = setInterval(() => {
    pool.query(`DELETE FROM ${POSTGRES_TABLE} WHERE expire < $1`, [Date.now() - 3_600_000]).catch(() => undefined);
  }, 300_000);
  sweep.unref();
  const client = { query: (query: QueryConfig) => withDeadline(pool.query(query), POSTGRES_COUNT_DEADLINE_MS) };
  const limits: RateLimits = (name, points, duration) =>
    new RateLimiterPostgres({
      storeClient: client,
      storeType: 'client',
      tableName: POSTGRES_TABLE,
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix: name,
      points,
      duration,
      insuranceLimiter: new RateLimiterMemory({ points, duration }),
    });
  return { limits, close: () => clearInterval(sweep) };
}

async function createTable(pool: Pick<Pool, 'query'>): Promise<void> {
  try {
    // The library's own layout (RateLimiterPostgres#_getCreateTableStmt): its statements name these columns.
    await pool.query(`CREATE TABLE IF NOT EXISTS ${POSTGRES_TABLE} (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`);
  } catch (e) {
    // Two processes starting at once: IF NOT EXISTS does not stop the loser of the race inserting the same type name.
    if ((e as { code?: string }).code !== '23505') throw e;
  }
}

function withDeadline(query: Promise<QueryResult>, ms: number): Promise<QueryResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`rate limit count took over ${ms} ms`)), ms);
  });
  return Promise.race([query, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Counts in this process only. The one-process deployment (`--role=all`, the default) has nobody to share with:
 * no file to keep, no write per request (the shared file's two upserts measured within the chat bench's noise,
 * at most ~0.3 ms a request: docs/benchmarks.md).
 */
export const memoryRateLimits: RateLimits = (_name, points, duration) => new RateLimiterMemory({ points, duration });
