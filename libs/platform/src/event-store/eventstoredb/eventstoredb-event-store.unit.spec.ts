import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { StreamNotFoundError, WrongExpectedVersionError } from '@eventstore/db-client';
import type { AllStreamResolvedEvent, AppendExpectedRevision, EventData, Filter, Position, ReadPosition, ReadRevision } from '@eventstore/db-client';
import { testEvent } from '../contract/event-store.contract';
import { ConcurrencyError, ExpectedRevision } from '../event-store.port';
import type { RecordedEvent } from '../events';
import { EsdbClientLike, EventStoreDbEventStore } from './eventstoredb-event-store';

/** A stored event as the v6 client yields it: bigint revision, {commit, prepare} position, Date created. */
function stored(streamId: string, revision: number | bigint, type: string, position: number | bigint, prepare = position): AllStreamResolvedEvent {
  const id = randomUUID();
  return {
    event: {
      streamId,
      id,
      type,
      revision: BigInt(revision),
      data: { n: Number(position) },
      metadata: { actor: { type: 'system', id: 'test' }, correlationId: id, schemaVersion: 1 },
      isJson: true,
      created: new Date(Date.UTC(2024, 0, 1, 0, 0, Number(revision) % 60)),
      position: { commit: BigInt(position), prepare: BigInt(prepare) },
    },
  } as AllStreamResolvedEvent;
}

class FakeSubscription extends EventEmitter {
  unsubscribed = 0;
  async unsubscribe(): Promise<void> {
    this.unsubscribed += 1;
  }
}

const commitOf = (p: ReadPosition): bigint | 'start' | 'end' => (typeof p === 'string' ? p : p.commit);

/**
 * Behaves like the server where it matters to the adapter: `$all` reads include the event at `fromPosition`
 * in both directions (the adapter must make them exclusive), and an absent stream throws StreamNotFoundError.
 */
class FakeClient implements EsdbClientLike {
  log: AllStreamResolvedEvent[] = [];
  appends: { streamName: string; events: EventData[]; options: { expectedRevision: AppendExpectedRevision } }[] = [];
  appendReply: () => Promise<{ nextExpectedRevision: bigint; position?: Position }> = async () => ({ nextExpectedRevision: 0n, position: { commit: 10n, prepare: 10n } });
  readAllCalls: { fromPosition: ReadPosition; direction: string; maxCount: number }[] = [];
  readStreamCalls: { streamName: string; options: { fromRevision: ReadRevision; direction: string; maxCount: number } }[] = [];
  readStreamError?: Error;
  allSubs: { options: { fromPosition: ReadPosition; filter: Filter }; sub: FakeSubscription }[] = [];
  streamSubs: { streamName: string; options: { fromRevision: ReadRevision }; sub: FakeSubscription }[] = [];
  disposed = false;

  async appendToStream(streamName: string, events: EventData[], options: { expectedRevision: AppendExpectedRevision }) {
    this.appends.push({ streamName, events, options });
    return this.appendReply();
  }

  async *readStream(streamName: string, options: { fromRevision: ReadRevision; direction: 'forwards' | 'backwards'; maxCount: number }) {
    this.readStreamCalls.push({ streamName, options });
    if (this.readStreamError) throw this.readStreamError;
    let events = this.log.filter((r) => r.event!.streamId === streamName);
    if (events.length === 0) throw new StreamNotFoundError(undefined, streamName);
    const from = options.fromRevision;
    if (options.direction === 'backwards') {
      events = events.reverse().filter((r) => from === 'end' || from === 'start' || r.event!.revision <= from);
    } else {
      events = events.filter((r) => from === 'start' || from === 'end' || r.event!.revision >= from);
    }
    yield* events.slice(0, options.maxCount);
  }

  async *readAll(options: { fromPosition: ReadPosition; direction: 'forwards' | 'backwards'; maxCount: number }) {
    this.readAllCalls.push(options);
    const from = commitOf(options.fromPosition);
    const events =
      options.direction === 'backwards'
        ? [...this.log].reverse().filter((r) => from === 'end' || (from !== 'start' && r.event!.position.commit <= from))
        : this.log.filter((r) => from === 'start' || (from !== 'end' && r.event!.position.commit >= from));
    yield* events.slice(0, options.maxCount);
  }

  subscribeToAll(options: { fromPosition: ReadPosition; filter: Filter }) {
    const sub = new FakeSubscription();
    this.allSubs.push({ options, sub });
    return sub;
  }

