import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { fixedClock } from '../kernel/clock';
import { SqliteDatabase } from '../sqlite/sqlite-database';
import { DueTimer, DurableTimers, timerStream } from './durable-timers';
import { EventStoreLeases } from './leases';

describe('durable timers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'timers-'));
  const path = join(dir, 'service.db');
  const clock = fixedClock('2025-01-01T00:00:00Z');
  const opened: { sqlite: SqliteDatabase; store: SqliteEventStore; timers: DurableTimers }[] = [];
  const fired: DueTimer[] = [];
  /** A worker process: its own connection, holder id and timer runner, on the shared file and clock. */
  const worker = async (holder: string) => {
    const sqlite = new SqliteDatabase({ path, synchronous: 'NORMAL' });
    const store = new SqliteEventStore(sqlite);
    const timers = new DurableTimers(store, clock, new EventStoreLeases(store, clock, { ttlMs: 15_000, renewMs: 5_000, holder }), { pollMs: 60_000 });
    timers.handle('wake', async (t) => void fired.push(t));
    await timers.start();
    opened.push({ sqlite, store, timers });
    return { store, timers, close: () => close(opened.pop()!) };
  };
  const close = async (w: (typeof opened)[number]) => {
    await w.timers.stop();
    await w.store.close();
    w.sqlite.close();
  };
  afterAll(async () => {
    for (const w of opened.splice(0)) await close(w);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a timer scheduled before a restart fires once its time comes, exactly once across workers', async () => {
    const first = await worker('w1');
    await first.timers.schedule({ timerId: 'remind-1', kind: 'wake', dueAt: new Date('2025-01-01T00:10:00Z'), payload: { session: 's1' } });
    await first.timers.schedule({ timerId: 'remind-2', kind: 'wake', dueAt: new Date('2025-01-01T00:20:00Z') });
    await first.timers.cancel('remind-2');
    expect(await first.timers.fireDue()).toEqual([]);
    await first.close();

    // Restart: two new workers on the same store know the pending timer from the log alone.
    const a = await worker('w2');
    const b = await worker('w3');
    expect(a.timers.pendingIds()).toEqual(['remind-1']);
    expect(await a.timers.fireDue()).toEqual([]);

    clock.advance(10 * 60_000);
    const [fromA, fromB] = await Promise.all([a.timers.fireDue(), b.timers.fireDue()]);
    expect([...fromA, ...fromB]).toEqual(['remind-1']);
    expect(await a.timers.fireDue()).toEqual([]);
    expect(await b.timers.fireDue()).toEqual([]);
    expect(fired).toEqual([{ timerId: 'remind-1', kind: 'wake', dueAt: new Date('2025-01-01T00:10:00Z'), payload: { session: 's1' } }]);
    expect((await a.store.readStream(timerStream('remind-1'))).map((e) => e.type)).toEqual(['TimerScheduled', 'TimerFired']);

    // A later worker finds nothing pending.
    await b.close();
    await a.close();
    const c = await worker('w4');
    expect(c.timers.pendingIds()).toEqual([]);
    expect(await c.timers.fireDue()).toEqual([]);
    expect(fired).toHaveLength(1);
  });

  it('a handler that keeps failing is tried again later, not at once, and the timer fires once it succeeds', async () => {
    const w = await worker('w4');
    let failing = true;
    const calls: string[] = [];
    w.timers.handle('flaky', async (t) => {
      calls.push(t.timerId);
      if (failing) throw new Error('downstream is down');
    });
    await w.timers.schedule({ timerId: 'flaky-1', kind: 'flaky', dueAt: new Date(clock.now().getTime() + 1000) });
    // The timer reaches the runner's index from the log.
    for (let i = 0; i < 100 && !w.timers.pendingIds().includes('flaky-1'); i++) await new Promise((r) => setTimeout(r, 20));
    clock.advance(1000);
    const leaseAppends = async () => (await w.store.readAll({ filter: { categories: ['lease'] } })).length;
    expect(await w.timers.fireDue()).toEqual([]);
    expect(calls).toEqual(['flaky-1']);
    const leasesAfterFirst = await leaseAppends();
    // Asked again at once (the worker's loop re-arms with no delay for an overdue timer): nothing is tried, nothing written.
    for (let i = 0; i < 20; i++) expect(await w.timers.fireDue()).toEqual([]);
    expect(calls).toEqual(['flaky-1']);
    expect(await leaseAppends()).toBe(leasesAfterFirst);
    // After 1 s it is tried again and fails again: the next try waits 2 s.
    clock.advance(1000);
    await w.timers.fireDue();
    clock.advance(1000);
    await w.timers.fireDue();
    expect(calls).toEqual(['flaky-1', 'flaky-1']);
    failing = false;
    clock.advance(1000);
    expect(await w.timers.fireDue()).toEqual(['flaky-1']);
    expect(calls).toHaveLength(3);
    expect(w.timers.pendingIds()).toEqual([]);
    await w.close();
  });
});
