import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOCUMENTS } from '@lib/corpora/read-models';
import { NewEvent, ProjectionRuntime, ProjectionSink } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore, SqliteProjectionState, SqliteReadStore, SqliteSearchIndex } from '@lib/platform/sqlite';
import { ALL_PROJECTIONS, sinkOf } from '@projections';
import { now, report, round } from './common';
import { corpusCreated, documentIndexed } from './fixtures';

/**
 * Writes N events (documents indexed into 10 corpora) straight into the event store, then rebuilds every
 * projection from the start into a fresh generation and swaps it in, timing each.
 */
export async function rebuildBench(args: string[]): Promise<void> {
  const total = Number(args[0] ?? 1_000_000);
  const dir = mkdtempSync(join(tmpdir(), 'bench-rebuild-'));
  const sqlite = new SqliteDatabase({ path: join(dir, 'rebuild.db'), synchronous: 'NORMAL' });
  const events = new SqliteEventStore(sqlite);
  try {
    let t = now();
    const corpora = 10;
    for (let c = 0; c < corpora; c++) {
      const e = corpusCreated(`c${c}`);
      events.appendSync(e.stream, [e.event]);
    }
    const write = sqlite.db.transaction((batch: { stream: string; event: NewEvent }[]) => batch.forEach((b) => events.appendSync(b.stream, [b.event], { expectedRevision: 'no_stream' })));
    for (let i = corpora; i < total; i += 1000) {
      write(Array.from({ length: Math.min(1000, total - i) }, (_, k) => documentIndexed(`c${(i + k) % corpora}`, i + k)));
    }
    const writeSeconds = (now() - t) / 1000;
    const state = new SqliteProjectionState(sqlite);
    const reads = new SqliteReadStore(sqlite, state);
    const search = new SqliteSearchIndex(sqlite, state);
    // The recall index is a search sink of its own (projections/index.ts, sinkOf).
    const recallDb = new SqliteDatabase({ path: ':memory:' });
    const recall = new SqliteSearchIndex(recallDb, new SqliteProjectionState(recallDb));
    const runtime = new ProjectionRuntime(events, state, ALL_PROJECTIONS.map((p) => ({ projection: p, sink: sinkOf(p, { reads, search, recall }) })), { batchSize: 2000 });
    await runtime.init();
    const rows: Record<string, unknown>[] = [];
    let all = 0;
    for (const p of ALL_PROJECTIONS) {
      t = now();
      await runtime.rebuild(p.name);
      const s = (now() - t) / 1000;
      all += s;
      rows.push({ projection: p.name, events: total, seconds: round(s), 'events/s': round(total / s, 0) });
    }
    rows.push({ projection: 'all (sequential)', events: total, seconds: round(all), 'events/s (per projection pass)': round((total * ALL_PROJECTIONS.length) / all, 0) });
    // Rows with a document id: the fence rows of the documents projection (one per corpus) are not documents.
    const docs = await reads.count(DOCUMENTS, [{ field: 'document_id', op: 'ne', value: '' }]);
    report('rebuild', rows, { writeSeconds: round(writeSeconds), documentsAfterRebuild: docs });
  } finally {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
