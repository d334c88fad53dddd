import { testEvent } from '../event-store/contract/event-store.contract';
import type { RecordedEvent } from '../event-store/events';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import type { ReadOp } from '../read-store/read-store.port';
import { SqliteReadStore } from '../read-store/sqlite/sqlite-read-store';
import { SqliteDatabase } from '../sqlite/sqlite-database';
import { SqliteProjectionState } from '../sqlite/sqlite-projection-state';
import type { ProjectionSink, ReadModelProjection } from './projection';
import { ProjectionRuntime } from './projection-runtime';

/** Counts handled events per stream; `Poison` throws until `healed`. */
function counter(version = 1, healed = { value: true }): ReadModelProjection {
  return {
    name: 'counter',
    version,
    target: 'read',
    eventTypes: ['Added', 'Poison'],
    collections: [{ name: 'counts' }],
    apply(e: RecordedEvent): ReadOp[] {
      if (e.type === 'Poison' && !healed.value) throw new Error('cannot handle poison');
      if (e.revision === 0) return [{ op: 'put', collection: 'counts', doc: { id: e.streamId, n: 1, version } }];
      return [{ op: 'patch', collection: 'counts', id: e.streamId, inc: { n: 1 } }];
    },
  };
}

function setup() {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  const events = new SqliteEventStore(sqlite);
  const state = new SqliteProjectionState(sqlite);
  const reads = new SqliteReadStore(sqlite, state);
  return { sqlite, events, state, reads };
}

