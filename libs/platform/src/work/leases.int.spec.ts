import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { systemClock } from '../kernel/clock';
import { SqliteDatabase } from '../sqlite/sqlite-database';
import { ControllableLease, EventStoreLeases, leaseStream } from './leases';

/** Two "processes": two connections to one SQLite file, each with its own holder id. */
describe('leases through the event store (two runners on one SQLite file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'leases-'));
  const path = join(dir, 'service.db');
  const open = (holder: string, ttlMs = 400, renewMs = 100) => {
    const sqlite = new SqliteDatabase({ path, synchronous: 'NORMAL' });
    const store = new SqliteEventStore(sqlite);
    return { sqlite, store, leases: new EventStoreLeases(store, systemClock, { ttlMs, renewMs, holder }) };
  };
  const a = open('a');
  const b = open('b');
  afterAll(async () => {
    for (const r of [a, b]) {
      await r.store.close();
      r.sqlite.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('of two runners racing for a free lease, exactly one gets it', async () => {
    const results = await Promise.all([a.leases.tryAcquire('race'), b.leases.tryAcquire('race'), a.leases.tryAcquire('race2'), b.leases.tryAcquire('race2')]);
    expect(results.slice(0, 2).filter(Boolean)).toHaveLength(1);
    expect(results.slice(2).filter(Boolean)).toHaveLength(1);
    await Promise.all(results.map((l) => l?.release()));
  });

  it('a live holder keeps its lease past the TTL by renewing; the other runner is refused throughout', async () => {
    const lease = (await a.leases.tryAcquire('kept'))!;
    for (let i = 0; i < 8; i++) {
      await sleep(100);
      expect(await b.leases.tryAcquire('kept')).toBeUndefined();
    }
    expect(lease.held).toBe(true);
    expect(await b.leases.holderOf('kept')).toBe('a');
    await lease.release();
    expect(lease.signal.aborted).toBe(true);
    const taken = await b.leases.tryAcquire('kept');
    expect(taken?.holder).toBe('b');
    await taken!.release();
  });

  it('a holder that stops renewing is taken over after the TTL, and then knows it lost the lease', async () => {
    const lease = (await a.leases.tryAcquire('dying')) as ControllableLease;
    lease.abandon();
    expect(await b.leases.tryAcquire('dying')).toBeUndefined();
    await sleep(450);
    const taken = await b.leases.tryAcquire('dying');
    expect(taken?.holder).toBe('b');
    expect(await lease.renew()).toBe(false);
    expect(lease.signal.aborted).toBe(true);
    await lease.release(); // lost: appends nothing
    const types = (await a.store.readStream(leaseStream('dying'))).map((e) => [e.type, (e.data as { holder: string }).holder]);
    expect(types).toEqual([
      ['LeaseAcquired', 'a'],
      ['LeaseAcquired', 'b'],
    ]);
    await taken!.release();
  });
});
