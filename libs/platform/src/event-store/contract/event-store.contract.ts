import { randomUUID } from 'node:crypto';
import { ConcurrencyError, EventStore, FencedError } from '../event-store.port';
import type { NewEvent, RecordedEvent } from '../events';

/** Builds a test event; ids are fresh unless given. */
export function testEvent(type = 'Happened', data: unknown = {}, id: string = randomUUID()): NewEvent {
  return { id, type, data, metadata: { actor: { type: 'system', id: 'test' }, correlationId: id, schemaVersion: 1 } };
}

async function take(sub: AsyncIterable<RecordedEvent>, n: number, timeoutMs = 5000): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  const it = sub[Symbol.asyncIterator]();
  const deadline = Date.now() + timeoutMs;
  while (out.length < n) {
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      it.next(),
      new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), Math.max(0, deadline - Date.now())))),
    ]);
    clearTimeout(timer);
    if (next === 'timeout' || next.done) break;
    out.push(next.value);
  }
  return out;
}

export interface EventStoreFixture {
  store: EventStore;
  /** Unique prefix so that suites can share a server. */
  prefix: string;
  dispose(): Promise<void>;
}

/**
 * The one contract every EventStore adapter passes (G1–G5, G10). Run against SQLite on every test run and
 * against EventStoreDB/KurrentDB when EVENTSTORE_URL is set.
 */
