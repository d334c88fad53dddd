import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStore, ProjectionRuntime } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore, SqliteProjectionState, SqliteReadStore, SqliteSearchIndex } from '@lib/platform/sqlite';
import { ALL_PROJECTIONS, sinkOf } from '@projections';
import { now, percentile, report, round } from './common';
import { corpusCreated, documentIndexed } from './fixtures';

export interface ProjectionLag {
  readonly events: number;
  /** Events/s the writers kept up (below the target when appends are slower than the schedule). */
  readonly achieved: number;
  /** Per event, ms from its acknowledged append until every projection applied it. */
  readonly lags: number[];
}

/**
 * Appends DocumentIndexed events to `events` (any engine, fresh) at a steady rate, with every projection running in
 * process into the embedded read models and search index on `readSide`, and times each event from its acknowledged
 * append until every projection has applied it.
 */
export async function measureProjectionLag(events: EventStore, readSide: SqliteDatabase, rate: number, seconds: number): Promise<ProjectionLag> {
  const state = new SqliteProjectionState(readSide);
  const reads = new SqliteReadStore(readSide, state);
  const search = new SqliteSearchIndex(readSide, state);
  // The recall index is a search sink of its own (projections/index.ts, sinkOf).
  const recallDb = new SqliteDatabase({ path: ':memory:' });
  const recall = new SqliteSearchIndex(recallDb, new SqliteProjectionState(recallDb));
  const runtime = new ProjectionRuntime(events, state, ALL_PROJECTIONS.map((p) => ({ projection: p, sink: sinkOf(p, { reads, search, recall }) })));
  await runtime.start();
  try {
    const names = ALL_PROJECTIONS.map((p) => p.name);
    const c = corpusCreated('lag');
    await events.append(c.stream, [c.event]);
    const lags: number[] = [];
    const waits: Promise<void>[] = [];
    const tickMs = 10;
    const perTick = Math.max(1, Math.round((rate * tickMs) / 1000));
    const total = rate * seconds;
    let i = 0;
    const started = now();
    while (i < total) {
      // Each tick's events come from concurrent writers (as from many clients), each timed from its own ack.
      const tick: Promise<void>[] = [];
      for (let k = 0; k < perTick && i < total; k++, i++) {
        const d = documentIndexed('lag', i);
        tick.push(
          events.append(d.stream, [d.event], { expectedRevision: 'no_stream' }).then(({ position }) => {
            const acked = now();
            waits.push(
              runtime.waitFor(position, names, 10_000).then((caughtUp) => {
                if (!caughtUp) throw new Error(`projections did not apply position ${position} within 10 s`);
                lags.push(now() - acked);
              }),
            );
          }),
        );
      }
      await Promise.all(tick);
      // Holds the schedule: event i is due at started + i/rate seconds.
      const due = started + (i / rate) * 1000;
      await new Promise((r) => setTimeout(r, Math.max(0, due - now())));
    }
    await Promise.all(waits);
    return { events: total, achieved: total / ((now() - started) / 1000), lags };
  } finally {
    await runtime.stop();
    recallDb.close();
  }
}

/**
 * Appends DocumentIndexed events at a steady rate and measures, per event, the time from the acknowledged
 * append until every projection (corpora, documents, search) has applied it: the read-your-writes delay.
 */
export async function projectionLagBench(args: string[]): Promise<void> {
  const rate = Number(args[0] ?? 1000);
  const seconds = Number(args[1] ?? 10);
  const dir = mkdtempSync(join(tmpdir(), 'bench-lag-'));
  const sqlite = new SqliteDatabase({ path: join(dir, 'lag.db'), synchronous: 'FULL' });
  const lag = await measureProjectionLag(new SqliteEventStore(sqlite), sqlite, rate, seconds);
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
  report('projection-lag', [
    {
      'target ev/s': rate,
      'achieved ev/s': round(lag.achieved, 0),
      events: lag.events,
      'p50 ms': round(percentile(lag.lags, 50)),
      'p99 ms': round(percentile(lag.lags, 99)),
      'max ms': round(Math.max(...lag.lags)),
    },
  ], { projections: ALL_PROJECTIONS.map((p) => p.name), measured: 'acknowledged append → applied by every projection (in-process runtime, SQLite FULL)' });
}
