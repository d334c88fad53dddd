import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { describeEventStoreContract, testEvent } from '../contract/event-store.contract';
import { SqliteEventStore } from './sqlite-event-store';

// The file-backed store commits on its writer thread (sqlite-event-store.int.spec.ts); in memory it commits inline.
describeEventStoreContract('SqliteEventStore (inline writer, in memory)', async () => {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  return { store: new SqliteEventStore(sqlite), prefix: '', dispose: async () => sqlite.close() };
});

describeEventStoreContract('SqliteEventStore (auto writer, file)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'es-auto-'));
  const sqlite = new SqliteDatabase({ path: join(dir, 'events.db'), synchronous: 'NORMAL' });
  const store = new SqliteEventStore(sqlite, { writer: 'auto' });
  return {
    store,
    prefix: '',
    dispose: async () => {
      // The writer thread closes its own connection (removing -wal and -shm) on its way out: wait for it, or the
      // directory can still be written while it is removed (ENOTEMPTY).
      await store.close();
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SqliteEventStore writer thread', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'es-writer-'))));
  // A test that closes the database without awaiting the store leaves the writer thread to remove -wal on its way out.
  afterEach(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 }));

  const state = (p: Promise<unknown>) => Promise.race([p.then(() => 'resolved', () => 'rejected'), new Promise((r) => setImmediate(() => r('pending')))]);

  it('keeps the event loop free while an append waits for the write lock, and commits it once the lock is free', async () => {
    const path = join(dir, 'locked.db');
    const sqlite = new SqliteDatabase({ path });
    const store = new SqliteEventStore(sqlite, { writer: 'thread' });
    await store.append('warm-1', [testEvent()]);
    const other = new SqliteDatabase({ path });
    other.db.prepare('BEGIN IMMEDIATE').run();

    const appended = store.append('order-1', [testEvent('OrderPlaced')]);
    // Timers still fire while the commit waits: on the main thread the wait would hold the loop (and, since the
    // lock is held on this very thread, end in SQLITE_BUSY).
    await new Promise((r) => setTimeout(r, 100));
    expect(await state(appended)).toBe('pending');
    expect(await store.readStream('order-1')).toEqual([]);

    other.db.prepare('COMMIT').run();
    const { position } = await appended;
    expect((await store.readStream('order-1')).map((e) => [e.type, e.position])).toEqual([['OrderPlaced', position]]);
    other.close();
    await store.close();
    sqlite.close();
  });

  it('commits every append made before the database closes, and acknowledges each', async () => {
    const path = join(dir, 'closing.db');
    const sqlite = new SqliteDatabase({ path });
    const store = new SqliteEventStore(sqlite, { writer: 'thread' });
    await store.append('warm-1', [testEvent()]);
    const appends = Array.from({ length: 100 }, (_, i) => store.append(`item-${i}`, [testEvent('ItemAdded')], { expectedRevision: 'no_stream' }));
    sqlite.close();
    const results = await Promise.all(appends);

    const reopened = new SqliteDatabase({ path });
    const stored = await new SqliteEventStore(reopened, { writer: 'inline' }).readAll({ filter: { types: ['ItemAdded'] } });
    expect(stored.map((e) => e.position)).toEqual(results.map((r) => r.position));
    reopened.close();
  });

  it('closes through the store too: close() resolves once every append made before it is committed', async () => {
    const path = join(dir, 'store-close.db');
    const sqlite = new SqliteDatabase({ path });
    const store = new SqliteEventStore(sqlite, { writer: 'thread' });
    const appends = Array.from({ length: 20 }, (_, i) => store.append(`item-${i}`, [testEvent('ItemAdded')]));
    await store.close();
    expect(await Promise.all(appends.map(state))).toEqual(Array(20).fill('resolved'));
    await expect(store.append('late-1', [testEvent()])).rejects.toThrow('closed');
    expect(await store.readAll({ filter: { types: ['ItemAdded'] } })).toHaveLength(20);
    sqlite.close();
  });

  it('auto: commits a lone append inline, appends made together on the thread, all in order', async () => {
    const sqlite = new SqliteDatabase({ path: join(dir, 'auto.db') });
    const store = new SqliteEventStore(sqlite, { writer: 'auto' });
    const thread = new SqliteEventStore(new SqliteDatabase({ path: join(dir, 'thread.db') }), { writer: 'thread' });
    await Promise.all([store.append('warm-1', [testEvent()]), thread.append('warm-1', [testEvent()])]);
    // Committed on this thread in the turn it was made: settled before a round trip to a thread could be.
    const lone = store.append('lone-1', [testEvent('Lone')]);
    const viaThread = thread.append('lone-1', [testEvent('Lone')]);
    expect([await state(lone), await state(viaThread)]).toEqual(['resolved', 'pending']);
    const together = await Promise.all(Array.from({ length: 10 }, (_, i) => store.append(`item-${i}`, [testEvent('ItemAdded')], { expectedRevision: 'no_stream' })));
    const stored = await store.readAll({ filter: { types: ['ItemAdded'] } });
    expect(stored.map((e) => e.position)).toEqual(together.map((r) => r.position));
    await viaThread;
    await thread.close();
    await store.close();
    sqlite.close();
  });
});
