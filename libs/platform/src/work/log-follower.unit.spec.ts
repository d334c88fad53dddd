import { fixedClock } from '../kernel/clock';
import type { AppendOptions, AppendResult, ReadStreamOptions, SubscribeToAllOptions, Subscription } from '../event-store/event-store.port';
import type { NewEvent, RecordedEvent } from '../event-store/events';
import { LogFollower, LogFollowerOptions, loggedFollowerFailures } from './log-follower';

/** A log held in memory: appends get the next position and reach the open subscriptions, as a live catch-up one does. */
class FakeStore {
  readonly log: RecordedEvent[] = [];
  readonly subscribedWith: SubscribeToAllOptions[] = [];
  /** The next appends to these streams fail, one per count. */
  readonly failing = new Map<string, number>();
  private readonly listeners = new Set<() => void>();

  headPosition = async (): Promise<number> => this.log.at(-1)?.position ?? 0;

  append = async (streamId: string, events: readonly NewEvent[], _options?: AppendOptions): Promise<AppendResult> => {
    const fails = this.failing.get(streamId) ?? 0;
    if (fails > 0) {
      this.failing.set(streamId, fails - 1);
      throw new Error(`store unreachable (${streamId})`);
    }
    for (const e of events) {
      if (this.log.some((x) => x.id === e.id)) throw new Error(`duplicate id ${e.id}`);
      const revision = this.log.filter((x) => x.streamId === streamId).length;
      this.log.push({ ...e, streamId, revision, position: (this.log.at(-1)?.position ?? 0) + 1, recordedAt: '2026-12-02T10:00:00.000Z' });
    }
    for (const l of this.listeners) l();
    const last = this.log.at(-1)!;
    return { nextExpectedRevision: last.revision, position: last.position };
  };

  readStream = async (streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> => {
    const all = this.log.filter((e) => e.streamId === streamId);
    const ordered = options?.direction === 'backwards' ? all.reverse() : all;
    return ordered.slice(0, options?.maxCount ?? ordered.length);
  };

  subscribeToAll = (options: SubscribeToAllOptions = {}): Subscription => {
    this.subscribedWith.push(options);
    const self = this;
    let closed = false;
    let notify: (() => void) | undefined;
    const wake = () => notify?.();
    this.listeners.add(wake);
    return {
      caughtUp: Promise.resolve(),
      close: async () => {
        closed = true;
        self.listeners.delete(wake);
        notify?.();
      },
      async *[Symbol.asyncIterator]() {
        let after = options.after ?? 0;
        for (;;) {
          if (closed) return;
          const next = self.log.find((e) => e.position > after && (!options.filter?.types || options.filter.types.includes(e.type)));
          if (next) {
            after = next.position;
            yield next;
          } else await new Promise<void>((r) => (notify = r));
        }
      },
    };
  };

  /** Appends one event of `type` to stream `s` and returns it. */
  async add(type: string, data: unknown = {}, stream = 's'): Promise<RecordedEvent> {
    const id = `id${this.log.length + 1}`;
    await this.append(stream, [{ id, type, data, metadata: { actor: { type: 'system', id: 't' }, correlationId: 'c', schemaVersion: 1 } }]);
    return this.log.find((e) => e.id === id)!;
  }

  ofStream(streamId: string): RecordedEvent[] {
    return this.log.filter((e) => e.streamId === streamId);
  }
}

const tick = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};
const at = '2026-12-02T10:00:00.000Z';

