import { testEvent } from '../event-store/contract/event-store.contract';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { SqliteDatabase } from '../sqlite/sqlite-database';
import { StreamWriter } from './stream-writer';

/** A fold that keeps every event type in order, in an object (so freezing shows on nested values). */
const seen = { initialState: { types: [] as string[] }, evolve: (s: { types: string[] }, e: { type: string }) => ({ types: [...s.types, e.type] }) };
const other = { initialState: 0, evolve: (n: number) => n + 1 };

describe('StreamWriter.state (the folds it keeps)', () => {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  const store = new SqliteEventStore(sqlite);
  afterAll(() => sqlite.close());
  const writer = (max?: number) => new StreamWriter({ store, progress: { waitFor: async () => true }, timeoutMs: 0 }, max);

  it('sees every append, by this process or another writer on the same log, folding only what came after its last fold', async () => {
    const streams = writer();
    expect(await streams.state('kept-1', seen)).toEqual({ types: [] });
    await store.append('kept-1', [testEvent('A'), testEvent('B')]);
    expect(await streams.state('kept-1', seen)).toEqual({ types: ['A', 'B'] });
    const reads = jest.spyOn(store, 'readStream');
    // Another writer (here: straight to the store) appends; the next read folds it on top.
    await store.append('kept-1', [testEvent('C')]);
    expect(await streams.state('kept-1', seen)).toEqual({ types: ['A', 'B', 'C'] });
    expect(await streams.state('kept-1', seen)).toEqual({ types: ['A', 'B', 'C'] });
    expect(reads.mock.calls.map(([, options]) => options)).toEqual([{ fromRevision: 2 }, { fromRevision: 3 }]);
    reads.mockRestore();
    // Another fold of the same stream folds it whole, and does not take the first fold's state.
    expect(await streams.state('kept-1', other)).toBe(3);
    expect(await streams.state('kept-1', seen)).toEqual({ types: ['A', 'B', 'C'] });
  });

  it('hands out frozen states: a caller that changes one throws, and the next caller reads what the log says', async () => {
    const streams = writer();
    await store.append('kept-2', [testEvent('A')]);
    const state = await streams.state('kept-2', seen);
    expect(() => state.types.push('X')).toThrow(TypeError);
    expect(await streams.state('kept-2', seen)).toEqual({ types: ['A'] });
  });

  it('keeps at most its bound of streams, the least recently read dropped first', async () => {
    const streams = writer(2);
    for (const s of ['kept-3a', 'kept-3b', 'kept-3c']) await store.append(s, [testEvent('A')]);
    await streams.state('kept-3a', seen);
    await streams.state('kept-3b', seen);
    await streams.state('kept-3a', seen);
    await streams.state('kept-3c', seen);
    const reads = jest.spyOn(store, 'readStream');
    await streams.state('kept-3a', seen);
    await streams.state('kept-3b', seen);
    // 3a was kept (read since), 3b was dropped for 3c: read whole again.
    expect(reads.mock.calls.map(([stream, options]) => [stream, options])).toEqual([['kept-3a', { fromRevision: 1 }], ['kept-3b', {}]]);
    reads.mockRestore();
  });
});
