import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { encodePageKey, type PositionedOps, type ProjectionSink, type ReadDoc, type ReadOp, type ReadStore } from '@lib/platform';
import { PostgresReadStore } from '@lib/platform/engines';
import { SqliteDatabase, SqliteProjectionState, SqliteReadStore } from '@lib/platform/sqlite';
import { median, now, percentile, report, round } from './common';

type Store = ReadStore & ProjectionSink<ReadOp>;

const CORPORA = 20;
const COLLECTION = 'bench_documents';
const SHAPE = { name: 'bench_documents', version: 1, collections: [{ name: COLLECTION, indexes: [{ fields: ['corpus_key', 'document_id'] }] }] };
const pad = (i: number) => String(i).padStart(6, '0');

/** A row shaped like the documents read model's: keys, a title, metadata and counters (~400 bytes of JSON). */
const row = (i: number, version = 0): ReadDoc => ({
  id: `c${i % CORPORA}.doc-${pad(i)}`,
  corpus_key: `c${i % CORPORA}`,
  document_id: `doc-${pad(i)}`,
  title: `A document title number ${i} about retrieval`,
  metadata: { year: 2000 + (i % 25), lang: i % 3 ? 'eng' : 'deu', source: 'bench', tags: ['alpha', 'beta'], version },
  stats: { parts: 1 + (i % 17), chars: 1000 + ((i * 37) % 9000), images: i % 4 },
  created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  updated_at: new Date(Date.UTC(2026, 0, 1) + i * 1000 + version).toISOString(),
});

