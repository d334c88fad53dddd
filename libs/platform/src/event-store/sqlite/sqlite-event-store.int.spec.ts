import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { describeEventStoreContract, testEvent } from '../contract/event-store.contract';
import { SqliteEventStore } from './sqlite-event-store';

describeEventStoreContract('SqliteEventStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'es-'));
  const sqlite = new SqliteDatabase({ path: join(dir, 'test.db'), synchronous: 'NORMAL' });
  const store = new SqliteEventStore(sqlite, { writer: 'thread' });
  return {
    store,
    prefix: '',
    dispose: async () => {
      // Wait for the writer thread to close its connection (removing -wal) before the directory goes.
      await store.close();
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

const setup = () => {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  return { sqlite, store: new SqliteEventStore(sqlite) };
};

describe('SqliteEventStore.waitForAppend with a filter', () => {
  const settled = (p: Promise<unknown>) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 20))]);

  it('passes over appends holding none of the types, telling how far, and wakes on one that holds one', async () => {
    const { sqlite, store } = setup();
    await store.append('a-1', [testEvent('Wanted')]);
    const skipped: number[] = [];
    const waited = store.waitForAppend(await store.headPosition(), 5000, { types: ['Wanted'], onSkipped: (p) => skipped.push(p) });
    const usage = await store.append('usage-1', [testEvent('Other'), testEvent('Other')]);
    expect(await settled(waited)).toBe(false);
    expect(skipped).toEqual([usage.position]);
    await store.append('a-1', [testEvent('Wanted')]);
    expect(await settled(waited)).toBe(true);
    sqlite.close();
  });

  it('passes over an append to other categories, and with types and categories over one matching only either', async () => {
    const { sqlite, store } = setup();
    const skipped: number[] = [];
    const waited = store.waitForAppend(await store.headPosition(), 5000, { categories: ['timer'], onSkipped: (p) => skipped.push(p) });
    const usage = await store.append('usage-1', [testEvent('Fired')]);
    expect(await settled(waited)).toBe(false);
    expect(skipped).toEqual([usage.position]);
    await store.append('timer-1', [testEvent('Other')]);
    expect(await settled(waited)).toBe(true);
    const both = store.waitForAppend(await store.headPosition(), 5000, { types: ['Fired'], categories: ['timer'] });
    await store.append('usage-2', [testEvent('Fired')]);
    await store.append('timer-2', [testEvent('Other')]);
    expect(await settled(both)).toBe(false);
    await store.append('timer-3', [testEvent('Fired')]);
    expect(await settled(both)).toBe(true);
    sqlite.close();
  });

  it('wakes on any append without types', async () => {
    const { sqlite, store } = setup();
    const any = store.waitForAppend(0, 5000);
    await store.append('usage-1', [testEvent('Other')]);
    expect(await settled(any)).toBe(true);
    sqlite.close();
  });

  it('wakes on an append of other types when another process appended in between, unseen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'es-wait-'));
    const here = new SqliteDatabase({ path: join(dir, 'shared.db') });
    const there = new SqliteDatabase({ path: join(dir, 'shared.db') });
    const store = new SqliteEventStore(here, { writer: 'thread' });
    const other = new SqliteEventStore(there, { writer: 'thread' });
    await store.append('a-1', [testEvent('Wanted')]);
    const waited = store.waitForAppend(await store.headPosition(), 5000, { types: ['Wanted'] });
    await other.append('a-1', [testEvent('Wanted')]); // no in-process signal here; the poll would see it within 50 ms
    await store.append('usage-1', [testEvent('Other')]); // does not follow on from what the waiter has seen
    expect(await settled(waited)).toBe(true);
    await Promise.all([store.close(), other.close()]);
    here.close();
    there.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('SqliteEventStore reads bounded in bytes', () => {
  it('stops after the event that reaches maxBytes, always returns one, from the file and from the recent tail alike', async () => {
    const { sqlite, store } = setup();
    const big = (n: number) => testEvent('Big', { n, pad: 'x'.repeat(100_000) });
    for (let n = 0; n < 6; n++) await store.append(`big-${n}`, [big(n)]);
    const ns = (events: { data: unknown }[]) => events.map((e) => (e.data as { n: number }).n);
    for (const shared of [false, true]) {
      expect(ns(await store.readAll({ maxBytes: 250_000, shared }))).toEqual([0, 1, 2]);
      expect(ns(await store.readAll({ maxBytes: 1, shared }))).toEqual([0]);
      const first = await store.readAll({ maxBytes: 150_000, shared });
      expect(ns(first)).toEqual([0, 1]);
      expect(ns(await store.readAll({ after: first[1].position, maxBytes: 10_000_000, shared }))).toEqual([2, 3, 4, 5]);
      expect(ns(await store.readAll({ maxBytes: 250_000, maxCount: 2, shared }))).toEqual([0, 1]);
    }
    sqlite.close();
  });

  it('reads several types as a filter over the whole log would, in order, with after, maxCount, categories and maxBytes', async () => {
    const { sqlite, store } = setup();
    const kinds = ['A', 'B', 'C'];
    for (let i = 0; i < 60; i++) await store.append(`${i % 4 ? 'left' : 'right'}-${i % 7}`, [testEvent(kinds[(i * 5) % 3], { i, pad: 'z'.repeat(i * 10) })]);
    const all = await store.readAll();
    const ids = (events: { data: unknown }[]) => events.map((e) => (e.data as { i: number }).i);
    const want = (after: number, types: string[], categories?: string[]) =>
      all.filter((e) => e.position > after && types.includes(e.type) && (!categories || categories.includes(e.streamId.split('-')[0])));
    expect(ids(await store.readAll({ filter: { types: ['A', 'C'] } }))).toEqual(ids(want(0, ['A', 'C'])));
    expect(ids(await store.readAll({ after: all[20].position, maxCount: 7, filter: { types: ['B', 'A'] } }))).toEqual(ids(want(all[20].position, ['A', 'B']).slice(0, 7)));
    expect(ids(await store.readAll({ filter: { types: ['A', 'B'], categories: ['right'] } }))).toEqual(ids(want(0, ['A', 'B'], ['right'])));
    const bounded = await store.readAll({ maxBytes: 2_000, filter: { types: ['A', 'B'] } });
    const expected = want(0, ['A', 'B']);
    expect(ids(bounded)).toEqual(ids(expected.slice(0, bounded.length)));
    expect(bounded.length).toBeLessThan(expected.length);
    sqlite.close();
  });

  it('delivers every event to a subscription whose pages the bound cuts short, and is caught up only after the last', async () => {
    const { sqlite, store } = setup();
    for (let n = 0; n < 5; n++) await store.append(`big-${n}`, [testEvent('Big', { n })]);
    const readAllSync = store.readAllSync.bind(store);
    jest.spyOn(store, 'readAllSync').mockImplementation((o = {}) => readAllSync({ ...o, maxCount: Math.min(o.maxCount ?? 2, 2) }));
    const sub = store.subscribeToAll({ filter: { types: ['Big'] } });
    const seen: number[] = [];
    let caughtUpAt = -1;
    void sub.caughtUp.then(() => (caughtUpAt = seen.length));
    const reading = (async () => {
      for await (const e of sub) seen.push((e.data as { n: number }).n);
    })();
    await sub.caughtUp;
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(caughtUpAt).toBe(5);
    await sub.close();
    await reading;
    sqlite.close();
  });
});

describe('SqliteEventStore.subscribeToAll with a filter', () => {
  it.each([
    ['holding none of its types', { types: ['Wanted'] }, 'a-1', 'Wanted'],
    ['to other categories (the durable timers)', { categories: ['timer'] }, 'timer-1', 'Other'],
  ] as const)('reads no page for appends %s, and delivers the next that matches', async (_case, filter, stream, type) => {
    const sqlite = new SqliteDatabase({ path: ':memory:' });
    const store = new SqliteEventStore(sqlite);
    const sub = store.subscribeToAll({ filter: { ...filter } });
    const it = sub[Symbol.asyncIterator]();
    const next = it.next();
    await sub.caughtUp;
    await new Promise((r) => setImmediate(r));
    const readAll = jest.spyOn(store, 'readAllSync');
    for (let i = 0; i < 20; i++) await store.append(`usage-${i}`, [testEvent('Other')]);
    await new Promise((r) => setTimeout(r, 20));
    expect(readAll.mock.calls.length).toBeLessThanOrEqual(2);
    await store.append(stream, [testEvent(type, { n: 1 })]);
    expect(((await next).value as { data: unknown }).data).toEqual({ n: 1 });
    await sub.close();
    sqlite.close();
  });
});
