import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CORPORA, DOCUMENTS } from '@lib/corpora/read-models';
import { ReadDoc, ProjectionRuntime, ProjectionSink } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore, SqliteProjectionState, SqliteReadStore, SqliteSearchIndex } from '@lib/platform/sqlite';
import { ScriptedOpenAIServer } from '@lib/testing';
import { ALL_PROJECTIONS, sinkOf } from '@projections';
import { ServiceProcess, spawnService } from './support/service-process';

const KEY = 'zut_crash_test_key_0123456789abcdefgh';

async function post(url: string, path: string, body: unknown): Promise<number> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

/** Every document of every read model, and every indexed part, in a comparable form. */
async function snapshot(dataDir: string) {
  const sqlite = new SqliteDatabase({ path: join(dataDir, 'service.db') });
  // The log has its own file; read models, index and checkpoints share service.db (docs/architecture.md).
  const log = new SqliteDatabase({ path: join(dataDir, 'events.db') });
  sqlite.onClose(() => log.close());
  const state = new SqliteProjectionState(sqlite);
  const reads = new SqliteReadStore(sqlite, state);
  const search = new SqliteSearchIndex(sqlite, state);
  // The recall index is a search sink of its own (projections/index.ts, sinkOf).
  const recallDb = new SqliteDatabase({ path: ':memory:' });
  const recall = new SqliteSearchIndex(recallDb, new SqliteProjectionState(recallDb));
  const runtime = new ProjectionRuntime(new SqliteEventStore(log), state, ALL_PROJECTIONS.map((p) => ({ projection: p, sink: sinkOf(p, { reads, search, recall }) })));
  await runtime.init();
  const read = async () => {
    const all = async (c: string) => (await reads.find<ReadDoc>(c, { limit: 100_000 })).items;
    // Fence rows (`~fence/<key>`, the documents projection's corpus incarnations) are not documents.
    const documents = (await all(DOCUMENTS)).filter((d) => !d.id.startsWith('~fence/'));
    const parts = await Promise.all(documents.map((d) => search.documentParts(String(d.corpus_key), String(d.document_id))));
    return { corpora: await all(CORPORA), documents, parts };
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

  it('keeps the usage record of every answered chat completion through SIGKILL, so quotas still trip after it', async () => {
    const usageDir = mkdtempSync(join(tmpdir(), 'ars-crash-usage-'));
    const upstream = await ScriptedOpenAIServer.start();
    upstream.fallback = { content: 'ok', usage: { prompt_tokens: 3, completion_tokens: 4 } };
    const env = { DATA_DIR: usageDir, ADMIN_API_KEY: KEY };
    const spawned: ServiceProcess[] = [];
    const start = async () => {
      const service = await spawnService(env);
      spawned.push(service);
      return service;
    };
    try {
      const first = await start();
      // 4 output tokens a call; ten calls use the day's 40.
      const model = { type: 'openai-compatible', name: 'metered', model: 'up', uri: `${upstream.baseURL}/chat/completions`, llm_quota: { output_tokens_per_day: 40 } };
      expect(await post(first.url, '/v2/llms', model)).toBe(201);
      const chat = (url: string, stream: boolean) => post(url, '/v2/llms/chat/completions', { model: 'metered', stream, messages: [{ role: 'user', content: 'hi' }] });
      const answered = await Promise.all(Array.from({ length: 10 }, (_, i) => chat(first.url, i % 2 === 1)));
      expect(answered).toEqual(Array(10).fill(200));
      // Killed the moment the last answer ended: every usage record must already be in the log.
      first.child.kill('SIGKILL');
      await first.exited;

      const second = await start();
      const events = await fetch(`${second.url}/v2/events?category=llmusage&limit=100`, { headers: { 'x-api-key': KEY } });
      const page = (await events.json()) as { events: { type: string }[] };
      expect(page.events.filter((e) => e.type === 'LlmUsageRecorded')).toHaveLength(10);
      expect(await chat(second.url, false)).toBe(429);
    } finally {
      for (const service of spawned) service.child.kill('SIGKILL');
      await Promise.all(spawned.map((s) => s.exited));
      await upstream.close();
      rmSync(usageDir, { recursive: true, force: true });
    }
  }, 60_000);
});
