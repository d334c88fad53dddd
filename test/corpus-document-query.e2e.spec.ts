import { startTestApp, TestApp } from './support/test-app';

const corpus = (key: string, extra: Record<string, unknown> = {}) => ({ key, name: `Corpus ${key}`, description: 'A test corpus', ...extra });

const coreDoc = {
  id: 'doc-core',
  type: 'core',
  metadata: { year: 2024, lang: 'eng' },
  document_parts: [
    { text: 'Photosynthesis converts light energy into chemical energy.', metadata: { page: 1 } },
    { text: 'Chlorophyll absorbs mostly blue and red light.', metadata: { page: 2 } },
  ],
};

const structuredDoc = {
  id: 'doc-structured',
  type: 'structured',
  title: 'Ocean tides',
  metadata: { year: 2020 },
  sections: [
    { title: 'Causes', text: 'Tides are caused by the gravitational pull of the moon. The sun matters too.', metadata: { section_no: 1 } },
    { title: 'Effects', text: 'Spring tides happen at new and full moon.' },
  ],
};

describe('corpus → document → query slice (embedded default, over HTTP)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app.close());

  it('refuses requests without a valid key with the same 401 body shape', async () => {
    for (const headers of [{ 'x-api-key': '' }, { 'x-api-key': 'zut_wrong' }]) {
      const res = await app.call('GET', '/v2/corpora', undefined, headers);
      expect(res.status).toBe(401);
      expect(res.body.messages[0]).toMatch(/Unauthorized/);
      expect(res.body.request_id).toEqual(expect.any(String));
    }
    expect((await app.call('GET', '/health', undefined, { 'x-api-key': '' })).status).toBe(200);
  });

  it('creates, reads, lists, updates a corpus, and enforces the spec limits with field errors', async () => {
    const created = await app.call('POST', '/v2/corpora', corpus('slice-a'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ key: 'slice-a', name: 'Corpus slice-a', description: 'A test corpus', enabled: true, limits: { used_docs: 0 } });
    expect(created.body.id).toMatch(/^crp_\d+$/);

    const duplicate = await app.call('POST', '/v2/corpora', corpus('slice-a'));
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.field_errors).toHaveProperty('key');

    const bad = await app.call('POST', '/v2/corpora', corpus('bad key!', { name: 'x'.repeat(256), description: 'd'.repeat(1001) }));
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['description', 'key', 'name']);
    expect((await app.call('POST', '/v2/corpora', corpus('k'.repeat(101)))).status).toBe(400);
    expect((await app.call('POST', '/v2/corpora', corpus('k'.repeat(100)))).status).toBe(201);
    const massAssign = await app.call('POST', '/v2/corpora', { ...corpus('slice-mass'), id: 'crp_1', limits: { used_docs: 9 } });
    expect(massAssign.status).toBe(400);
    expect((await app.call('GET', '/v2/corpora/slice-mass')).status).toBe(404);

    const got = await app.call('GET', '/v2/corpora/slice-a');
    expect(got.body).toEqual(created.body);
    const missing = await app.call('GET', '/v2/corpora/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ id: 'nope', messages: [expect.stringContaining('nope')] });

    await app.call('POST', '/v2/corpora', corpus('slice-b'));
    const page1 = await app.call('GET', '/v2/corpora?limit=1');
    expect(page1.body.corpora).toHaveLength(1);
    const page2 = await app.call('GET', `/v2/corpora?limit=1&page_key=${page1.body.metadata.page_key}`);
    expect(page2.body.corpora[0].key).not.toBe(page1.body.corpora[0].key);
    const filtered = await app.call('GET', '/v2/corpora?filter=slice-b');
    expect(filtered.body.corpora.map((c: { key: string }) => c.key)).toEqual(['slice-b']);
    expect((await app.call('GET', '/v2/corpora?limit=101')).status).toBe(400);

    const updated = await app.call('PATCH', '/v2/corpora/slice-b', { description: 'changed' });
    expect(updated.status).toBe(200);
    expect(updated.body.description).toBe('changed');
  });

  it('indexes core and structured documents, reads them back, and finds them by query', async () => {
    await app.call('POST', '/v2/corpora', corpus('docs'));
    const core = await app.call('POST', '/v2/corpora/docs/documents', coreDoc);
    expect(core.status).toBe(201);
    expect(core.body.id).toBe('doc-core');
    expect((await app.call('POST', '/v2/corpora/docs/documents', structuredDoc)).status).toBe(201);

    const dup = await app.call('POST', '/v2/corpora/docs/documents', coreDoc);
    expect(dup.status).toBe(400);
    expect(dup.body.field_errors).toHaveProperty('id');
    expect((await app.call('POST', '/v2/corpora/missing/documents', coreDoc)).status).toBe(404);
    const badId = await app.call('POST', '/v2/corpora/docs/documents', { ...coreDoc, id: 'a/b' });
    expect(badId.body.field_errors).toHaveProperty('id');
    const longTitle = await app.call('POST', '/v2/corpora/docs/documents', { ...structuredDoc, id: 'x', sections: [{ title: 't'.repeat(256), text: 'x' }] });
    expect(longTitle.status).toBe(400);
    expect(longTitle.body.field_errors).toHaveProperty(['sections.0.title']);

    const got = await app.call('GET', '/v2/corpora/docs/documents/doc-structured');
    expect(got.status).toBe(200);
    expect(got.body.metadata).toEqual({ year: 2020 });
    expect(got.body.parts.map((p: { text: string }) => p.text)).toEqual([
      'Tides are caused by the gravitational pull of the moon.',
      'The sun matters too.',
      'Spring tides happen at new and full moon.',
    ]);
    expect(got.body.parts[0].metadata).toEqual({ section_no: 1, section: 'Causes' });

    const list = await app.call('GET', '/v2/corpora/docs/documents');
    expect(list.body.documents.map((d: { id: string }) => d.id)).toEqual(['doc-core', 'doc-structured']);
    expect((await app.call('GET', '/v2/corpora/docs')).body.limits).toMatchObject({ used_docs: 2, used_parts: 5 });

    const q = await app.call('POST', '/v2/corpora/docs/query', { query: 'what absorbs red light?', search: { lexical_interpolation: 1 } });
    expect(q.status).toBe(200);
    expect(q.body.search_results[0]).toMatchObject({
      document_id: 'doc-core',
      text: 'Chlorophyll absorbs mostly blue and red light.',
      part_metadata: { page: 2 },
      document_metadata: { year: 2024, lang: 'eng' },
      corpus_key: 'docs',
      request_corpora_index: 0,
    });
    const score = q.body.search_results[0].score;
    expect(score).toBeGreaterThan(0);
    expect(score).toBeLessThanOrEqual(1);

    const multi = await app.call('POST', '/v2/query', { query: 'moon tides', search: { corpora: [{ corpus_key: 'slice-a' }, { corpus_key: 'docs' }], limit: 5 } });
    expect(multi.body.search_results[0]).toMatchObject({ document_id: 'doc-structured', corpus_key: 'docs', request_corpora_index: 1 });
    // Corpora are embedded by their encoder now: hybrid search, nothing to warn about.
    expect(multi.body.warnings).toBeUndefined();
    multi.body.search_results.forEach((r: { score: number }) => expect(r.score).toBeGreaterThan(0));
    const onePerDoc = await app.call('POST', '/v2/corpora/docs/query', { query: 'moon tides sun', search: { max_by: 'doc.id' } });
    const perDoc = onePerDoc.body.search_results.map((r: { document_id: string }) => r.document_id);
    expect(perDoc[0]).toBe('doc-structured');
    expect(new Set(perDoc).size).toBe(perDoc.length);
    const simple = await app.call('GET', '/v2/corpora/docs/query?query=chlorophyll&limit=1');
    expect(simple.body.search_results[0].document_id).toBe('doc-core');
  });

  it('rejects bad queries with clear 4xx and answers an empty match with 200', async () => {
    const long = await app.call('POST', '/v2/corpora/docs/query', { query: 'q'.repeat(1001) });
    expect(long.status).toBe(400);
    expect(long.body.field_errors).toHaveProperty('query');
    const weight = await app.call('POST', '/v2/query', { query: 'x', search: { corpora: [{ corpus_key: 'docs', lexical_interpolation: 1.5 }] } });
    expect(weight.status).toBe(400);
    expect(weight.body.field_errors).toHaveProperty(['search.corpora.0.lexical_interpolation']);
    expect((await app.call('POST', '/v2/query', { query: 'x', search: { corpora: [{ corpus_key: 'ghost' }] } })).status).toBe(404);
    const unsupported = await app.call('POST', '/v2/corpora/docs/query', { query: 'x', search: { reranker: { type: 'mmr' } } });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.field_errors).toHaveProperty(['search.reranker.diversity_bias']);
    // Lexically nothing matches; semantic search always has nearest parts, so the default (hybrid) finds some.
    const none = await app.call('POST', '/v2/corpora/docs/query', { query: 'zebra xylophone', search: { lexical_interpolation: 1 } });
    expect(none.status).toBe(200);
    expect(none.body.search_results).toEqual([]);
    expect((await app.call('POST', '/v2/corpora/docs/query', '{"query": ')).status).toBe(400);
  });

  it('deletes a document and a corpus; a deleted key can be created again, empty', async () => {
    expect((await app.call('DELETE', '/v2/corpora/docs/documents/doc-core')).status).toBe(204);
    expect((await app.call('GET', '/v2/corpora/docs/documents/doc-core')).status).toBe(404);
    expect((await app.call('DELETE', '/v2/corpora/docs/documents/doc-core')).status).toBe(404);
    const q = await app.call('GET', '/v2/corpora/docs/query?query=chlorophyll');
    expect(q.body.search_results.map((r: { document_id: string }) => r.document_id)).not.toContain('doc-core');
    expect((await app.call('GET', '/v2/corpora/docs')).body.limits).toMatchObject({ used_docs: 1, used_parts: 3 });

    expect((await app.call('DELETE', '/v2/corpora/docs')).status).toBe(204);
    expect((await app.call('GET', '/v2/corpora/docs')).status).toBe(404);
    expect((await app.call('POST', '/v2/corpora', corpus('docs'))).status).toBe(201);
    expect((await app.call('GET', '/v2/corpora/docs/documents')).body.documents).toEqual([]);
    expect((await app.call('GET', '/v2/corpora/docs/query?query=tides')).body.search_results).toEqual([]);
    expect((await app.call('POST', '/v2/corpora/docs/documents', structuredDoc)).status).toBe(201);
  });

  it('exposes the ordered event log with actor metadata, as a page and as a live stream', async () => {
    const page = await app.call('GET', '/v2/events?category=corpus&limit=1000');
    const types = page.body.events.map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['CorpusCreated', 'CorpusUpdated', 'CorpusDeleted']));
    const first = page.body.events[0];
    expect(first.metadata).toMatchObject({ actor: { type: 'user', id: 'owner', via: 'aky_owner' }, schemaVersion: 1, requestId: expect.any(String) });
    expect(JSON.stringify(page.body)).not.toContain(app.key);

    const ctrl = new AbortController();
    const res = await fetch(`${app.url}/v2/events/stream?type=DocumentIndexed`, { headers: { 'x-api-key': app.key }, signal: ctrl.signal });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    const live = app.call('POST', '/v2/corpora/docs/documents', { ...coreDoc, id: 'live-doc' });
    while (!text.includes('live-doc')) text += new TextDecoder().decode((await reader.read()).value);
    ctrl.abort();
    await live;
    expect(text).toMatch(/event:DocumentIndexed/);
    expect(text).toMatch(/event:caught_up/);
  });

  it('never writes the API key to the log, while logging every request with its id', async () => {
    await app.call('GET', '/v2/corpora', undefined, { 'x-api-key': `${app.key}-wrong`, 'x-request-id': 'req-log-check' });
    const log = app.logLines.join('\n');
    expect(log).toContain('req-log-check');
    expect(log).not.toContain(app.key);
  });
});
