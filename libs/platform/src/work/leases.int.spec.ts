import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { systemClock } from '../kernel/clock';
import { SqliteDatabase } from '../sqlite/sqlite-database';
import { randomUUID } from 'node:crypto';
import { havePostgres, testDatabase } from '../../../../test/support/postgres';
import type { CommandContext } from '../commands/command-context';
import { decideOnStream } from '../commands/stream-decider';
import { EventStore, FencedError } from '../event-store/event-store.port';
import { PostgresEventStore } from '../event-store/postgres/postgres-event-store';
import { ControllableLease, EventStoreLeases, Lease, leaseStream } from './leases';

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

/**
 * Fencing (docs/workers.md "Fencing"): a holder paused past its lease's expiry (or cut off from the store) may still
 * try a step once it runs again; once another holder has acquired the lease, that step is refused in the append
 * itself, not only by the old holder's own TTL arithmetic.
 */
describe.each(['sqlite', 'postgres'] as const)('fencing through the lease (%s)', (engine) => {
  let stores: EventStore[] = [];
  let skip = false;
  beforeAll(async () => {
    if (engine === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'fence-'));
      const path = join(dir, 'events.db');
      stores = [new SqliteEventStore(new SqliteDatabase({ path, synchronous: 'NORMAL' })), new SqliteEventStore(new SqliteDatabase({ path, synchronous: 'NORMAL' }))];
    } else {
      const url = havePostgres('fencing (postgres)') ? await testDatabase('fence') : undefined;
      if (!url) return void (skip = true);
      stores = [await PostgresEventStore.connect(url), await PostgresEventStore.connect(url)];
    }
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
  });

  it('a step of the old holder after the takeover is refused and writes nothing; the new holder\'s steps carry its id', async () => {
    if (skip) return;
    const [storeA, storeB] = stores;
    const a = new EventStoreLeases(storeA, systemClock, { ttlMs: 300, renewMs: 100, holder: 'worker-a' });
    const b = new EventStoreLeases(storeB, systemClock, { ttlMs: 300, renewMs: 100, holder: 'worker-b' });
    const job = `job-${randomUUID()}`;
    const fold = { initialState: 0, evolve: (n: number) => n + 1 };
    const step = (lease: Lease, n: number): CommandContext => ({
      actor: { type: 'system', id: 'job-runner' },
      requestId: job,
      commandId: `${job}|${lease.holder}|${n}`,
      now: new Date(),
      lease: { holder: lease.holder, fence: lease.fence },
    });
    const held = (await a.tryAcquire(job)) as ControllableLease;
    await decideOnStream(storeA, job, fold, () => [{ type: 'Stepped', data: { by: 'a', n: 1 } }], step(held, 1));
    // Worker a pauses (stops renewing); its lease expires and worker b takes it over.
    held.abandon();
    await new Promise((r) => setTimeout(r, 350));
    const taken = (await b.tryAcquire(job))!;
    expect(taken).toBeDefined();
    // Worker a wakes up and, not knowing yet, applies its next step: refused by the store.
    await expect(decideOnStream(storeA, job, fold, () => [{ type: 'Stepped', data: { by: 'a', n: 2 } }], step(held, 2))).rejects.toBeInstanceOf(FencedError);
    await decideOnStream(storeB, job, fold, () => [{ type: 'Stepped', data: { by: 'b', n: 2 } }], step(taken, 2));
    const events = await storeB.readStream(job);
    expect(events.map((e) => [(e.data as { by: string }).by, e.metadata.holder])).toEqual([
      ['a', 'worker-a'],
      ['b', 'worker-b'],
    ]);
    await taken.release();
  });
});
