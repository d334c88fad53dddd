import { testEvent } from '../event-store/contract/event-store.contract';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { SqliteDatabase } from '../sqlite/sqlite-database';
import { loadStreamState } from './stream-decider';

/** A fold that keeps every event type in order, so a fold missing or repeating an event shows. */
const seen = { initialState: [] as string[], evolve: (s: string[], e: { type: string }) => [...s, e.type] };

describe('loadStreamState', () => {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  const store = new SqliteEventStore(sqlite);
  afterAll(() => sqlite.close());

  it('folds the whole stream, then from an earlier fold only what came after it, to the same state', async () => {
    const empty = await loadStreamState(store, 's-1', seen);
    expect(empty).toEqual({ state: [], revision: -1 });
    await store.append('s-1', [testEvent('A'), testEvent('B')]);
    const first = await loadStreamState(store, 's-1', seen, empty);
    expect(first).toEqual({ state: ['A', 'B'], revision: 1 });

    const reads = jest.spyOn(store, 'readStream');
    expect(await loadStreamState(store, 's-1', seen, first)).toBe(first);
    await store.append('s-1', [testEvent('C')]);
    const later = await loadStreamState(store, 's-1', seen, first);
    expect(later).toEqual({ state: ['A', 'B', 'C'], revision: 2 });
    expect(later).toEqual(await loadStreamState(store, 's-1', seen));
    // The checks against the earlier fold read past its revision only: they never decode the stream again.
    expect(reads.mock.calls.slice(0, 2).map(([, options]) => options)).toEqual([{ fromRevision: 2 }, { fromRevision: 2 }]);
  });
});
