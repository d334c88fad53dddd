import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { ProjectionRuntime, type ReadModelProjection, type RecordedEvent, type ReadStore } from '@lib/platform';
import { PostgresEventStore, PostgresProjectionState, PostgresReadStore } from '@lib/platform/engines';
import { SqliteDatabase, SqliteProjectionState, SqliteReadStore } from '@lib/platform/sqlite';
import { corporaHistory, racedHistory } from '@lib/testing';
import { ALL_PROJECTIONS } from '@projections';
import { havePostgres, testDatabase } from './support/postgres';

/**
 * The service's own read projections on PostgreSQL: every declared collection and index is created, and a corpora
 * history (documents indexed, updated, removed, a reset and a delete racing late writes, jobs) and glossaries leave the same rows
 * as on the embedded SQLite read store, also when every batch is delivered again under a lost checkpoint.
 */
const READ_PROJECTIONS = ALL_PROJECTIONS.filter((p): p is ReadModelProjection => p.target === 'read');

async function allRows(reads: ReadStore, projection: ReadModelProjection): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const { name } of projection.collections) {
    const rows: unknown[] = [];
    let pageKey: string | undefined;
    do {
      const page = await reads.find(name, { limit: 7, pageKey });
      rows.push(...page.items);
      pageKey = page.nextPageKey;
    } while (pageKey);
    out[name] = rows;
  }
  return out;
}

function history(): RecordedEvent[] {
  const s = racedHistory();
  const c = corporaHistory(s.log);
  c.created('docs');
  for (let i = 0; i < 30; i++) c.indexed('docs', `d${String(i).padStart(2, '0')}`, [`text ${i}`, `more ${i}`], 'crp_docs', i % 5 === 0 ? [`img${i}`] : []);
  for (let i = 0; i < 30; i += 3) c.metadataUpdated('docs', `d${String(i).padStart(2, '0')}`, { year: 2000 + i, tags: ['a', i] }, 2, 'crp_docs');
  for (let i = 0; i < 30; i += 7) c.removed('docs', `d${String(i).padStart(2, '0')}`, 2, 'crp_docs');
  c.updated('docs', 'Renamed');
  c.filterAttributes('docs', ['year']);
  c.jobQueued('job_1', 'docs');
  c.jobStarted('job_1');
  c.jobProgressed('job_1', 1);
  c.jobCompleted('job_1', 2);
  c.jobQueued('job_2', 'docs');
  c.jobFailed('job_2', 'boom');
  // Glossary entries are keyed `<glossary>\0<term>`: ids PostgreSQL's text cannot hold as they are.
  const at = '2026-01-02T00:00:00.000Z';
  for (const key of ['g', 'g2']) {
    s.log.append(`glossary-${key}`, 'GlossaryCreated', { key, name: key.toUpperCase(), createdAt: at });
    s.log.append(`glossary-${key}`, 'GlossaryEntriesUpserted', { key, entries: { a: 'alpha', ab: 'alpha beta', 'b c': 'beta', '': 'empty' }, at });
  }
  s.log.append('glossary-g', 'GlossaryEntriesDeleted', { key: 'g', terms: ['ab'], at });
  s.log.append('glossary-g2', 'GlossaryDeleted', { key: 'g2', at });
  return s.log.events;
}

