import type { SubscribeToAllOptions, Subscription } from '../event-store/event-store.port';
import type { RecordedEvent } from '../event-store/events';
import { WokenRunner, WokenRunnerOptions, WokenWork } from './woken-runner';

/** A log of wake-ups held in memory: `append` delivers to the open subscription, as a live catch-up subscription does. */
class WakeLog {
  subscribedWith?: SubscribeToAllOptions;
  private readonly queue: RecordedEvent[] = [];
  private notify?: () => void;
  private closed = false;
  private failure?: Error;

  headPosition = async (): Promise<number> => 41;

  subscribeToAll = (options?: SubscribeToAllOptions): Subscription => {
    this.subscribedWith = options;
    const self = this;
    return {
      caughtUp: Promise.resolve(),
      close: async () => {
        self.closed = true;
        self.notify?.();
      },
      async *[Symbol.asyncIterator]() {
        for (;;) {
          if (self.failure) throw self.failure;
          const next = self.queue.shift();
          if (next) yield next;
          else if (self.closed) return;
          else await new Promise<void>((r) => (self.notify = r));
        }
      },
    };
  };

  append(type: string, data: unknown): void {
    this.queue.push({ type, data, streamId: 's', revision: 0, position: 42, eventId: 'e', metadata: {}, recordedAt: new Date() } as unknown as RecordedEvent);
    this.notify?.();
  }

  fail(error: Error): void {
    this.failure = error;
    this.notify?.();
  }
}

const tick = () => new Promise((r) => setImmediate(r));