/** The test cluster's helper (test/support/postgres-cluster.js), loaded from the checkout at run time. */
function clusterHelper(): {
  postgresBin(): string | undefined;
  initCluster(o: { prefix: string }): unknown;
  startCluster(c: unknown, port: number): string;
  removeCluster(c: unknown): void;
  freePort(): number;
  createDatabase(url: string, name: string): Promise<string>;
} {
  const file = join(process.cwd(), 'test', 'support', 'postgres-cluster.js');
  if (!existsSync(file)) throw new Error(`run from the repository root (needs ${file}), or set POSTGRES_URL`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(file);
}

/** POSTGRES_URL's server, or a throwaway cluster as jest's globalSetup starts one; a fresh database either way. */
async function postgres(): Promise<{ url: string; where: string; stop: () => void }> {
  const helper = clusterHelper();
  const name = `bench_reads_${Date.now().toString(36)}`;
  if (process.env.POSTGRES_URL) return { url: await helper.createDatabase(process.env.POSTGRES_URL, name), where: 'POSTGRES_URL', stop: () => undefined };
  if (!helper.postgresBin()) throw new Error('PostgreSQL is not installed (apt-get install postgresql) and POSTGRES_URL is not set');
  const cluster = helper.initCluster({ prefix: 'ars-bench-pg-' });
  try {
    const url = helper.startCluster(cluster, helper.freePort());
    return { url: await helper.createDatabase(url, name), where: 'a throwaway local cluster (test/support/postgres-cluster.js)', stop: () => helper.removeCluster(cluster) };
  } catch (err) {
    helper.removeCluster(cluster);
    throw err;
  }
}

/** Writes `rows` rows in batches of 100 events of one put each, each batch with its checkpoint: rows/s. */
async function applyAll(store: Store, rows: number, firstPosition: number, version: number): Promise<number> {
  const started = now();
  for (let from = 0; from < rows; from += 100) {
    const batch: PositionedOps<ReadOp>[] = [];
    for (let i = from; i < Math.min(rows, from + 100); i++) batch.push({ position: firstPosition + i, ops: [{ op: 'put', collection: COLLECTION, doc: row(i, version) }] });
    await store.applyBatch(SHAPE.name, 1, batch, batch[batch.length - 1].position);
  }
  return rows / ((now() - started) / 1000);
}

async function timeEach(n: number, call: (k: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let k = 0; k < n; k++) {
    const t = now();
    await call(k);
    times.push(now() - t);
  }
  return times;
}

/**
 * The embedded SqliteReadStore (a file, as the service keeps service.db) beside PostgresReadStore (a pool on the same
 * machine) on the same rows: applying batches of 100 upserts with their checkpoint (fresh rows, then the same rows
 * again), get by id, and a filtered page (one corpus of 20, sorted by document id, 25 rows from a random cursor).
 * Rounds alternate which store goes first; latencies are pooled over the rounds, rates are medians of them.
 */
export async function readStorePgBench(args: string[]): Promise<void> {
  const rows = Number(args[0] ?? 10_000);
  const lookups = Number(args[1] ?? 3000);
  const rounds = Number(args[2] ?? 3);
  const pg = await postgres();
  const dir = mkdtempSync(join(tmpdir(), 'bench-read-store-'));
  const pool = new Pool({ connectionString: pg.url, max: 4 });
  const sqlite = new SqliteDatabase({ path: join(dir, 'service.db') });
  try {
    const stores: Record<'sqlite' | 'postgres', Store> = { sqlite: new SqliteReadStore(sqlite, new SqliteProjectionState(sqlite)), postgres: new PostgresReadStore(pool) };
    const figures = { sqlite: { insert: [] as number[], update: [] as number[], get: [] as number[], find: [] as number[] }, postgres: { insert: [] as number[], update: [] as number[], get: [] as number[], find: [] as number[] } };
    for (const store of Object.values(stores)) {
      await store.prepare(SHAPE, 1);
      await store.activate(SHAPE, 1);
    }
    let position = 0;
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['sqlite', 'postgres'] as const) : (['postgres', 'sqlite'] as const);
      // A fresh collection each round: delete every row (not timed), then insert, then the same rows again.
      position += 2 * rows + 10;
      for (const name of order) {
        const store = stores[name];
        await store.applyBatch(SHAPE.name, 1, [{ position: position - 1, ops: [{ op: 'deleteWhere', collection: COLLECTION, where: [] }] }], position - 1);
        figures[name].insert.push(await applyAll(store, rows, position, round));
        figures[name].update.push(await applyAll(store, rows, position + rows, round + 1));
      }
      // As autovacuum would after a load this size; the planner then knows the corpus index is selective.
      await pool.query(`ANALYZE rm_${COLLECTION}_g1`);
      const ids = Array.from({ length: lookups }, () => Math.floor(Math.random() * rows));
      for (const name of order) {
        const store = stores[name];
        figures[name].get.push(...(await timeEach(lookups, (k) => store.get(COLLECTION, row(ids[k]).id))));
        figures[name].find.push(
          ...(await timeEach(lookups, async (k) => {
            const start = row(ids[k]);
            const page = await store.find(COLLECTION, {
              where: [{ field: 'corpus_key', op: 'eq', value: start.corpus_key as string }],
              sort: { field: 'document_id', direction: 'asc' },
              limit: 25,
              pageKey: encodePageKey(start.document_id, start.id),
            });
            if (page.items.length === 0 && ids[k] < rows - CORPORA * 25) throw new Error(`${name}: an empty page`);
          })),
        );
      }
    }
    const line = (name: 'sqlite' | 'postgres') => {
      const f = figures[name];
      return {
        store: name === 'sqlite' ? 'SqliteReadStore (embedded file)' : 'PostgresReadStore (pool, localhost)',
        'get p50 ms': round(percentile(f.get, 50), 3),
        'get p99 ms': round(percentile(f.get, 99), 3),
        'find 25 p50 ms': round(percentile(f.find, 50), 3),
        'find 25 p99 ms': round(percentile(f.find, 99), 3),
        'apply insert rows/s': round(median(f.insert), 0),
        'apply upsert rows/s': round(median(f.update), 0),
      };
    };
    const [s, p] = [line('sqlite'), line('postgres')];
    report('read-store-pg', [s, p, {
      store: 'postgres / sqlite',
      'get p50 ms': round(p['get p50 ms'] / s['get p50 ms'], 1),
      'get p99 ms': round(p['get p99 ms'] / s['get p99 ms'], 1),
      'find 25 p50 ms': round(p['find 25 p50 ms'] / s['find 25 p50 ms'], 1),
      'find 25 p99 ms': round(p['find 25 p99 ms'] / s['find 25 p99 ms'], 1),
      'apply insert rows/s': round(p['apply insert rows/s'] / s['apply insert rows/s'], 2),
      'apply upsert rows/s': round(p['apply upsert rows/s'] / s['apply upsert rows/s'], 2),
    }], { rows, lookups, rounds, postgres: pg.where, rates: { sqlite: figures.sqlite.insert.concat(figures.sqlite.update).map((r) => round(r, 0)), postgres: figures.postgres.insert.concat(figures.postgres.update).map((r) => round(r, 0)) } });
  } finally {
    sqlite.close();
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
    pg.stop();
  }
}