export function describeEventStoreContract(adapter: string, create: () => Promise<EventStoreFixture>): void {
  describe(`EventStore contract: ${adapter}`, () => {
    let fx: EventStoreFixture;
    let store: EventStore;
    const s = (name: string): string => `${name}-${fx.prefix}${randomUUID().slice(0, 8)}`;
    beforeEach(async () => {
      fx = await create();
      store = fx.store;
    });
    afterEach(async () => fx.dispose());

    it('appends with no_stream, then exact revisions, and reads the stream forwards', async () => {
      const id = s('order');
      const r1 = await store.append(id, [testEvent('A'), testEvent('B')], { expectedRevision: 'no_stream' });
      expect(r1.nextExpectedRevision).toBe(1);
      const r2 = await store.append(id, [testEvent('C')], { expectedRevision: 1 });
      expect(r2.nextExpectedRevision).toBe(2);
      expect(r2.position).toBeGreaterThan(r1.position);
      const events = await store.readStream(id);
      expect(events.map((e) => [e.type, e.revision])).toEqual([['A', 0], ['B', 1], ['C', 2]]);
      expect(events[0].metadata.actor).toEqual({ type: 'system', id: 'test' });
    });

    it('rejects a wrong expected revision with a typed ConcurrencyError and writes nothing', async () => {
      const id = s('order');
      await store.append(id, [testEvent('A')], { expectedRevision: 'no_stream' });
      await expect(store.append(id, [testEvent('B')], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(store.append(id, [testEvent('B')], { expectedRevision: 5 })).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(store.append(s('missing'), [testEvent('B')], { expectedRevision: 'stream_exists' })).rejects.toBeInstanceOf(ConcurrencyError);
      await store.append(id, [testEvent('B')], { expectedRevision: 'stream_exists' });
      await store.append(id, [testEvent('C')], { expectedRevision: 'any' });
      expect((await store.readStream(id)).map((e) => e.type)).toEqual(['A', 'B', 'C']);
    });

    it('is idempotent: a retry with the same event ids adds nothing (G3)', async () => {
      const id = s('order');
      const events = [testEvent('A'), testEvent('B')];
      const first = await store.append(id, events, { expectedRevision: 'no_stream' });
      const retry = await store.append(id, events, { expectedRevision: 'no_stream' });
      expect(retry.nextExpectedRevision).toBe(first.nextExpectedRevision);
      expect(await store.readStream(id)).toHaveLength(2);
      const next = [testEvent('C')];
      await store.append(id, next, { expectedRevision: 1 });
      await store.append(id, next, { expectedRevision: 1 });
      expect(await store.readStream(id)).toHaveLength(3);
      await expect(store.append(id, [events[0], testEvent('X')], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(store.append(id, [testEvent('Y')], { expectedRevision: 1 })).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await store.readStream(id)).toHaveLength(3);
    });

    it('appends atomically: a batch that fails part-way stores none of its events', async () => {
      const id = s('atomic');
      const dup = testEvent('A');
      await expect(store.append(id, [testEvent('X'), dup, { ...dup, type: 'B' }])).rejects.toThrow();
      expect(await store.readStream(id)).toEqual([]);
      const together = await Promise.allSettled([store.append(id, [testEvent('Y'), dup, dup]), store.append(s('other'), [testEvent('Z')])]);
      expect(together.map((t) => t.status)).toEqual(['rejected', 'fulfilled']);
      expect(await store.readStream(id)).toEqual([]);
    });

    it('reads a stream backwards from a revision, with paging', async () => {
      const id = s('page');
      await store.append(id, Array.from({ length: 10 }, (_, i) => testEvent(`E${i}`)));
      const back = await store.readStream(id, { direction: 'backwards', fromRevision: 7, maxCount: 3 });
      expect(back.map((e) => e.revision)).toEqual([7, 6, 5]);
      const fwd = await store.readStream(id, { fromRevision: 8, maxCount: 5 });
      expect(fwd.map((e) => e.revision)).toEqual([8, 9]);
      const last = await store.readStream(id, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
      expect(last[0].revision).toBe(9);
      expect(await store.readStream(s('absent'))).toEqual([]);
    });

    it('reads the global log after a position (exclusive), filtered by category or type, positions strictly increasing', async () => {
      const start = await store.headPosition();
      const cat = `cat${fx.prefix.replace(/[^a-z0-9]/gi, '')}${randomUUID().slice(0, 6)}`;
      await store.append(`${cat}-1`, [testEvent('Created'), testEvent('Renamed')]);
      await store.append(s('other'), [testEvent('Created')]);
      await store.append(`${cat}-2`, [testEvent('Created')]);
      const all = await store.readAll({ after: start });
      expect(all.length).toBeGreaterThanOrEqual(4);
      for (let i = 1; i < all.length; i++) expect(all[i].position).toBeGreaterThan(all[i - 1].position);
      const byCat = await store.readAll({ after: start, filter: { categories: [cat] } });
      expect(byCat.map((e) => `${e.streamId}:${e.type}`)).toEqual([`${cat}-1:Created`, `${cat}-1:Renamed`, `${cat}-2:Created`]);
      const byType = await store.readAll({ after: start, filter: { categories: [cat], types: ['Renamed'] } });
      expect(byType).toHaveLength(1);
      const afterFirst = await store.readAll({ after: byCat[0].position, filter: { categories: [cat] } });
      expect(afterFirst[0].id).toBe(byCat[1].id);
      const paged = await store.readAll({ after: start, maxCount: 2 });
      expect(paged).toHaveLength(2);
      const back = await store.readAll({ direction: 'backwards', maxCount: 1 });
      expect(back[0].position).toBe(await store.headPosition());
    });

    it('N concurrent appenders on one stream: exactly one winner per revision', async () => {
      const id = s('race');
      await store.append(id, [testEvent('Init')], { expectedRevision: 'no_stream' });
      const attempts = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => store.append(id, [testEvent(`W${i}`)], { expectedRevision: 0 })),
      );
      expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
      for (const a of attempts) if (a.status === 'rejected') expect(a.reason).toBeInstanceOf(ConcurrencyError);
      expect(await store.readStream(id)).toHaveLength(2);
    });

    it('catch-up subscription to the log turns live with no gap and no duplicate while appends race', async () => {
      const cat = `sub${randomUUID().replace(/-/g, '').slice(0, 10)}`;
      const start = await store.headPosition();
      for (let i = 0; i < 30; i++) await store.append(`${cat}-a`, [testEvent('Before', { i })]);
      const sub = store.subscribeToAll({ after: start, filter: { categories: [cat] } });
      const writer = (async () => {
        for (let i = 0; i < 30; i++) await store.append(`${cat}-b`, [testEvent('During', { i })]);
      })();
      const received = await take(sub, 60);
      await writer;
      await sub.caughtUp;
      await sub.close();
      expect(received).toHaveLength(60);
      expect(new Set(received.map((e) => e.id)).size).toBe(60);
      for (let i = 1; i < received.length; i++) expect(received[i].position).toBeGreaterThan(received[i - 1].position);
      expect(received.filter((e) => e.type === 'During').map((e) => (e.data as { i: number }).i)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    });

    it('a filtered subscription idles without spinning when the newest events do not match, then delivers a match', async () => {
      const cat = `flt${randomUUID().replace(/-/g, '').slice(0, 10)}`;
      await store.append(`${cat}-a`, [testEvent('Match')]);
      await store.append(s('noise'), [testEvent('Noise')]);
      const sub = store.subscribeToAll({ after: (await store.headPosition()) - 2, filter: { categories: [cat] } });
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      setTimeout(() => void store.append(`${cat}-b`, [testEvent('Later')]), 200);
      const received = await take(sub, 2);
      clearInterval(timer);
      await sub.close();
      expect(received.map((e) => e.type)).toEqual(['Match', 'Later']);
      expect(ticks).toBeGreaterThan(5);
    });

    it('catch-up subscription to one stream delivers history then live events in order', async () => {
      const id = s('live');
      await store.append(id, [testEvent('A'), testEvent('B')]);
      const sub = store.subscribeToStream(id, { afterRevision: 0 });
      setTimeout(() => void store.append(id, [testEvent('C')]), 50);
      const received = await take(sub, 2);
      await sub.close();
      expect(received.map((e) => e.type)).toEqual(['B', 'C']);
    });

    it('an append condition refuses the append once the fence stream has an event of its types after the revision', async () => {
      const fence = s('lease');
      const work = s('job');
      await store.append(fence, [testEvent('LeaseAcquired', { holder: 'a' })], { expectedRevision: 'no_stream' });
      const condition = { streamId: fence, afterRevision: 0, types: ['LeaseAcquired'] };
      await store.append(work, [testEvent('Step', { n: 1 })], { condition });
      // A renewal by the same holder is not a takeover: the fence holds.
      await store.append(fence, [testEvent('LeaseRenewed', { holder: 'a' })], { expectedRevision: 0 });
      await store.append(work, [testEvent('Step', { n: 2 })], { condition });
      await store.append(fence, [testEvent('LeaseAcquired', { holder: 'b' })], { expectedRevision: 1 });
      await expect(store.append(work, [testEvent('Step', { n: 3 })], { condition })).rejects.toBeInstanceOf(FencedError);
      expect((await store.readStream(work)).map((e) => (e.data as { n: number }).n)).toEqual([1, 2]);
      // The new holder's fence is its own acquisition.
      await store.append(work, [testEvent('Step', { n: 4 })], { condition: { ...condition, afterRevision: 2 } });
      expect((await store.readStream(work)).map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 4]);
    });

    it('waitForAppend resolves on a later append', async () => {
      const head = await store.headPosition();
      const waited = store.waitForAppend(head, 5000);
      await store.append(s('wake'), [testEvent('A')]);
      await expect(waited).resolves.toBeUndefined();
    });
  });
}