/** A run that ends when the test says so. */
const gate = () => {
  let open!: () => void;
  let fail!: (e: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { done, open, fail };
};

describe('WokenRunner', () => {
  let log: WakeLog;
  let runs: string[];
  let gates: Map<string, ReturnType<typeof gate>>;
  let missed: WokenWork<string>[];
  let failures: string[];
  let runner: WokenRunner<string>;

  const make = (over: Partial<WokenRunnerOptions<string>> = {}) =>
    new WokenRunner<string>({
      types: ['WorkRequested'],
      woken: (e) => [{ key: (e.data as { key: string }).key, item: `woken ${(e.data as { key: string }).key}` }],
      sweep: async () => missed,
      run: (key, item) => {
        runs.push(`${key}: ${item}`);
        const g = gate();
        gates.set(key, g);
        return g.done;
      },
      failed: {
        wakeUps: (e) => failures.push(`wake-ups: ${e.message}`),
        sweep: (e) => failures.push(`sweep: ${e.message}`),
        work: (key, e) => failures.push(`${key}: ${e.message}`),
      },
      ...over,
    });

  beforeEach(() => {
    log = new WakeLog();
    runs = [];
    gates = new Map();
    missed = [];
    failures = [];
    runner = make();
  });

  afterEach(async () => {
    for (const g of gates.values()) g.open();
    await runner.stop();
  });

  it('follows the given event types from the head of the log and runs the work a wake-up offers', async () => {
    await runner.start({ events: log, sweepMs: 60_000 });
    expect(log.subscribedWith).toEqual({ after: 41, filter: { types: ['WorkRequested'] } });
    log.append('WorkRequested', { key: 'a' });
    await tick();
    expect(runs).toEqual(['a: woken a']);
  });

  it('an offer of a key already running is dropped: one run of a key at a time, the next offer after it ends runs again', async () => {
    runner.offer('a', 'first');
    runner.offer('a', 'second');
    runner.offer('b', 'other');
    expect(runs).toEqual(['a: first', 'b: other']);
    expect(runner.runningItem('a')).toBe('first');
    gates.get('a')!.open();
    await tick();
    expect(runner.runningItem('a')).toBeUndefined();
    runner.offer('a', 'third');
    expect(runs).toEqual(['a: first', 'b: other', 'a: third']);
  });

  it('the sweep runs at start and every sweepMs, picking up work no wake-up offered', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      missed = [{ key: 'left', item: 'by a dead holder' }];
      await runner.start({ events: log, sweepMs: 5_000 });
      await tick();
      expect(runs).toEqual(['left: by a dead holder']);
      missed = [{ key: 'left', item: 'again' }, { key: 'lost', item: 'wake-up lost' }];
      jest.advanceTimersByTime(4_999);
      await tick();
      expect(runs).toHaveLength(1);
      jest.advanceTimersByTime(1);
      await tick();
      expect(runs).toEqual(['left: by a dead holder', 'lost: wake-up lost']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('at most maxConcurrent runs at once; the rest wait in the order offered, each key once', async () => {
    await runner.start({ events: log, sweepMs: 60_000, maxConcurrent: 2 });
    for (const key of ['a', 'b', 'c', 'd', 'c']) runner.offer(key, key);
    expect(runs).toEqual(['a: a', 'b: b']);
    gates.get('b')!.open();
    await tick();
    expect(runs).toEqual(['a: a', 'b: b', 'c: c']);
    gates.get('a')!.open();
    await tick();
    expect(runs).toEqual(['a: a', 'b: b', 'c: c', 'd: d']);
  });

  it('stop drains: no new wake-up, sweep or offer starts work, the runs in progress are awaited', async () => {
    await runner.start({ events: log, sweepMs: 60_000, maxConcurrent: 1 });
    runner.offer('a', 'in progress');
    runner.offer('b', 'waiting');
    let stopped = false;
    const stopping = runner.stop().then(() => (stopped = true));
    expect(runner.stopping).toBe(true);
    expect(runner.signal.aborted).toBe(true);
    await tick();
    expect(stopped).toBe(false);
    runner.offer('c', 'offered late');
    missed = [{ key: 'd', item: 'swept late' }];
    await runner.sweep();
    log.append('WorkRequested', { key: 'e' });
    gates.get('a')!.open();
    await stopping;
    expect(stopped).toBe(true);
    expect(runs).toEqual(['a: in progress']);
  });

  it('a run that fails is reported with its key and the runner goes on', async () => {
    await runner.start({ events: log, sweepMs: 60_000, maxConcurrent: 1 });
    runner.offer('a', 'fails');
    runner.offer('b', 'next');
    gates.get('a')!.fail(new Error('boom'));
    await tick();
    expect(failures).toEqual(['a: boom']);
    expect(runs).toEqual(['a: fails', 'b: next']);
    gates.get('b')!.open();
    await runner.idle();
    runner.offer('a', 'again');
    expect(runs).toEqual(['a: fails', 'b: next', 'a: again']);
  });

  it('a run that throws before returning a promise is reported like a rejection', async () => {
    runner = make({
      run: (key) => {
        runs.push(key);
        if (key === 'bad') throw new Error('thrown at once');
        return Promise.resolve();
      },
    });
    runner.offer('bad', '');
    runner.offer('good', '');
    await runner.idle();
    expect(failures).toEqual(['bad: thrown at once']);
    expect(runs).toEqual(['bad', 'good']);
  });

  it('a failed sweep is reported and the next one still runs; a broken subscription is reported', async () => {
    let calls = 0;
    runner = make({
      sweep: async () => {
        calls++;
        if (calls === 1) throw new Error('read model down');
        return [{ key: 'x', item: 'found' }];
      },
    });
    await runner.start({ events: log, sweepMs: 60_000 });
    await tick();
    expect(failures).toEqual(['sweep: read model down']);
    await runner.sweep();
    expect(runs).toEqual(['x: found']);
    log.fail(new Error('connection lost'));
    await tick();
    expect(failures).toEqual(['sweep: read model down', 'wake-ups: connection lost']);
  });

  it('idle waits for waiting work too', async () => {
    runner = make({ run: async (key) => void runs.push(key) });
    await runner.start({ events: log, sweepMs: 60_000, maxConcurrent: 1 });
    runner.offer('a', '');
    runner.offer('b', '');
    await runner.idle();
    expect(runs).toEqual(['a', 'b']);
  });
});
