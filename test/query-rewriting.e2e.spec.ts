import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { referenceErrors, schemaErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 20: `intelligent_query_rewriting` — a registered model extracts a metadata filter and a rephrased query per
 * corpus; the response shows them as `rewritten_queries`, and a failure is the reference's warning value.
 */
const DOCS = [2022, 2023, 2024].map((year) => ({ type: 'structured', id: `otters-${year}`, metadata: { year }, sections: [{ text: `Annual otter survey report: counts along the river in ${year}.` }] }));

describe('intelligent query rewriting', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
    await registerScripted(app, upstream, 'rewriter');
    const created = await app.call('POST', '/v2/corpora', { key: 'surveys', name: 'Surveys', filter_attributes: [{ name: 'year', level: 'document', type: 'integer' }] });
    expect(created.status).toBe(201);
    for (const d of DOCS) expect((await app.call('POST', '/v2/corpora/surveys/documents', d)).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('searches with the extracted filter and rephrased query, shows them, and tells the model the corpus fields', async () => {
    upstream.enqueue({ content: '```json\n{"query": "otter survey report", "metadata_filter": "doc.year = 2023"}\n```' });
    const res = await app.call('POST', '/v2/corpora/surveys/query', { query: 'the otter survey report from 2023', search: { limit: 10 }, intelligent_query_rewriting: true });
    expect(res.status).toBe(200);
    expect(referenceErrors('queryCorpus', 200, res.body)).toEqual([]);
    expect(res.body.search_results.map((r: { document_id: string }) => r.document_id)).toEqual(['otters-2023']);
    expect(res.body.rewritten_queries).toEqual([{ corpus_key: 'surveys', filter_extraction: { query: 'otter survey report', metadata_filter: 'doc.year = 2023' } }]);
    const prompt = JSON.stringify(upstream.chatRequests().at(-1)!.body!.messages);
    expect(prompt).toContain('doc.year (integer)');
    expect(prompt).toContain('the otter survey report from 2023');
  });

  it("keeps the caller's own filter too (both apply)", async () => {
    upstream.enqueue({ content: '{"query": "otter survey", "metadata_filter": "doc.year >= 2023"}' });
    const res = await app.call('POST', '/v2/query', { query: 'recent otter surveys', search: { corpora: [{ corpus_key: 'surveys', metadata_filter: 'doc.year < 2024' }], limit: 10 }, intelligent_query_rewriting: true });
    expect(res.status).toBe(200);
    expect(res.body.search_results.map((r: { document_id: string }) => r.document_id)).toEqual(['otters-2023']);
  });

  it('falls back to the query as sent, warning intelligent_query_rewriting_failed, when the model answers nonsense or an invalid filter', async () => {
    for (const content of ['I cannot help with that.', '{"query": "otters", "metadata_filter": "doc.colour = \'red\'"}']) {
      upstream.enqueue({ content });
      const res = await app.call('POST', '/v2/corpora/surveys/query', { query: 'otter survey report', search: { limit: 10 }, intelligent_query_rewriting: true });
      expect(res.status).toBe(200);
      expect(referenceErrors('queryCorpus', 200, res.body)).toEqual([]);
      expect(res.body.warnings).toEqual(['intelligent_query_rewriting_failed']);
      expect(res.body.rewritten_queries).toEqual([]);
      expect(res.body.search_results).toHaveLength(3);
      expect(res.headers.get('x-query-notices')).toBeNull();
    }
  });

  it('streams rewritten_queries with the results and the rephrased query in generation_info', async () => {
    upstream.enqueue({ content: '{"query": "otter survey report", "metadata_filter": "doc.year = 2022"}' }, { content: 'The 2022 survey counted otters [1].' });
    const raw = await fetch(`${app.url}/v2/corpora/surveys/query`, {
      method: 'POST',
      headers: { 'x-api-key': app.key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'what did the 2022 otter survey find?', intelligent_query_rewriting: true, stream_response: true, generation: { model_parameters: { llm_name: 'rewriter' }, enable_factual_consistency_score: false } }),
    });
    const events = (await raw.text())
      .split('\n\n')
      .filter((b) => b.trim() && !b.startsWith(':'))
      .map((b) => JSON.parse(b.split('\n').find((l) => l.startsWith('data:'))!.slice(5)) as Record<string, any>);
    for (const e of events) expect(schemaErrors('QueryStreamedResponse', e)).toEqual([]);
    const results = events.find((e) => e.type === 'search_results')!;
    expect(results.rewritten_queries).toEqual([{ corpus_key: 'surveys', filter_extraction: { query: 'otter survey report', metadata_filter: 'doc.year = 2022' } }]);
    expect(results.search_results.map((r: { document_id: string }) => r.document_id)).toEqual(['otters-2022']);
    expect(events.find((e) => e.type === 'generation_info')!.rephrased_query).toBe('otter survey report');
  });
});
