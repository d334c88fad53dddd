import { startTestApp, TestApp } from './support/test-app';

/** `encoder_name: "none"`: a corpus searched by BM25 alone, whose documents carry no vectors (docs/search.md). */
describe('a lexical-only corpus', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('is created with encoder_name "none", indexes documents without vectors and answers queries without a notice', async () => {
    const created = await app.call('POST', '/v2/corpora', { key: 'plain', name: 'Plain', encoder_name: 'none' });
    expect(created.status).toBe(201);
    expect(created.body.encoder_name).toBe('none');
    expect((await app.call('GET', '/v2/corpora/plain')).body.encoder_name).toBe('none');

    for (const [id, text] of [['d1', 'quokkas live on Rottnest island'], ['d2', 'penguins live in Antarctica']]) {
      expect((await app.call('POST', '/v2/corpora/plain/documents', { id, type: 'core', document_parts: [{ text }] })).status).toBe(201);
    }
    const indexed = await app.call('GET', '/v2/events?type=DocumentIndexed');
    expect(indexed.body.events).toHaveLength(2);
    for (const e of indexed.body.events) expect(e.data.embedding).toBeUndefined();

    // The default lexical_interpolation asks for semantics too; a lexical-only corpus has nothing to warn about.
    const res = await app.call('POST', '/v2/corpora/plain/query', { query: 'where do quokkas live' });
    expect(res.status).toBe(200);
    expect(res.body.search_results.map((r: { document_id: string }) => r.document_id)).toEqual(['d1', 'd2']);
    expect(res.headers.get('x-query-notices')).toBeNull();
  });

  it('keeps the name "none" from registered encoders', async () => {
    const res = await app.call('POST', '/v2/encoders', { type: 'openai-compatible', name: 'none', description: '', uri: 'http://127.0.0.1/e', model: 'm' });
    expect(res.status).toBe(409);
    expect(res.body.messages[0]).toMatch(/"none" is reserved/);
    expect((await app.call('GET', '/v2/encoders')).body.encoders.map((e: { name: string }) => e.name)).not.toContain('none');
  });
});