if (!havePostgres('read projections on PostgresReadStore')) {
  describe.skip('read projections on PostgresReadStore', () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  jest.setTimeout(60_000);
  describe('read projections on PostgresReadStore', () => {
    let pool: Pool;
    let pg: PostgresReadStore;
    const sqlite = new SqliteDatabase({ path: ':memory:' });
    const embedded = new SqliteReadStore(sqlite, new SqliteProjectionState(sqlite));

    beforeAll(async () => {
      pool = new Pool({ connectionString: (await testDatabase('read_models'))!, max: 2 });
      pg = new PostgresReadStore(pool);
    });
    afterAll(async () => {
      sqlite.close();
      await pool?.end();
    });

    it('creates every collection and index the projections declare', async () => {
      for (const projection of READ_PROJECTIONS) {
        await pg.prepare(projection, 1);
        await pg.activate(projection, 1);
        for (const { name } of projection.collections) expect(await pg.find(name, { limit: 1 })).toEqual({ items: [] });
      }
      const { rows } = await pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid WHERE NOT i.indisprimary AND t.relname LIKE 'rm\\_%'`,
      );
      const declared = READ_PROJECTIONS.flatMap((p) => p.collections.flatMap((c) => c.indexes ?? [])).length;
      expect(Number(rows[0].n)).toBe(declared);
    });

    it('leaves the rows the embedded read store leaves, also when every batch arrives twice', async () => {
      const events = history();
      const touched = READ_PROJECTIONS.filter((p) => events.some((e) => p.eventTypes.includes(e.type)));
      expect(touched.map((p) => p.name)).toEqual(expect.arrayContaining(['corpora', 'documents', 'jobs', 'glossaries']));
      for (const projection of touched) {
        await embedded.prepare(projection, 1);
        await embedded.activate(projection, 1);
        for (let from = 0; from < events.length; from += 5) {
          const batch = events.slice(from, from + 5).map((e) => ({ position: e.position, ops: projection.eventTypes.includes(e.type) ? projection.apply(e) : [] }));
          const checkpoint = batch[batch.length - 1].position;
          await embedded.applyBatch(projection.name, 1, batch, checkpoint);
          await pg.applyBatch(projection.name, 1, batch, checkpoint);
          // As after a crash that kept the writes and lost the checkpoint: the position guards alone hold.
          await pg.applyBatch(`${projection.name}_replayed`, 1, batch, checkpoint);
        }
        const expected = await allRows(embedded, projection);
        expect(Object.values(expected).some((rows) => rows.length > 0)).toBe(true);
        expect(await allRows(pg, projection)).toEqual(expected);
      }
    });

    it('runs in the projection runtime over the PostgreSQL log, rebuilds, and matches a runtime on the embedded store', async () => {
      const url = (await testDatabase('read_models_runtime'))!;
      const events = await PostgresEventStore.connect(url);
      const readsPool = new Pool({ connectionString: url, max: 2 });
      const local = new SqliteDatabase({ path: ':memory:' });
      const runtimes: ProjectionRuntime[] = [];
      try {
        const log = history();
        for (const e of log) await events.append(e.streamId, [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata }], { expectedRevision: 'any' });
        const touched = READ_PROJECTIONS.filter((p) => log.some((e) => p.eventTypes.includes(e.type)));
        const shared = new PostgresReadStore(readsPool, new PostgresProjectionState(readsPool));
        const localReads = new SqliteReadStore(local, new SqliteProjectionState(local));
        const onPostgres = new ProjectionRuntime(events, new PostgresProjectionState(readsPool), touched.map((projection) => ({ projection, sink: shared })), { batchSize: 7 });
        const embeddedRuntime = new ProjectionRuntime(events, new SqliteProjectionState(local), touched.map((projection) => ({ projection, sink: localReads })), { batchSize: 7 });
        runtimes.push(onPostgres, embeddedRuntime);
        await onPostgres.start();
        await embeddedRuntime.start();
        const head = (await events.append('test-tail', [{ id: randomUUID(), type: 'TestTail', data: {}, metadata: { actor: { type: 'system', id: 'test' }, correlationId: 't', schemaVersion: 1 } }])).position;
        const names = touched.map((p) => p.name);
        expect(await onPostgres.waitFor(head, names, 20_000)).toBe(true);
        expect(await embeddedRuntime.waitFor(head, names, 20_000)).toBe(true);
        for (const projection of touched) expect(await allRows(shared, projection)).toEqual(await allRows(localReads, projection));
        await onPostgres.rebuild('documents');
        const documents = touched.find((p) => p.name === 'documents')!;
        expect(await allRows(shared, documents)).toEqual(await allRows(localReads, documents));
        // The rebuild wrote a new generation, swapped it in and dropped the old one.
        const collections = documents.collections.map((c) => c.name);
        const { rows: tables } = await readsPool.query<{ collection: string; generation: number }>('SELECT collection, generation FROM rm_tables WHERE collection = ANY($1) ORDER BY collection', [collections]);
        expect(tables).toEqual([...collections].sort().map((collection) => ({ collection, generation: 2 })));
        const { rows: old } = await readsPool.query(`SELECT tablename FROM pg_tables WHERE tablename = ANY($1)`, [collections.map((c) => `rm_${c}_g1`)]);
        expect(old).toEqual([]);
        expect(await onPostgres.deadLetters()).toEqual([]);
      } finally {
        for (const r of runtimes) await r.stop();
        local.close();
        await readsPool.end();
        await events.close();
      }
    });
  });
}
