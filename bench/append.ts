import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStore, NewEvent } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore } from '@lib/platform/sqlite';
import { median, now, report, round } from './common';

const event = (i: number): NewEvent => ({
  id: randomUUID(),
  type: 'DocumentMetadataChanged',
  data: { documentId: `doc-${i}`, metadata: { year: 2000 + (i % 25), tag: 'benchmark' } },
  metadata: { actor: { type: 'api_key', id: 'aky_bench' }, correlationId: 'bench', schemaVersion: 1 },
});

export interface AppendRates {
  /** Events/s, one event per append, each awaited before the next. */
  readonly single: number;
  /** Events/s, one event per append, from `appenders` concurrent appenders (each on its own stream); NaN when none. */
  readonly concurrent: number;
  /** Events/s, 100 events per append, each awaited before the next. */
  readonly batched: number;
}

/**
 * Appends to a fresh store (any engine), in three ways one after the other: `singles` one by one, `singles` again from
 * `appenders` writers at once (skipped when 0), `batched` in appends of 100 to new streams.
 */
export async function appendRates(store: EventStore, counts: { singles: number; batched: number; appenders?: number }): Promise<AppendRates> {
  const { singles, batched, appenders = 0 } = counts;
  let t = now();
  for (let i = 0; i < singles; i++) await store.append(`document-c.${i % 100}`, [event(i)]);
  const single = singles / ((now() - t) / 1000);
  let concurrent = NaN;
  if (appenders > 0) {
    const each = Math.ceil(singles / appenders);
    t = now();
    await Promise.all(
      Array.from({ length: appenders }, async (_, a) => {
        for (let i = 0; i < each; i++) await store.append(`document-p${a}.x`, [event(a * each + i)]);
      }),
    );
    concurrent = (each * appenders) / ((now() - t) / 1000);
  }
  t = now();
  for (let i = 0; i < batched; i += 100) {
    await store.append(`bulk-${i / 100}`, Array.from({ length: 100 }, (_, j) => event(i + j)), { expectedRevision: 'no_stream' });
  }
  return { single, concurrent, batched: batched / ((now() - t) / 1000) };
}

/**
 * Durable appends (WAL, synchronous=FULL) through SqliteEventStore, single and in batches of 100, beside raw
 * better-sqlite3 inserts of the same payload into a bare table in the same run and on the same disk.
 */
export async function appendBench(args: string[]): Promise<void> {
  const singles = Number(args[0] ?? 2000);
  const batched = Number(args[1] ?? 100_000);
  const runs = Number(args[2] ?? 5);
  const results: Record<string, number[]> = { rawSingle: [], rawBatched: [], oursSingle: [], oursBatched: [] };
  for (let run = 0; run < runs; run++) {
    const dir = mkdtempSync(join(tmpdir(), 'bench-append-'));
    try {
      const raw = new Database(join(dir, 'raw.db'));
      raw.pragma('journal_mode = WAL');
      raw.pragma('synchronous = FULL');
      raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT, type TEXT, data TEXT, metadata TEXT)');
      const insert = raw.prepare('INSERT INTO t (event_id, type, data, metadata) VALUES (?, ?, ?, ?)');
      const rawInsert = (e: NewEvent) => insert.run(e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata));
      let t = now();
      for (let i = 0; i < singles; i++) rawInsert(event(i));
      results.rawSingle.push(singles / ((now() - t) / 1000));
      const rawBatch = raw.transaction((es: NewEvent[]) => es.forEach(rawInsert));
      t = now();
      for (let i = 0; i < batched; i += 100) rawBatch(Array.from({ length: 100 }, (_, j) => event(i + j)));
      results.rawBatched.push(batched / ((now() - t) / 1000));
      raw.close();

      const sqlite = new SqliteDatabase({ path: join(dir, 'ours.db'), synchronous: 'FULL' });
      const rates = await appendRates(new SqliteEventStore(sqlite), { singles, batched });
      results.oursSingle.push(rates.single);
      results.oursBatched.push(rates.batched);
      sqlite.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const m = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
  report(
    'append',
    [
      { kind: 'single (1 event/append)', 'raw better-sqlite3 ev/s': round(m.rawSingle, 0), 'SqliteEventStore ev/s': round(m.oursSingle, 0), 'ours/raw': round(m.oursSingle / m.rawSingle) },
      { kind: 'batched (100 events/append)', 'raw better-sqlite3 ev/s': round(m.rawBatched, 0), 'SqliteEventStore ev/s': round(m.oursBatched, 0), 'ours/raw': round(m.oursBatched / m.rawBatched) },
    ],
    { runs, singles, batched, synchronous: 'FULL', medianOf: results },
  );
}
