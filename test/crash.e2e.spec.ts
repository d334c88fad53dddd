import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ReadDoc,
  SqliteDatabase,
  SqliteEventStore,
  SqliteProjectionState,
  SqliteReadStore,
  SqliteSearchIndex,
  ProjectionRuntime,
  ProjectionSink,
} from '@lib/platform';
import { ALL_PROJECTIONS } from '@projections';
import { spawnService } from './support/service-process';

const KEY = 'zut_crash_test_key_0123456789abcdefgh';

async function post(url: string, path: string, body: unknown): Promise<number> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

/** Every document of every read model, and every indexed part, in a comparable form. */
async function snapshot(dataDir: string) {
  const sqlite = new SqliteDatabase({ path: join(dataDir, 'service.db') });
  const state = new SqliteProjectionState(sqlite);
  const reads = new SqliteReadStore(sqlite, state);
  const search = new SqliteSearchIndex(sqlite, state);
  const runtime = new ProjectionRuntime(new SqliteEventStore(sqlite), state, ALL_PROJECTIONS.map((p) => ({ projection: p, sink: (p.target === 'read' ? reads : search) as ProjectionSink<unknown> })));
  await runtime.init();
  const read = async () => {
    const all = async (c: string) => (await reads.find<ReadDoc>(c, { limit: 100_000 })).items;
    const documents = await all('documents');
    const parts = await Promise.all(documents.map((d) => search.documentParts(String(d.corpus_key), String(d.document_id))));
    return { corpora: await all('corpora'), documents, parts };
  };
  return { sqlite, runtime, read };
}

describe('crash safety', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-crash-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps every acknowledged write through SIGKILL, and read models equal a rebuild from the log', async () => {
    const env = { DATA_DIR: dataDir, ADMIN_API_KEY: KEY };
    const first = await spawnService(env);
    const acknowledged: { corpus: string; id: string }[] = [];
    for (const c of ['c0', 'c1', 'c2']) expect(await post(first.url, '/v2/corpora', { key: c, name: c })).toBe(201);

    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const corpus = `c${i % 3}`;
        const id = `w${w}-${i}`;
        try {
          const status = await post(first.url, `/v2/corpora/${corpus}/documents`, { id, type: 'core', document_parts: [{ text: `burst ${id} text about crash safety` }] });
          if (status === 201 || status === 202) acknowledged.push({ corpus, id });
        } catch {
          return; // the connection died with the process: this write was never acknowledged
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    while (acknowledged.length < 150) await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await first.exited;

    const second = await spawnService(env);
    for (const { corpus, id } of acknowledged) {
      const res = await fetch(`${second.url}/v2/corpora/${corpus}/documents/${id}`, { headers: { 'x-api-key': KEY } });
      expect(`${corpus}/${id}: ${res.status}`).toBe(`${corpus}/${id}: 200`);
    }
    const ready = (await (await fetch(`${second.url}/health/ready`)).json()) as { status: string };
    expect(ready.status).toBe('ready');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    const { sqlite, runtime, read } = await snapshot(dataDir);
    const live = await read();
    const docs = live.corpora.reduce((n, c) => n + Number(c.used_docs), 0);
    expect(docs).toBe(live.documents.length);
    expect(live.documents.length).toBeGreaterThanOrEqual(acknowledged.length);
    for (const p of ALL_PROJECTIONS) await runtime.rebuild(p.name);
    expect(await read()).toEqual(live);
    sqlite.close();
  }, 120_000);
});