  subscribeToStream(streamName: string, options: { fromRevision: ReadRevision }) {
    const sub = new FakeSubscription();
    this.streamSubs.push({ streamName, options, sub });
    return sub;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const view = (events: RecordedEvent[]): string[] => events.map((e) => `${e.streamId}:${e.type}@${e.position}`);

describe('EventStoreDbEventStore at the client boundary', () => {
  let fake: FakeClient;
  let store: EventStoreDbEventStore;
  beforeEach(() => {
    fake = new FakeClient();
    store = new EventStoreDbEventStore(fake);
  });

  describe('append', () => {
    it.each<[ExpectedRevision | undefined, AppendExpectedRevision]>([
      [undefined, 'any'],
      ['any', 'any'],
      ['no_stream', 'no_stream'],
      ['stream_exists', 'stream_exists'],
      [0, 0n],
      [41, 41n],
    ])('maps expectedRevision %p to %p and passes the event through as JSON with its own id', async (ours, theirs) => {
      const event = testEvent('OrderPlaced', { total: 3 });
      await store.append('order-1', [event], ours === undefined ? {} : { expectedRevision: ours });
      expect(fake.appends).toHaveLength(1);
      const [call] = fake.appends;
      expect(call.streamName).toBe('order-1');
      expect(call.options.expectedRevision).toBe(theirs);
      expect(call.events).toEqual([
        { id: event.id, type: 'OrderPlaced', contentType: 'application/json', data: { total: 3 }, metadata: event.metadata },
      ]);
    });

    it('returns numbers: the next revision and the reported position of a single event', async () => {
      fake.appendReply = async () => ({ nextExpectedRevision: 7n, position: { commit: 1234n, prepare: 1234n } });
      await expect(store.append('order-1', [testEvent()])).resolves.toEqual({ nextExpectedRevision: 7, position: 1234 });
      expect(fake.readStreamCalls).toHaveLength(0);
    });

    it('reads back the position of the last event of a batch instead of trusting the reported one', async () => {
      fake.log = [stored('order-1', 0, 'A', 500), stored('order-1', 1, 'B', 600)];
      fake.appendReply = async () => ({ nextExpectedRevision: 1n, position: { commit: 999n, prepare: 500n } });
      await expect(store.append('order-1', [testEvent('A'), testEvent('B')])).resolves.toEqual({ nextExpectedRevision: 1, position: 600 });
      expect(fake.readStreamCalls[0].options.fromRevision).toBe(1n);
    });

    it('translates WrongExpectedVersionError into ConcurrencyError with stream, our expectation and the actual revision', async () => {
      fake.appendReply = async () => {
        throw new WrongExpectedVersionError(undefined, { streamName: 'order-1', expected: 'no_stream', current: 3n });
      };
      const error = await store.append('order-1', [testEvent()], { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect(error).toMatchObject({ streamId: 'order-1', expected: 'no_stream', actual: 3 });

      fake.appendReply = async () => {
        throw new WrongExpectedVersionError(undefined, { streamName: 'order-2', expected: 'stream_exists', current: 'no_stream' });
      };
      await expect(store.append('order-2', [testEvent()], { expectedRevision: 'stream_exists' })).rejects.toMatchObject({
        streamId: 'order-2',
        expected: 'stream_exists',
        actual: 'no_stream',
      });
    });

    it('lets other client errors through unchanged', async () => {
      const boom = new Error('unavailable');
      fake.appendReply = async () => {
        throw boom;
      };
      await expect(store.append('order-1', [testEvent()])).rejects.toBe(boom);
    });

    it('refuses non-UUID event ids before calling the server (the server would mint its own and break idempotency)', async () => {
      await expect(store.append('order-1', [testEvent('A', {}, 'cmd-42:0')])).rejects.toThrow(/UUID/);
      expect(fake.appends).toHaveLength(0);
    });

    it('refuses a revision that is not a safe integer rather than rounding it', async () => {
      fake.appendReply = async () => ({ nextExpectedRevision: 2n ** 53n + 1n, position: { commit: 1n, prepare: 1n } });
      await expect(store.append('order-1', [testEvent()])).rejects.toThrow(/not a safe JS integer/);
    });
  });

  describe('readStream', () => {
    it('reads an absent stream as empty', async () => {
      await expect(store.readStream('order-missing')).resolves.toEqual([]);
    });

    it('lets other read errors through', async () => {
      fake.readStreamError = new Error('access denied');
      await expect(store.readStream('order-1')).rejects.toThrow('access denied');
    });

    it('maps revision, direction and count, converts bigints and dates, and skips system events', async () => {
      fake.log = [stored('order-1', 0, 'A', 100), stored('order-1', 1, '$>', 150), stored('order-1', 2, 'C', 200)];
      const events = await store.readStream('order-1', { direction: 'backwards', fromRevision: 2, maxCount: 3 });
      expect(fake.readStreamCalls[0].options).toEqual({ fromRevision: 2n, direction: 'backwards', maxCount: 3 });
      expect(events.map((e) => [e.type, e.revision, e.position])).toEqual([['C', 2, 200], ['A', 0, 100]]);
      expect(events[0].recordedAt).toBe('2024-01-01T00:00:02.000Z');
      expect(events[0].metadata.actor).toEqual({ type: 'system', id: 'test' });
      await store.readStream('order-1', { direction: 'backwards' });
      await store.readStream('order-1');
      expect(fake.readStreamCalls.slice(1).map((c) => c.options.fromRevision)).toEqual(['end', 'start']);
    });

    it('throws a clear error for a revision beyond Number.MAX_SAFE_INTEGER', async () => {
      fake.log = [stored('order-1', 2n ** 60n, 'A', 100)];
      await expect(store.readStream('order-1')).rejects.toThrow(/revision .* not a safe JS integer/);
    });
  });

  describe('readAll', () => {
    beforeEach(() => {
      fake.log = [
        stored('cat-1', 0, 'Created', 100),
        stored('catalog-1', 0, 'Created', 200),
        stored('$ce-cat', 0, '$>', 250),
        stored('cat-2', 0, 'Renamed', 300),
        stored('$stats-node', 0, '$statsCollected', 350),
        stored('cat-2', 1, 'RenamedTwice', 400),
        stored('other-1', 0, 'Renamed', 500),
      ];
    });

    it('is exclusive of `after` although the server includes the event at that position', async () => {
      expect(view(await store.readAll({ after: 300 }))).toEqual(['cat-2:RenamedTwice@400', 'other-1:Renamed@500']);
      expect(fake.readAllCalls[0].fromPosition).toEqual({ commit: 300n, prepare: 300n });
      await store.readAll();
      expect(fake.readAllCalls[1].fromPosition).toBe('start');
    });

    it('is exclusive of `before` when reading backwards', async () => {
      expect(view(await store.readAll({ direction: 'backwards', before: 300, maxCount: 5 }))).toEqual(['catalog-1:Created@200', 'cat-1:Created@100']);
      expect(fake.readAllCalls[0]).toMatchObject({ fromPosition: { commit: 300n, prepare: 300n }, direction: 'backwards' });
    });

    it('stops after the visible event that brings the data read to maxBytes, always returning one', async () => {
      // Each event's data and metadata are ~110 characters of JSON.
      expect(view(await store.readAll({ maxBytes: 1 }))).toEqual(['cat-1:Created@100']);
      expect(view(await store.readAll({ maxBytes: 150 }))).toEqual(['cat-1:Created@100', 'catalog-1:Created@200']);
      expect(view(await store.readAll({ after: 200, maxBytes: 150 }))).toEqual(['cat-2:Renamed@300', 'cat-2:RenamedTwice@400']);
      expect(view(await store.readAll({ maxBytes: 100_000 }))).toHaveLength(5);
    });

    it('skips system events and counts only visible ones against maxCount', async () => {
      expect(view(await store.readAll({ after: 200, maxCount: 2 }))).toEqual(['cat-2:Renamed@300', 'cat-2:RenamedTwice@400']);
    });

    it('filters by exact category and exact type, not by prefix', async () => {
      expect(view(await store.readAll({ filter: { categories: ['cat'] } }))).toEqual([
        'cat-1:Created@100',
        'cat-2:Renamed@300',
        'cat-2:RenamedTwice@400',
      ]);
      expect(view(await store.readAll({ filter: { categories: ['cat'], types: ['Renamed'] } }))).toEqual(['cat-2:Renamed@300']);
      expect(view(await store.readAll({ filter: { types: ['Renamed'] } }))).toEqual(['cat-2:Renamed@300', 'other-1:Renamed@500']);
    });

    it('pages through the log without duplicating the event at a page boundary', async () => {
      // each page starts at the last event of the previous one, which the server returns again
      fake.log = Array.from({ length: 1203 }, (_, i) => stored(`order-${i}`, 0, 'A', (i + 1) * 10));
      const all = await store.readAll();
      expect(all).toHaveLength(1203);
      expect(new Set(all.map((e) => e.position)).size).toBe(1203);
      expect(fake.readAllCalls.map((c) => commitOf(c.fromPosition))).toEqual(['start', 5000n, 9990n]);
    });

    it('orders by the commit position, whatever the server reports as prepare', async () => {
      fake.log = [stored('order-1', 0, 'A', 800), stored('order-1', 1, 'B', 900, 800)];
      expect(view(await store.readAll({ after: 800 }))).toEqual(['order-1:B@900']);
    });

    it('refuses positions it cannot represent exactly, or that are missing', async () => {
      fake.log = [stored('order-1', 0, 'A', 2n ** 60n)];
      await expect(store.readAll()).rejects.toThrow(/commit position .* not a safe JS integer/);
      fake.log = [stored('order-1', 0, 'A', 2n ** 64n - 1n)];
      await expect(store.readAll()).rejects.toThrow(/without a position/);
    });

    it('headPosition is the last visible event, 0 on an empty log', async () => {
      fake.log.push(stored('$stats-node', 1, '$statsCollected', 600));
      await expect(store.headPosition()).resolves.toBe(500);
      fake.log = [stored('$stats-node', 0, '$statsCollected', 600)];
      await expect(store.headPosition()).resolves.toBe(0);
    });
  });

  describe('waitForAppend', () => {
    it('resolves on the first visible event after the position, subscribing from it without system events', async () => {
      let resolved = false;
      const waited = store.waitForAppend(300, 5000).then(() => (resolved = true));
      expect(fake.allSubs).toHaveLength(1);
      const { options, sub } = fake.allSubs[0];
      expect(options.fromPosition).toEqual({ commit: 300n, prepare: 300n });
      expect(options.filter).toMatchObject({ filterOn: 'eventType', regex: '^[^$].*' });
      sub.emit('data', stored('cat-1', 0, 'A', 300));
      sub.emit('data', stored('$ce-cat', 0, '$>', 350));
      await new Promise((r) => setTimeout(r, 10));
      expect(resolved).toBe(false);
      sub.emit('data', stored('cat-1', 1, 'B', 400));
      await waited;
      expect(sub.unsubscribed).toBe(1);
    });

    it('resolves on timeout and still unsubscribes', async () => {
      await store.waitForAppend(0, 20);
      expect(fake.allSubs[0].options.fromPosition).toBe('start');
      expect(fake.allSubs[0].sub.unsubscribed).toBe(1);
    });
  });

  describe('subscriptions', () => {
    it('subscribeToAll delivers matching history, then wakes on a server-filtered subscription (category → "cat-" prefix)', async () => {
      fake.log = [stored('cat-1', 0, 'A', 100), stored('other-1', 0, 'X', 200), stored('catalog-1', 0, 'Y', 300)];
      const sub = store.subscribeToAll({ filter: { categories: ['cat'] } });
      const it = sub[Symbol.asyncIterator]();
      expect(view([(await it.next()).value])).toEqual(['cat-1:A@100']);
      const next = it.next();
      await sub.caughtUp;
      await until(() => fake.allSubs.length === 1);
      const wake = fake.allSubs[0];
      expect(wake.options.filter).toMatchObject({ filterOn: 'streamName', prefixes: ['cat-'] });
      // resumes after what was already scanned (300), not after the last match (100)
      expect(wake.options.fromPosition).toEqual({ commit: 300n, prepare: 300n });
      const live = stored('cat-2', 0, 'B', 400);
      fake.log.push(live);
      wake.sub.emit('data', live);
      expect(view([(await next).value])).toEqual(['cat-2:B@400']);
      expect(wake.sub.unsubscribed).toBe(1);
      await sub.close();
    });

    it('a type-only filter wakes on an eventType prefix filter', async () => {
      const sub = store.subscribeToAll({ after: 50, filter: { types: ['Renamed'] } });
      const next = sub[Symbol.asyncIterator]().next();
      await until(() => fake.allSubs.length === 1);
      expect(fake.allSubs[0].options.filter).toMatchObject({ filterOn: 'eventType', prefixes: ['Renamed'] });
      expect(fake.allSubs[0].options.fromPosition).toEqual({ commit: 50n, prepare: 50n });
      await sub.close();
      fake.allSubs[0].sub.emit('data', stored('cat-1', 0, 'Renamed', 60));
      await expect(next).resolves.toMatchObject({ done: true });
    });

    it('subscribeToStream reads after the given revision, then wakes on a stream subscription', async () => {
      fake.log = [stored('order-1', 0, 'A', 100), stored('order-1', 1, 'B', 200)];
      const sub = store.subscribeToStream('order-1', { afterRevision: 0 });
      const it = sub[Symbol.asyncIterator]();
      expect((await it.next()).value.type).toBe('B');
      expect(fake.readStreamCalls.some((c) => c.options.fromRevision === 1n && c.options.direction === 'forwards')).toBe(true);
      const next = it.next();
      await until(() => fake.streamSubs.length === 1);
      expect(fake.streamSubs[0]).toMatchObject({ streamName: 'order-1', options: { fromRevision: 1n } });
      const live = stored('order-1', 2, 'C', 300);
      fake.log.push(live);
      fake.streamSubs[0].sub.emit('data', live);
      expect((await next).value).toMatchObject({ type: 'C', revision: 2, position: 300 });
      await sub.close();
    });
  });

  it('ping reads one event backwards from the end; close disposes the client', async () => {
    await store.ping();
    expect(fake.readAllCalls).toEqual([{ fromPosition: 'end', direction: 'backwards', maxCount: 1 }]);
    await store.close();
    expect(fake.disposed).toBe(true);
  });
});
