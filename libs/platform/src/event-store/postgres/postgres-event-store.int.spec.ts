import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { havePostgres, testDatabase } from '../../../../../test/support/postgres';
import { DomainError } from '../../kernel/errors';
import { describeEventStoreContract, testEvent } from '../contract/event-store.contract';
import type { RecordedEvent } from '../events';
import { PostgresEventStore } from './postgres-event-store';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const cluster = require('../../../../../test/support/postgres-cluster') as {
  initCluster: (o?: object) => { dir: string };
  startCluster: (c: object, port: number) => string;
  stopCluster: (c: object, mode?: string) => void;
  removeCluster: (c: object) => void;
  freePort: () => number;
};

if (!havePostgres('PostgresEventStore')) {
  describe.skip('EventStore contract: PostgresEventStore', () => it('needs PostgreSQL', () => undefined));
} else {
  let url: string;
  beforeAll(async () => {
    url = (await testDatabase('es_contract'))!;
  });
  describeEventStoreContract('PostgresEventStore', async () => {
    const store = await PostgresEventStore.connect(url);
    return { store, prefix: `p${randomUUID().replace(/-/g, '').slice(0, 8)}`, dispose: () => store.close() };
  });

  describe('PostgresEventStore: commit order across writers', () => {
    it('a position taken by a transaction not yet committed holds every later append back: no reader sees n+1 before n', async () => {
      const store = await PostgresEventStore.connect(url);
      const raw = new Client({ connectionString: url });
      await raw.connect();
      try {
        const start = await store.headPosition();
        // A writer that has taken its position and not committed (a slow commit, a paused process).
        await raw.query('BEGIN');
        const held = await raw.query('SELECT es_append_group($1::json) AS r', [JSON.stringify([{ s: `slow-${randomUUID()}`, x: 'any', e: [{ i: randomUUID(), t: 'Slow', d: '{}', m: '{}' }] }])]);
        const slowPosition = Number(held.rows[0].r.outcomes[0].position);
        let fastDone = false;
        const fast = store.append(`fast-${randomUUID()}`, [testEvent('Fast')]).then((r) => ((fastDone = true), r));
        await new Promise((r) => setTimeout(r, 300));
        // The later append waits for the commit lock; a reader meanwhile sees neither.
        expect(fastDone).toBe(false);
        expect(await store.readAll({ after: start })).toEqual([]);
        await raw.query('COMMIT');
        const fastResult = await fast;
        expect(fastResult.position).toBe(slowPosition + 1);
        expect((await store.readAll({ after: start })).map((e) => e.type)).toEqual(['Slow', 'Fast']);
      } finally {
        await raw.end();
        await store.close();
      }
    });

    it('four writers (as four processes) racing: a live subscriber gets every acknowledged event once, in position order, none skipped', async () => {
      const writers = await Promise.all(Array.from({ length: 4 }, () => PostgresEventStore.connect(url, { poolSize: 4 })));
      const reader = await PostgresEventStore.connect(url);
      const cat = `race${randomUUID().replace(/-/g, '').slice(0, 10)}`;
      const sub = reader.subscribeToAll({ after: await reader.headPosition(), filter: { categories: [cat] } });
      const received: RecordedEvent[] = [];
      const reading = (async () => {
        for await (const e of sub) {
          received.push(e);
          if (received.length === 800) break;
        }
      })();
      const acknowledged: string[] = [];
      await Promise.all(
        writers.map(async (w, k) => {
          // Each writer keeps 10 appends in flight: its appends go in groups, the groups of all four interleave.
          await Promise.all(
            Array.from({ length: 10 }, async (_, lane) => {
              for (let i = 0; i < 20; i++) {
                const e = testEvent('Raced', { k, lane, i });
                await w.append(`${cat}-${k}.${lane}`, [e]);
                acknowledged.push(e.id);
              }
            }),
          );
        }),
      );
      const deadline = Date.now() + 15_000;
      while (received.length < 800 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await sub.close();
      await reading.catch(() => undefined);
      expect(received).toHaveLength(800);
      expect(new Set(received.map((e) => e.id))).toEqual(new Set(acknowledged));
      for (let i = 1; i < received.length; i++) expect(received[i].position).toBeGreaterThan(received[i - 1].position);
      for (const w of writers) await w.close();
      await reader.close();
    });
  });

  describe('PostgresEventStore: the shared tail', () => {
    it('shared reads (the projections) give exactly what the table gives, for each filter, while another process appends', async () => {
      const reader = await PostgresEventStore.connect(url);
      const writer = await PostgresEventStore.connect(url);
      const cat = `tail${randomUUID().replace(/-/g, '').slice(0, 8)}`;
      const start = await reader.headPosition();
      const filters = [{ types: ['A'] }, { types: ['B', 'C'] }, { categories: [cat] }, { categories: [`${cat}x`], types: ['A'] }];
      const cursors = filters.map(() => start);
      const got: string[][] = filters.map(() => []);
      for (let round = 0; round < 30; round++) {
        await Promise.all(Array.from({ length: 7 }, (_, i) => writer.append(`${i % 2 ? cat : `${cat}x`}-${round}`, [testEvent('ABC'[(round + i) % 3], { round, i })])));
        await reader.waitForAppend(cursors[0], 100);
        for (const [k, filter] of filters.entries()) {
          const page = await reader.readAll({ after: cursors[k], maxCount: 5, filter, shared: true });
          got[k].push(...page.map((e) => e.id));
          if (page.length) cursors[k] = page[page.length - 1].position;
        }
      }
      // A shared read is as fresh as what this process has heard of the log (a NOTIFY, its own appends, a head read, as
      // a waiting projection's wake-up gives it): the drain starts after one.
      await reader.headPosition();
      for (const [k, filter] of filters.entries()) {
        for (;;) {
          const page = await reader.readAll({ after: cursors[k], maxCount: 50, filter, shared: true });
          if (!page.length) break;
          got[k].push(...page.map((e) => e.id));
          cursors[k] = page[page.length - 1].position;
        }
        const truth = (await reader.readAll({ after: start, filter })).map((e) => e.id);
        expect(got[k]).toEqual(truth);
        expect(truth.length).toBeGreaterThan(0);
      }
      await reader.close();
      await writer.close();
    });
  });

  describe('PostgresEventStore: the shared tail with large events', () => {
    it('keeps every event of its range while holding about 16 MB at most: large events read once, in order, none skipped', async () => {
      const store = await PostgresEventStore.connect(url);
      const cat = `big${randomUUID().replace(/-/g, '').slice(0, 8)}`;
      const start = await store.headPosition();
      const text = 'x'.repeat(3 * 2 ** 20);
      for (let i = 0; i < 10; i++) await store.append(`${cat}-${i}`, [testEvent('Big', { i, text })]);
      await store.headPosition();
      const seen: number[] = [];
      for (let after = start; ; ) {
        const page = await store.readAll({ after, maxCount: 100, filter: { categories: [cat] }, shared: true });
        if (!page.length) break;
        seen.push(...page.map((e) => (e.data as { i: number }).i));
        after = page[page.length - 1].position;
      }
      expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const held = (store as unknown as { tailBytes: number }).tailBytes;
      expect(held).toBeLessThanOrEqual(16 * 2 ** 20 + 4 * 2 ** 20);
      await store.close();
    });
  });

  describe('PostgresEventStore: the server going away', () => {
    let own: { dir: string };
    let port: number;
    let ownUrl: string;
    beforeAll(() => {
      own = cluster.initCluster({ prefix: 'ars-es-outage-' });
      port = cluster.freePort();
      ownUrl = cluster.startCluster(own, port);
    });
    afterAll(() => cluster.removeCluster(own));

    it('answers unavailable while the server is down (no password in the message), then recovers by itself; a subscription resumes', async () => {
      const store = await PostgresEventStore.connect(ownUrl, { pollMs: 200 });
      const stream = `outage-${randomUUID()}`;
      await store.append(stream, [testEvent('Before')]);
      const sub = store.subscribeToStream(stream);
      const received: string[] = [];
      const reading = (async () => {
        for await (const e of sub) {
          received.push(e.type);
          if (received.length === 2) break;
        }
      })();
      cluster.stopCluster(own, 'fast');
      const failure = await store.append(stream, [testEvent('During')]).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(DomainError);
      expect((failure as DomainError).kind).toBe('unavailable');
      expect((failure as Error).message).not.toContain('ars-test-password');
      await expect(store.readStream(stream)).rejects.toBeInstanceOf(DomainError);
      cluster.startCluster(own, port);
      // The pool reconnects on the next query: the same store works again, nothing lost, the subscription goes on.
      let after: unknown;
      const deadline = Date.now() + 20_000;
      for (;;) {
        after = await store.append(stream, [testEvent('After')]).catch((e: unknown) => e);
        if (!(after instanceof Error) || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(after).toMatchObject({ nextExpectedRevision: 1 });
      const until = Date.now() + 10_000;
      while (received.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(received).toEqual(['Before', 'After']);
      await sub.close();
      await reading.catch(() => undefined);
      await store.close();
    });
  });
}
