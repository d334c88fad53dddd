import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { turnsDuring } from '../../kernel/yield';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../sqlite/sqlite-projection-state';
import type { SearchOp } from '../search-index.port';
import { READ_THREAD_MIN_ROWS, SqliteReader } from './read-thread-client';
import { SqliteSearchIndex } from './sqlite-search-index';

describe('statements that scan a large table run on the read thread', () => {
  let dir: string;
  let sqlite: SqliteDatabase;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'read-thread-'));
    sqlite = new SqliteDatabase({ path: join(dir, 'service.db'), synchronous: 'NORMAL' });
  });
  afterEach(() => {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers as the main connection does, while the event loop keeps turning', async () => {
    const reader = new SqliteReader(sqlite);
    sqlite.db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)');
    const sql = 'SELECT n, n * 2 AS twice FROM t WHERE n >= ? ORDER BY n';
    expect(await reader.all(sql, [2], { onThread: true, table: 't' })).toEqual(await reader.all(sql, [2], { onThread: false, table: 't' }));
    expect(await reader.all(sql, [2], { onThread: true, raw: true, table: 't' })).toEqual([[2, 4], [3, 6]]);
    expect(reader.answered).toBe(2);
    // A statement of ~0.3 s: on the thread, the loop turns meanwhile; on the main connection it could not.
    const long = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT COUNT(*) AS n FROM c';
    const { value, turns } = await turnsDuring(() => reader.all(long, [2_000_000], { onThread: true, table: 't' }));
    expect(value).toEqual([{ n: 2_000_000 }]);
    expect(turns).toBeGreaterThan(10);
    await reader.close();
    // Closed, it reads on the main connection.
    expect(await reader.all(sql, [3], { onThread: true, table: 't' })).toEqual([{ n: 3, twice: 6 }]);
    expect(reader.answered).toBe(3);
  });

  const long = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT COUNT(*) AS n FROM c';
  const busy = { kind: 'unavailable', code: 'search.busy', details: { retryAfterSeconds: 1 } };

  it('refuses a statement past the queue bound with a retryable 503, and takes more once the queue shortens', async () => {
    const reader = new SqliteReader(sqlite, { maxQueued: 2, maxQueuedPerTable: 2 });
    const queued = [reader.all(long, [1_000_000], { onThread: true, table: 't' }), reader.all(long, [1_000_000], { onThread: true, table: 'u' })];
    await expect(reader.all(long, [10], { onThread: true, table: 'v' })).rejects.toMatchObject(busy);
    expect(await Promise.all(queued)).toEqual([[{ n: 1_000_000 }], [{ n: 1_000_000 }]]);
    expect(await reader.all(long, [10], { onThread: true, table: 't' })).toEqual([{ n: 10 }]);
    await reader.close();
  });

  it('gives one table at most its share of the queue, and runs another table\'s statement after one of its, not after all', async () => {
    const reader = new SqliteReader(sqlite, { maxQueued: 8, maxQueuedPerTable: 3 });
    const done: string[] = [];
    const run = (table: string, name: string, n: number) => reader.all(long, [n], { onThread: true, table }).then(() => done.push(name));
    // A corpus whose every query scans fills its share; its fourth statement is refused while another corpus's is not.
    const flood = [run('big', 'big1', 600_000), run('big', 'big2', 600_000), run('big', 'big3', 600_000)];
    await expect(reader.all(long, [10], { onThread: true, table: 'big' })).rejects.toMatchObject({ ...busy, message: expect.stringContaining('3 slow queries of this corpus') });
    const other = run('small', 'small1', 10);
    await Promise.all([...flood, other]);
    // In arrival order (first come, first served) small1 would run last, after the whole flood.
    expect(done).toEqual(['big1', 'big2', 'small1', 'big3']);
    await reader.close();
  });

  it('ranks a large table by FTS5 and by the exact vector scan there, finding the part asked for', async () => {
    const index = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite), { minVectors: Infinity }, { minRows: Infinity });
    await index.prepare({ name: 'search', version: 1 }, 1);
    await index.activate({ name: 'search', version: 1 }, 1);
    const docs = Math.ceil(READ_THREAD_MIN_ROWS / 100) + 1;
    const ops: SearchOp[] = [{ op: 'createIndex', index: 'c', dimensions: 3 }];
    for (let d = 0; d < docs; d++) {
      const parts = Array.from({ length: 100 }, (_, seq) => ({ seq, text: `common words w${d}x${seq}`, partMetadata: {}, vector: [1, d / docs, seq / 100] }));
      ops.push({ op: 'upsertDocument', index: 'c', document: { documentId: `d${d}`, documentMetadata: {}, parts } });
    }
    await index.applyBatch('search', 1, [{ position: 1, ops }], 1);
    const reader = (index as unknown as { reader: SqliteReader }).reader;
    const lexical = await index.search('c', { mode: 'lexical', text: 'w17x42 common', limit: 3 });
    expect(lexical[0]).toMatchObject({ documentId: 'd17', seq: 42 });
    const vector = await index.search('c', { mode: 'vector', vector: [1, 17 / docs, 0.42], limit: 1 });
    expect(vector[0]).toMatchObject({ documentId: 'd17', seq: 42 });
    expect(reader.answered).toBe(3); // the parts' and the documents' bm25(), the exact scan
    await index.close();
  });
});
