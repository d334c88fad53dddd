import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testEvent } from '../event-store/contract/event-store.contract';
import type { RecordedEvent } from '../event-store/events';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import type { ReadOp } from '../read-store/read-store.port';
import { SqliteReadStore } from '../read-store/sqlite/sqlite-read-store';
import { SqliteDatabase } from '../sqlite/sqlite-database';
import { SqliteProjectionState } from '../sqlite/sqlite-projection-state';
import type { ProjectionSink, ReadModelProjection, SharedTransaction } from './projection';
import { ProjectionRuntime } from './projection-runtime';

/** Counts `Added` (and `Poison`) events per stream into its own collection. */
function counter(name: string): ReadModelProjection {
  return {
    name,
    version: 1,
    target: 'read',
    eventTypes: ['Added', 'Poison'],
    collections: [{ name }],
    apply: (e: RecordedEvent): ReadOp[] => [e.revision === 0 ? { op: 'put', collection: name, doc: { id: e.streamId, n: 1 } } : { op: 'patch', collection: name, id: e.streamId, inc: { n: 1 } }],
  };
}

/**
 * The read store, its batches written through `shared`; `fails` may throw inside the batch's own transaction, after
 * its writes (so they roll back), as a constraint or I/O error would.
 */
function sinkOf(sqlite: SqliteDatabase, reads: SqliteReadStore, shared: SharedTransaction, fails: (batch: readonly { position: number }[]) => void = () => undefined): ProjectionSink<unknown> {
  return {
    prepare: (p, g) => reads.prepare(p, g),
    activate: (p, g) => reads.activate(p, g),
    checkpoint: (p, g) => reads.checkpoint(p, g),
    sharedTransaction: shared,
    applyBatch: async (name, generation, batch, checkpoint, options) => {
      let written: Promise<void> = Promise.resolve();
      sqlite.transaction(() => {
        written = reads.applyBatch(name, generation, batch as never, checkpoint, options);
        fails(batch);
      }, 'derived');
      await written;
    },
  };
}

function open(path: string) {
  const sqlite = new SqliteDatabase({ path });
  const events = new SqliteEventStore(sqlite);
  const state = new SqliteProjectionState(sqlite);
  return { sqlite, events, state, reads: new SqliteReadStore(sqlite, state) };
}

const count = async (reads: SqliteReadStore, collection: string, id: string) => (await reads.get<{ id: string; n: number }>(collection, id))?.n;

describe('projections sharing a transaction (SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ars-shared-batches-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('applies the batches of projections woken by one append in one commit, each with its checkpoint', async () => {
    const { sqlite, events, state, reads } = open(':memory:');
    const commits = jest.spyOn(sqlite.derivedTransactions, 'run');
    const runtime = new ProjectionRuntime(events, state, ['one', 'two', 'three'].map((n) => ({ projection: counter(n), sink: reads as ProjectionSink<unknown> })));
    await runtime.start();
    await runtime.waitFor(await events.headPosition(), runtime.names(), 2000);
    commits.mockClear();
    const { position } = await events.append('a-1', [testEvent('Added'), testEvent('Added')]);
    expect(await runtime.waitFor(position, runtime.names(), 2000)).toBe(true);
    expect(commits).toHaveBeenCalledTimes(1);
    for (const n of ['one', 'two', 'three']) {
      expect(await count(reads, n, 'a-1')).toBe(2);
      expect(await state.load(n, 1)).toBe(position);
    }
    await runtime.stop();
    sqlite.close();
  });

  it('loses nothing when the process dies before that commit: both projections replay from their checkpoints', async () => {
    const path = join(dir, 'crash.db');
    const first = open(path);
    let dying = false;
    // What the process got through before dying: both batches written in the transaction, which never commits.
    const crashing: SharedTransaction = {
      run: (work) =>
        first.sqlite.transaction(() => {
          work();
          if (dying) throw new Error('killed before COMMIT');
        }, 'derived'),
    };
    // Once dead, nothing else reaches the file either (the runtime's event-by-event retry writes outside `run`).
    const dead = () => {
      if (dying && !first.sqlite.db.inTransaction) throw new Error('the process is gone');
    };
    const sinks = ['one', 'two'].map((n) => ({ projection: counter(n), sink: sinkOf(first.sqlite, first.reads, crashing) }));
    sinks.forEach((s) => {
      const apply = s.sink.applyBatch.bind(s.sink);
      s.sink.applyBatch = async (...args) => (dead(), apply(...args));
    });
    const runtime = new ProjectionRuntime(first.events, first.state, sinks, { retryDelaysMs: [] });
    await runtime.start();
    const before = (await first.events.append('a-1', [testEvent('Added')])).position;
    expect(await runtime.waitFor(before, runtime.names(), 2000)).toBe(true);
    dying = true;
    const head = (await first.events.append('a-1', [testEvent('Added'), testEvent('Added')])).position;
    expect(await runtime.waitFor(head, runtime.names(), 300)).toBe(false);
    await runtime.stop();
    // Neither projection moved alone: the checkpoints stayed with the writes they describe.
    for (const n of ['one', 'two']) {
      expect(await first.state.load(n, 1)).toBe(before);
      expect(await count(first.reads, n, 'a-1')).toBe(1);
    }
    first.sqlite.close();

    const again = open(path);
    const restarted = new ProjectionRuntime(again.events, again.state, ['one', 'two'].map((n) => ({ projection: counter(n), sink: again.reads as ProjectionSink<unknown> })));
    await restarted.start();
    expect(await restarted.waitFor(head, restarted.names(), 2000)).toBe(true);
    for (const n of ['one', 'two']) expect(await count(again.reads, n, 'a-1')).toBe(3);
    await restarted.stop();
    again.sqlite.close();
  });

  it('rolls back only the batch that fails: the other projection commits, and the failing event is parked', async () => {
    const { sqlite, events, state, reads } = open(':memory:');
    let poison = Infinity;
    const failing = sinkOf(sqlite, reads, sqlite.derivedTransactions, (batch) => {
      if (batch.some((b) => b.position === poison)) throw new Error('the sink cannot write this event');
    });
    const runtime = new ProjectionRuntime(
      events,
      state,
      [
        { projection: counter('healthy'), sink: reads as ProjectionSink<unknown> },
        { projection: counter('fragile'), sink: failing },
      ],
      { retryDelaysMs: [1] },
    );
    await runtime.start();
    await events.append('a-1', [testEvent('Added')]);
    poison = (await events.append('a-1', [testEvent('Poison')])).position;
    const last = (await events.append('a-1', [testEvent('Added')])).position;
    expect(await runtime.waitFor(last, runtime.names(), 3000)).toBe(true);
    expect(await count(reads, 'healthy', 'a-1')).toBe(3);
    expect(await count(reads, 'fragile', 'a-1')).toBe(2);
    expect(await runtime.deadLetters('fragile')).toEqual([expect.objectContaining({ position: poison })]);
    expect(await runtime.deadLetters('healthy')).toEqual([]);
    await runtime.stop();
    sqlite.close();
  });
});
