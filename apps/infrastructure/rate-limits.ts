import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { MongoClient } from 'mongodb';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterMongo, RateLimiterSQLite } from 'rate-limiter-flexible';
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

/**
 * Counts in this process only. The one-process deployment (`--role=all`, the default) has nobody to share with:
 * no file to keep, no write per request (the shared file's two upserts measured within the chat bench's noise,
 * at most ~0.3 ms a request: docs/benchmarks.md).
 */
export const memoryRateLimits: RateLimits = (_name, points, duration) => new RateLimiterMemory({ points, duration });
