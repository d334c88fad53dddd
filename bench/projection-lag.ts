import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProjectionRuntime, ProjectionSink } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore, SqliteProjectionState, SqliteReadStore, SqliteSearchIndex } from '@lib/platform/sqlite';
import { ALL_PROJECTIONS, sinkOf } from '@projections';
import { now, percentile, report, round } from './common';
import { corpusCreated, documentIndexed } from './fixtures';

/**
 * Appends DocumentIndexed events at a steady rate and measures, per event, the time from the acknowledged
 * append until every projection (corpora, documents, search) has applied it: the read-your-writes delay.
 */
export async function projectionLagBench(args: string[]): Promise<void> {
  const rate = Number(args[0] ?? 1000);
  const seconds = Number(args[1] ?? 10);
  const dir = mkdtempSync(join(tmpdir(), 'bench-lag-'));
  const sqlite = new SqliteDatabase({ path: join(dir, 'lag.db'), synchronous: 'FULL' });
  const events = new SqliteEventStore(sqlite);
  const state = new SqliteProjectionState(sqlite);
  const reads = new SqliteReadStore(sqlite, state);
  const search = new SqliteSearchIndex(sqlite, state);
  // The recall index is a search sink of its own (projections/index.ts, sinkOf).
  const recallDb = new SqliteDatabase({ path: ':memory:' });
  const recall = new SqliteSearchIndex(recallDb, new SqliteProjectionState(recallDb));
  const runtime = new ProjectionRuntime(events, state, ALL_PROJECTIONS.map((p) => ({ projection: p, sink: sinkOf(p, { reads, search, recall }) })));
  await runtime.start();
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
          waits.push(runtime.waitFor(position, names, 10_000).then(() => void lags.push(now() - acked)));
        }),
      );
    }
    await Promise.all(tick);
    // Holds the schedule: event i is due at started + i/rate seconds.
    const due = started + (i / rate) * 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, due - now())));
  }
  await Promise.all(waits);
  const elapsed = (now() - started) / 1000;
  await runtime.stop();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
  report('projection-lag', [
    {
      'target ev/s': rate,
      'achieved ev/s': round(total / elapsed, 0),
      events: total,
      'p50 ms': round(percentile(lags, 50)),
      'p99 ms': round(percentile(lags, 99)),
      'max ms': round(Math.max(...lags)),
    },
  ], { projections: names, measured: 'acknowledged append → applied by every projection (in-process runtime, SQLite FULL)' });
}
