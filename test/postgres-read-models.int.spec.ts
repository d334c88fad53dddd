import { Pool } from 'pg';
import type { ReadModelProjection, RecordedEvent, ReadStore } from '@lib/platform';
import { PostgresReadStore } from '@lib/platform/engines';
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
  });
}
