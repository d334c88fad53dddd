import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startTestApp } from './support/test-app';
import { filesHeldOpen } from './support/open-files';

/** The event types stored in a database file's log, or undefined when the file has no log table. */
function loggedTypes(path: string): string[] | undefined {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'es_events'").get()) return undefined;
    return (db.prepare('SELECT type FROM es_events ORDER BY position').all() as { type: string }[]).map((r) => r.type);
  } finally {
    db.close();
  }
}

const createCorpus = (key: string) => ({ key, name: key });

describe.each(['inline', 'thread', 'auto'])('the embedded event log in its own file (EVENT_STORE_WRITER=%s)', (writer) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-events-file-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const start = () => startTestApp({ dataDir, env: { EVENT_STORE_WRITER: writer } });

  it('keeps events in events.db and read models in service.db, and a restart serves both', async () => {
    const first = await start();
    try {
      expect((await first.call('POST', '/v2/corpora', createCorpus('c1'))).status).toBe(201);
      const doc = await first.call('POST', '/v2/corpora/c1/documents', { id: 'd1', type: 'core', document_parts: [{ text: 'quokkas live on Rottnest island' }] });
      expect(doc.status).toBe(201);
    } finally {
      await first.started.app.close();
    }
    expect(loggedTypes(join(dataDir, 'events.db'))).toEqual(expect.arrayContaining(['CorpusCreated', 'DocumentIndexed']));
    expect(loggedTypes(join(dataDir, 'service.db'))).toBeUndefined();
    // The log holds credentials' digests and sealed secrets: the owner's only, like service.db (docs/security.md).
    expect(statSync(join(dataDir, 'events.db')).mode & 0o777).toBe(0o600);

    const second = await start();
    try {
      const found = await second.call('POST', '/v2/corpora/c1/query', { query: 'quokkas', search: { lexical_interpolation: 1 } });
      expect(found.status).toBe(200);
      expect(found.body.search_results.map((r: { document_id: string }) => r.document_id)).toEqual(['d1']);
    } finally {
      await second.started.app.close();
    }
  });

  it("copies service.db's WAL back on a thread of its own while the service runs (no projection commit on the loop checkpoints it)", async () => {
    const app = await start();
    try {
      expect((await app.call('POST', '/v2/corpora', createCorpus('c2'))).status).toBe(201);
      // ~200 KB of parts: far below SQLite's own threshold (1,000 pages, 4 MB of WAL), so only the checkpointer moves it.
      const text = Array.from({ length: 2000 }, (_, i) => `wombat${i} burrows under the eucalyptus at dusk`).join('. ');
      const doc = await app.call('POST', '/v2/corpora/c2/documents', { id: 'marker', type: 'core', document_parts: [{ text }] });
      expect(doc.status).toBe(201);
      const inFile = () => readFileSync(join(dataDir, 'service.db')).includes('wombat1999 burrows');
      for (const end = Date.now() + 10_000; !inFile() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
      expect(inFile()).toBe(true);
    } finally {
      await app.started.app.close();
    }
  });
});

describe('a data dir whose service.db already holds the event log', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-events-legacy-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps appending to the log in service.db, says so in the log, and makes no events.db', async () => {
    const before = await startTestApp({ dataDir });
    try {
      expect((await before.call('POST', '/v2/corpora', createCorpus('old'))).status).toBe(201);
    } finally {
      await before.started.app.close();
    }
    // Closed means closed: no thread of the service still has a file of the dir open.
    expect(filesHeldOpen(dataDir)).toEqual([]);
    // The shape such a dir had: one service.db with the log (its read models are rebuilt from it at start).
    for (const f of readdirSync(dataDir).filter((f) => f.startsWith('service.db'))) rmSync(join(dataDir, f));
    for (const f of readdirSync(dataDir).filter((f) => f.startsWith('events.db'))) renameSync(join(dataDir, f), join(dataDir, f.replace('events.db', 'service.db')));

    const app = await startTestApp({ dataDir, env: { EVENT_STORE_WRITER: 'thread' } });
    try {
      expect(app.logLines.some((l) => l.includes('the event log stays in service.db'))).toBe(true);
      expect((await app.call('GET', '/v2/corpora/old')).status).toBe(200);
      expect((await app.call('POST', '/v2/corpora', createCorpus('new'))).status).toBe(201);
    } finally {
      await app.started.app.close();
    }
    expect(existsSync(join(dataDir, 'events.db'))).toBe(false);
    expect(loggedTypes(join(dataDir, 'service.db'))!.filter((t) => t === 'CorpusCreated')).toHaveLength(2);
  });
});