describe('LogFollower', () => {
  let store: FakeStore;
  let done: string[];
  let failures: string[];
  let happened: boolean;
  let startCalls: number;
  let followers: LogFollower[];

  /** A follower whose work appends `Done` to `out-<the event's key>` (so a failing store fails the work). */
  const make = (over: Partial<LogFollowerOptions> = {}): LogFollower => {
    const follower = new LogFollower({
      types: ['Wanted'],
      start: async () => (startCalls++, 2),
      work: async (e) => {
        const key = (e.data as { key: string }).key;
        await store.add('Done', { key }, `out-${key}`);
        done.push(key);
      },
      checkpoint: { stream: 'follower-log', type: 'FollowerAdvanced', actor: { type: 'system', id: 'follower' }, everyMs: 60_000, happened: () => happened },
      failed: {
        work: (e, error, retryMs) => failures.push(`work ${(e.data as { key: string }).key}: ${error.message}, retry in ${retryMs}`),
        checkpoint: (error) => failures.push(`checkpoint: ${error.message}`),
        stopped: (error) => failures.push(`stopped: ${error.message}`),
      },
      ...over,
    });
    followers.push(follower);
    return follower;
  };
  const start = (f: LogFollower) => f.start({ events: store, clock: fixedClock(at) });
  const checkpoints = () => store.ofStream('follower-log').map((e) => ({ type: e.type, data: e.data, actor: e.metadata.actor }));

  beforeEach(() => {
    store = new FakeStore();
    done = [];
    failures = [];
    happened = true;
    startCalls = 0;
    followers = [];
  });

  afterEach(async () => {
    jest.useRealTimers();
    for (const f of followers) await f.stop();
  });

  it("without a checkpoint, follows the owner's types from the owner's start position, in order", async () => {
    await store.add('Wanted', { key: 'before-start' });
    await store.add('Wanted', { key: 'at-start' });
    await store.add('Other', { key: 'not-followed' });
    const f = make();
    await start(f);
    expect(store.subscribedWith).toEqual([{ after: 2, filter: { types: ['Wanted'] }, shared: true }]);
    await store.add('Wanted', { key: 'b' });
    await tick();
    expect(done).toEqual(['b']);
    expect(f.reached).toBe(store.log.find((e) => (e.data as { key: string }).key === 'b')!.position);
  });

  it('retries the work while its append fails, with backoff, never skipping the event, and the next event waits for it', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    const f = make({ start: async () => 0 });
    await start(f);
    store.failing.set('out-a', 2);
    await store.add('Wanted', { key: 'a' });
    await store.add('Wanted', { key: 'b' });
    await tick();
    expect(failures).toEqual(['work a: store unreachable (out-a), retry in 500']);
    expect(done).toEqual([]);
    await jest.advanceTimersByTimeAsync(500);
    await tick();
    expect(failures).toEqual(['work a: store unreachable (out-a), retry in 500', 'work a: store unreachable (out-a), retry in 1000']);
    expect(done).toEqual([]);
    await jest.advanceTimersByTimeAsync(1000);
    await tick();
    expect(done).toEqual(['a', 'b']);
    expect(store.ofStream('out-a')).toHaveLength(1);
  });

  it('writes a checkpoint only after work and when the owner says something happened, at most every everyMs and at stop', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    happened = false;
    const f = make({ start: async () => 0 });
    await start(f);
    await f.stop();
    expect(checkpoints()).toEqual([]);

    const g = make({ start: async () => 0 });
    await start(g);
    const a = await store.add('Wanted', { key: 'a' });
    await tick();
    expect(done).toEqual(['a']);
    expect(checkpoints()).toEqual([]);
    happened = true;
    const b = await store.add('Wanted', { key: 'b' });
    await tick();
    // The first event after start was before anything happened; the interval counts from that attempt.
    expect(checkpoints()).toEqual([]);
    jest.advanceTimersByTime(60_000);
    const c = await store.add('Wanted', { key: 'c' });
    await tick();
    expect(checkpoints()).toEqual([{ type: 'FollowerAdvanced', data: { position: c.position, at }, actor: { type: 'system', id: 'follower' } }]);
    await store.add('Other');
    await g.stop();
    // Nothing followed since: no second checkpoint.
    expect(checkpoints()).toHaveLength(1);
    expect(g.checkpointed).toBe(c.position);
    expect([a.position, b.position].every((p) => p < c.position)).toBe(true);
  });

  it('a failed checkpoint append is reported and the follower goes on; the next one is written', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    const f = make({ start: async () => 0 });
    await start(f);
    store.failing.set('follower-log', 1);
    await store.add('Wanted', { key: 'a' });
    await tick();
    expect(failures).toEqual(['checkpoint: store unreachable (follower-log)']);
    jest.advanceTimersByTime(60_000);
    const b = await store.add('Wanted', { key: 'b' });
    await tick();
    expect(done).toEqual(['a', 'b']);
    expect(checkpoints().map((c) => c.data)).toEqual([{ position: b.position, at }]);
  });

  it('after a restart, starts from the last checkpoint (not the owner start) and does not redo what was checkpointed', async () => {
    await store.add('Other');
    await store.add('Other');
    const first = make();
    await start(first);
    await store.add('Wanted', { key: 'a' });
    const b = await store.add('Wanted', { key: 'b' });
    await tick();
    await first.stop();
    expect(checkpoints().at(-1)!.data).toEqual({ position: b.position, at });
    await store.add('Wanted', { key: 'c' });

    const second = make();
    await start(second);
    expect(startCalls).toBe(1);
    expect(store.subscribedWith.at(-1)).toMatchObject({ after: b.position });
    await tick();
    expect(done).toEqual(['a', 'b', 'c']);
  });

  it('stop cuts the retries short, and the event it cut short is not checkpointed: a restart does it again', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    const first = make({ start: async () => 0 });
    await start(first);
    const a = await store.add('Wanted', { key: 'a' });
    await tick();
    store.failing.set('out-b', 100);
    await store.add('Wanted', { key: 'b' });
    await tick();
    expect(failures).toEqual(['work b: store unreachable (out-b), retry in 500']);
    await first.stop();
    expect(checkpoints().at(-1)!.data).toEqual({ position: a.position, at });

    store.failing.clear();
    const second = make({ start: async () => 0 });
    await start(second);
    await tick();
    expect(done).toEqual(['a', 'b']);
  });

  it('a subscription that ends with an error is reported', async () => {
    const f = make({ start: async () => 0 });
    const broken = { ...store, readStream: store.readStream, subscribeToAll: (): Subscription => ({ caughtUp: Promise.resolve(), close: async () => undefined, [Symbol.asyncIterator]: async function* () {
      yield* [];
      throw new Error('connection lost');
    } }) };
    await f.start({ events: broken as never, clock: fixedClock(at) });
    await tick();
    expect(failures).toEqual(['stopped: connection lost']);
  });

  it('loggedFollowerFailures words the failures on the owner logger: retries and checkpoints as warnings, a stop as an error', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    const lines: string[] = [];
    const f = make({ start: async () => 0, failed: loggedFollowerFailures({ warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) }, 'test following', 'a restart reads again') });
    await start(f);
    store.failing.set('out-a', 1);
    store.failing.set('follower-log', 1);
    const a = await store.add('Wanted', { key: 'a' });
    await tick();
    await jest.advanceTimersByTimeAsync(500);
    await tick();
    expect(lines).toEqual([`warn test following of event ${a.id} failed, retrying in 500 ms: store unreachable (out-a)`, 'warn test following checkpoint failed (a restart reads again): store unreachable (follower-log)']);
    loggedFollowerFailures({ warn: () => undefined, error: (m) => lines.push(`error ${m}`) }, 'test following', '').stopped(new Error('connection lost'));
    expect(lines.at(-1)).toBe('error test following stopped: connection lost');
  });
});