describe('ProjectionRuntime (SQLite)', () => {
  it('catches up over pages the store cut short at their byte bound, skipping none (a rebuild over large documents)', async () => {
    const { events, state, reads, sqlite } = setup();
    for (let i = 0; i < 30; i++) await events.append('a-1', [testEvent('Added')]);
    const tail = (await events.append('other-1', [testEvent('Ignored')])).position;
    // As if every event were past the bound: one event a page, whatever the count asked for.
    const readAll = events.readAll.bind(events);
    const asked: (number | undefined)[] = [];
    jest.spyOn(events, 'readAll').mockImplementation((o = {}) => (asked.push(o.maxBytes), readAll({ ...o, maxCount: 1 })));
    const runtime = new ProjectionRuntime(events, state, [{ projection: counter(), sink: reads as ProjectionSink<unknown> }]);
    await runtime.start();
    expect(await runtime.waitFor(tail, ['counter'], 5000)).toBe(true);
    expect((await reads.get('counts', 'a-1'))?.n).toBe(30);
    expect(asked.every((b) => b !== undefined && b > 0)).toBe(true);
    await runtime.stop();
    sqlite.close();
  });

  it('applies events, waits for positions, and reports lag', async () => {
    const { events, state, reads, sqlite } = setup();
    const runtime = new ProjectionRuntime(events, state, [{ projection: counter(), sink: reads as ProjectionSink<unknown> }]);
    await runtime.start();
    let last = 0;
    for (let i = 0; i < 5; i++) last = (await events.append('a-1', [testEvent('Added')])).position;
    await events.append('other-1', [testEvent('Ignored')]);
    expect(await runtime.waitFor(last, ['counter'], 2000)).toBe(true);
    expect((await reads.get('counts', 'a-1'))?.n).toBe(5);
    const head = await events.headPosition();
    expect(await runtime.waitFor(head, ['counter'], 2000)).toBe(true);
    expect((await runtime.lag())[0]).toMatchObject({ projection: 'counter', behind: 0, running: true });
    await runtime.stop();
    expect(await runtime.waitFor(head + 1, ['counter'], 50)).toBe(false);
    sqlite.close();
  });

  it('passes over appends of types it does not handle without reading the log, and still reports them processed', async () => {
    const { events, state, reads, sqlite } = setup();
    const runtime = new ProjectionRuntime(events, state, [{ projection: counter(), sink: reads as ProjectionSink<unknown> }]);
    await runtime.start();
    await runtime.waitFor(await events.headPosition(), ['counter'], 2000);
    const readAll = jest.spyOn(events, 'readAll');
    let last = 0;
    for (let i = 0; i < 20; i++) last = (await events.append('usage-1', [testEvent('Ignored')])).position;
    expect(await runtime.waitFor(last, ['counter'], 500)).toBe(true);
    expect(readAll).not.toHaveBeenCalled();
    expect((await runtime.lag())[0]).toMatchObject({ checkpoint: last, behind: 0 });
    const added = await events.append('a-1', [testEvent('Added')]);
    expect(await runtime.waitFor(added.position, ['counter'], 2000)).toBe(true);
    expect((await reads.get('counts', 'a-1'))?.n).toBe(1);
    await runtime.stop();
    sqlite.close();
  });

  it('parks a failing event as a dead letter, goes on, and replays it after a fix', async () => {
    const { events, state, reads, sqlite } = setup();
    const healed = { value: false };
    const runtime = new ProjectionRuntime(events, state, [{ projection: counter(1, healed), sink: reads as ProjectionSink<unknown> }], { retryDelaysMs: [1] });
    await runtime.start();
    await events.append('a-1', [testEvent('Added')]);
    const poison = await events.append('a-1', [testEvent('Poison')]);
    const after = await events.append('a-1', [testEvent('Added')]);
    expect(await runtime.waitFor(after.position, ['counter'], 2000)).toBe(true);
    expect((await reads.get('counts', 'a-1'))?.n).toBe(2);
    const letters = await runtime.deadLetters('counter');
    expect(letters).toEqual([expect.objectContaining({ position: poison.position, eventType: 'Poison', error: 'cannot handle poison' })]);
    healed.value = true;
    await runtime.replay('counter', poison.position);
    expect((await reads.get('counts', 'a-1'))?.n).toBe(3);
    expect(await runtime.deadLetters('counter')).toEqual([]);
    await runtime.stop();
    sqlite.close();
  });

  it('does not park events while the sink itself is down; it catches up when it is back', async () => {
    const { events, state, reads, sqlite } = setup();
    let down = true;
    const flaky: ProjectionSink<unknown> = {
      prepare: (p, g) => reads.prepare(p, g),
      activate: (p, g) => reads.activate(p, g),
      checkpoint: (p, g) => reads.checkpoint(p, g),
      applyBatch: async (...args) => {
        if (down) throw new Error('connection refused');
        return reads.applyBatch(...(args as Parameters<typeof reads.applyBatch>));
      },
    };
    const runtime = new ProjectionRuntime(events, state, [{ projection: counter(), sink: flaky }], { retryDelaysMs: [1, 1] });
    await runtime.start();
    const { position } = await events.append('a-1', [testEvent('Added')]);
    expect(await runtime.waitFor(position, ['counter'], 300)).toBe(false);
    expect(await runtime.deadLetters()).toEqual([]);
    down = false;
    expect(await runtime.waitFor(position, ['counter'], 3000)).toBe(true);
    expect(await reads.get('counts', 'a-1')).toBeDefined();
    await runtime.stop();
    sqlite.close();
  });

  it('rebuilds into a fresh generation with the same result, and rebuilds on start when the version changes', async () => {
    const { events, state, reads, sqlite } = setup();
    const make = (version: number) => counter(version);
    const v1 = new ProjectionRuntime(events, state, [{ projection: make(1), sink: reads as ProjectionSink<unknown> }]);
    await v1.start();
    let last = 0;
    for (let i = 0; i < 50; i++) last = (await events.append(`a-${i % 5}`, [testEvent('Added')])).position;
    await v1.waitFor(last, ['counter'], 2000);
    const before = await reads.find('counts', { limit: 10 });
    await v1.rebuild('counter');
    expect(await reads.find('counts', { limit: 10 })).toEqual(before);
    expect((await state.active('counter'))?.generation).toBe(2);
    await v1.stop();

    const v2 = new ProjectionRuntime(events, state, [{ projection: make(2), sink: reads as ProjectionSink<unknown> }]);
    await v2.start();
    expect(await state.active('counter')).toEqual({ generation: 3, version: 2 });
    const rebuilt = await reads.find<{ id: string; n: number; version: number }>('counts', { limit: 10 });
    expect(rebuilt.items.map((d) => [d.n, d.version])).toEqual(Array.from({ length: 5 }, () => [10, 2]));
    await v2.stop();
    sqlite.close();
  });

  it('works off a backlog in batches sized to the time budget, each one write, all in order', async () => {
    const { events, state, reads, sqlite } = setup();
    const batches: number[] = [];
    // A sink that holds the loop about 1 ms per event, as a large document's parts do.
    const slow: ProjectionSink<unknown> = Object.assign(Object.create(reads) as object, {
      applyBatch: (name: string, generation: number, batch: { ops: unknown[] }[], checkpoint: number) => {
        batches.push(batch.length);
        const until = performance.now() + batch.length;
        while (performance.now() < until);
        return reads.applyBatch(name, generation, batch as never, checkpoint);
      },
    }) as unknown as ProjectionSink<unknown>;
    for (let i = 0; i < 60; i++) events.appendSync('a-1', [testEvent('Added')]);
    const runtime = new ProjectionRuntime(events, state, [{ projection: counter(), sink: slow }], { batchBudgetMs: 5 });
    await runtime.start();
    expect(await runtime.waitFor(await events.headPosition(), ['counter'], 5000)).toBe(true);
    expect((await reads.get('counts', 'a-1'))?.n).toBe(60);
    // The first batch takes what is there; from then on no batch holds more than the budget's worth.
    expect(batches[0]).toBe(60);
    await events.append('a-1', [testEvent('Added'), testEvent('Added'), testEvent('Added'), testEvent('Added'), testEvent('Added'), testEvent('Added'), testEvent('Added')]);
    expect(await runtime.waitFor(await events.headPosition(), ['counter'], 5000)).toBe(true);
    expect(batches.length).toBeGreaterThan(2);
    expect(Math.max(...batches.slice(1))).toBeLessThanOrEqual(5);
    expect((await reads.get('counts', 'a-1'))?.n).toBe(67);
    await runtime.stop();
    sqlite.close();
  });
});
