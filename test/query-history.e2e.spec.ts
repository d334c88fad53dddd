import { ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { expectReferenceShape } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 20, query history: saved queries recorded from the event log, listed with filters, read in detail. */

describe('query history', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const search = { corpora: [{ corpus_key: 'sea' }] };

  async function call(method: string, path: string, schema: string, headers: Record<string, string> = {}) {
    const res = await app.call(method, path, undefined, headers);
    expectReferenceShape(res.status === 200 ? schema : res.status === 404 ? 'NotFoundError' : res.status === 400 ? 'BadRequestError' : 'Error', res.body);
    return res;
  }
  const list = async (query = '', headers: Record<string, string> = {}) => (await call('GET', `/v2/queries${query}`, 'ListQueryHistoriesResponse', headers)).body;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.route('POST', '/hhem', () => ({ status: 200, json: { scores: [0.81] } }));
    app = await startTestApp({ env: { LOG_LEVEL: 'warn', FCS_HHEM_URL: `${upstream.url}/hhem`, GENERATION_LLM: 'scripted' } });
    expect((await app.call('POST', '/v2/corpora', { key: 'sea', name: 'Sea' })).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora', { key: 'land', name: 'Land', save_history: true })).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora/sea/documents', { type: 'structured', id: 'sleep', sections: [{ text: 'Sea otters sleep wrapped in kelp.' }, { text: 'They hold hands.' }] })).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora/land/documents', { type: 'structured', id: 'moles', sections: [{ text: 'Moles dig tunnels.' }] })).status).toBe(201);
    await registerScripted(app, upstream, 'scripted');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('records a query asked with save_history: the request, result ids, answer, score and spans', async () => {
    upstream.enqueue({ content: 'In kelp [1].' });
    const asked = await app.call('POST', '/v2/query', { query: 'Where do sea otters sleep?', search, generation: {}, save_history: true });
    expect(asked.status).toBe(200);
    expect(asked.body.search_results[0]).not.toHaveProperty('part_index');

    const { queries } = await list('?corpus_key=sea');
    expect(queries).toHaveLength(1);
    expect(queries[0]).toMatchObject({ id: expect.stringMatching(/^qry_/), query: 'Where do sea otters sleep?', corpus_key: 'sea', generation: 'In kelp [1].', factual_consistency_score: 0.81 });

    const detail = await call('GET', `/v2/queries/${queries[0].id}`, 'QueryHistory');
    expect(detail.body).toMatchObject({ id: queries[0].id, query: { query: 'Where do sea otters sleep?', search, save_history: true }, latency_millis: expect.any(Number), started_at: queries[0].started_at });
    expect(detail.body.spans.map((s: { type: string }) => s.type)).toEqual(['search', 'generation', 'fcs']);
    const [searched, generated, scored] = detail.body.spans;
    expect(searched.search_results.map((r: { document_id: string }) => r.document_id)).toEqual(asked.body.search_results.map((r: { document_id: string }) => r.document_id));
    expect(generated).toMatchObject({ prompt: asked.body.rendered_prompt, generation: 'In kelp [1].' });
    expect(scored.score).toBe(0.81);
  });

  it('records nothing unless asked or the corpus saves its queries; streamed and single-corpus queries too', async () => {
    expect((await app.call('POST', '/v2/query', { query: 'otters', search })).status).toBe(200);
    expect((await list('?corpus_key=sea')).queries).toHaveLength(1);

    // `land` saves its queries: a query on it is recorded without asking, in QueryRequest form.
    expect((await app.call('POST', '/v2/corpora/land/query', { query: 'moles', search: { metadata_filter: '', limit: 3 } })).status).toBe(200);
    const [land] = (await list('?corpus_key=land')).queries;
    expect(land).toMatchObject({ query: 'moles', corpus_key: 'land' });
    expect((await call('GET', `/v2/queries/${land.id}`, 'QueryHistory')).body.query).toEqual({ query: 'moles', search: { limit: 3, corpora: [{ corpus_key: 'land', metadata_filter: '' }] } });
    expect((await app.call('POST', '/v2/corpora/land/query', { query: 'moles again', save_history: false })).status).toBe(200);
    expect((await list('?corpus_key=land')).queries).toHaveLength(1);

    upstream.enqueue({ chunks: ['Kelp ', '[1].'] });
    const res = await fetch(`${app.url}/v2/query`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'kelp sleep', search, generation: {}, stream_response: true, save_history: true }) });
    expect(await res.text()).toContain('event:end');
    const streamed = (await list('?corpus_key=sea')).queries.find((q: { query: string }) => q.query === 'kelp sleep');
    expect(streamed).toMatchObject({ generation: 'Kelp [1].', factual_consistency_score: 0.81 });
  });

  it('records chat turns with their chat id, and filters by chat, id and time, newest first, in pages', async () => {
    upstream.enqueue({ content: 'Kelp.' }, { content: 'Hands.' });
    const first = await app.call('POST', '/v2/chats', { query: 'How do otters sleep?', search });
    await app.call('POST', `/v2/chats/${first.body.chat_id}/turns`, { query: 'And then?', search });
    const inChat = (await list(`?chat_id=${first.body.chat_id}`)).queries;
    expect(inChat.map((q: { query: string }) => q.query)).toEqual(['And then?', 'How do otters sleep?']);
    expect(inChat.every((q: { chat_id: string }) => q.chat_id === first.body.chat_id)).toBe(true);
    expect((await call('GET', `/v2/queries/${inChat[0].id}`, 'QueryHistory')).body.chat_id).toBe(first.body.chat_id);

    expect((await list(`?history_id=${inChat[1].id}`)).queries.map((q: { id: string }) => q.id)).toEqual([inChat[1].id]);
    const all = (await list('?limit=100')).queries;
    expect(all.map((q: { started_at: string }) => q.started_at)).toEqual([...all.map((q: { started_at: string }) => q.started_at)].sort().reverse());
    expect((await list(`?started_after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).queries).toEqual([]);
    expect((await list(`?started_before=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}&limit=100`)).queries).toHaveLength(all.length);

    const page1 = await list('?limit=2');
    expect(page1.queries).toHaveLength(2);
    const page2 = await list(`?limit=2&page_key=${page1.metadata.page_key}`);
    expect(page2.queries[0].id).not.toBe(page1.queries[1].id);
    expect([...page1.queries, ...page2.queries].map((q: { id: string }) => q.id)).toEqual(all.slice(0, 4).map((q: { id: string }) => q.id));
  });

  it('hides histories on corpora the caller may not read, and answers 400 and 404 in the reference shape', async () => {
    const landViewer = await createUser(app, 'land-viewer', { corpus_roles: [{ corpus_key: 'land', role: 'viewer' }] });
    const visible = (await list('?limit=100', asKey(landViewer))).queries;
    expect(visible.length).toBeGreaterThan(0);
    expect(visible.every((q: { corpus_key: string }) => q.corpus_key === 'land')).toBe(true);
    const [sea] = (await list('?corpus_key=sea')).queries;
    expect((await call('GET', `/v2/queries/${sea.id}`, 'QueryHistory', asKey(landViewer))).status).toBe(404);
    expect((await call('GET', '/v2/queries/qry_nope', 'QueryHistory')).status).toBe(404);
    const bad = await call('GET', '/v2/queries?started_after=yesterday', 'ListQueryHistoriesResponse');
    expect(bad.status).toBe(400);
    expect(bad.body.field_errors).toHaveProperty('started_after');
    expect((await call('GET', '/v2/queries?limit=101', 'ListQueryHistoriesResponse')).status).toBe(400);
  });
});
