import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 5 over HTTP: multi-corpus queries with filters and context windows, max_by, and each reranker. */

interface Result {
  text: string;
  score: number;
  document_id: string;
  corpus_key: string;
  request_corpora_index: number;
}

/** A rerank endpoint (Cohere shape) that scores a text by how many times it says "kelp". */
async function startRerankServer(): Promise<{ url: string; requests: unknown[]; close: () => Promise<void> }> {
  const requests: unknown[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { documents } = JSON.parse(body) as { documents: string[] };
      requests.push(JSON.parse(body));
      const results = documents.map((d, index) => ({ index, relevance_score: Math.min(1, (d.match(/kelp/gi) ?? []).length / 3) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/rerank`, requests, close: () => new Promise((r) => server.close(() => r())) };
}

describe('query: context windows, max_by and rerankers (over HTTP)', () => {
  let app: TestApp;
  let reranker: Awaited<ReturnType<typeof startRerankServer>>;
  const query = async (search: Record<string, unknown>, q = 'otters kelp') => app.call('POST', '/v2/query', { query: q, search });
  const results = async (search: Record<string, unknown>, q?: string): Promise<Result[]> => {
    const res = await query(search, q);
    expect(res.status).toBe(200);
    return res.body.search_results;
  };

  beforeAll(async () => {
    reranker = await startRerankServer();
    app = await startTestApp({ env: { RERANKER_URL: reranker.url, RERANKER_NAME: 'kelp-counter' } });
    const attrs = [{ name: 'year', level: 'document', type: 'integer' }];
    for (const key of ['sea', 'lab']) expect((await app.call('POST', '/v2/corpora', { key, name: key, filter_attributes: attrs })).status).toBe(201);
    const doc = (id: string, year: number, text: string) => ({ id, type: 'structured', metadata: { year, boost: year - 2000 }, sections: [{ text }] });
    const docs: [string, ReturnType<typeof doc>][] = [
      ['sea', doc('s1', 2019, 'Tides rise twice a day. Sea otters wrap themselves in kelp to sleep. Their fur is dense. Pups float on their mothers.')],
      ['sea', doc('s2', 2023, 'Sea otters eat urchins, which protects kelp forests from being grazed bare.')],
      ['sea', doc('s3', 2021, 'Sea otters eat urchins, which protects kelp forests from being grazed bare!')],
      ['lab', doc('l1', 2022, 'In the lab, kelp grew faster under blue light. Otters were not involved. Kelp kelp kelp.')],
    ];
    for (const [corpus, d] of docs) expect((await app.call('POST', `/v2/corpora/${corpus}/documents`, d)).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await reranker?.close();
  });

  it('searches several corpora with a filter each, and marks where each result came from', async () => {
    const found = await results({ corpora: [{ corpus_key: 'sea', metadata_filter: 'doc.year >= 2021' }, { corpus_key: 'lab' }], limit: 20 });
    expect(new Set(found.map((r) => `${r.request_corpora_index}:${r.corpus_key}:${r.document_id}`))).toEqual(new Set(['0:sea:s2', '0:sea:s3', '1:lab:l1']));
    expect((await query({ corpora: [{ corpus_key: 'sea', metadata_filter: 'doc.year > 3000' }] })).body.search_results).toEqual([]);
    expect((await query({ corpora: [{ corpus_key: 'nope' }] })).status).toBe(404);
  });

  it('expands matches by sentences or characters with tags, or returns the whole document', async () => {
    const sea = (context_configuration: Record<string, unknown>) => results({ corpora: [{ corpus_key: 'sea', metadata_filter: 'doc.year = 2019' }], limit: 1, context_configuration }, 'wrap sleep');
    expect((await sea({ sentences_before: 1, sentences_after: 1, start_tag: '<b>', end_tag: '</b>' }))[0].text).toBe(
      'Tides rise twice a day. <b>Sea otters wrap themselves in kelp to sleep.</b> Their fur is dense.',
    );
    expect((await sea({ characters_before: 10, characters_after: 12 }))[0].text).toBe('a day. Sea otters wrap themselves in kelp to sleep. Their fur is');
    expect((await sea({ full_document_context: true, sentences_before: 1 }))[0].text).toBe(
      'Tides rise twice a day. Sea otters wrap themselves in kelp to sleep. Their fur is dense. Pups float on their mothers.',
    );
  });

  it('keeps one result per document with max_by', async () => {
    const all = await results({ corpora: [{ corpus_key: 'lab' }], limit: 10 }, 'kelp lab otters');
    expect(all.length).toBeGreaterThan(1);
    const one = await results({ corpora: [{ corpus_key: 'lab' }], limit: 10, max_by: 'doc.id' }, 'kelp lab otters');
    expect(one.map((r) => r.document_id)).toEqual(['l1']);
    expect(one[0].score).toBe(all[0].score);
  });

  it('reorders by a user function over score and metadata, and drops results it maps to null', async () => {
    const search = (user_function: string, extra: Record<string, unknown> = {}) =>
      results({ corpora: [{ corpus_key: 'sea' }], limit: 10, max_by: 'doc.id', reranker: { type: 'userfn', user_function, ...extra } }, 'otters urchins kelp');
    const byYear = await search("get('$.document_metadata.year') - 2000");
    expect(byYear.map((r) => [r.document_id, r.score])).toEqual([['s2', 23], ['s3', 21], ['s1', 19]]);
    const recent = await search("if(get('$.document_metadata.year') >= 2021, get('$.score'), null)");
    expect(recent.map((r) => r.document_id).sort()).toEqual(['s2', 's3']);
    expect((await search('get(\'$.document_metadata.boost\', 0) * 2', { cutoff: 40 })).map((r) => r.document_id)).toEqual(['s2', 's3']);
    const bad = await query({ corpora: [{ corpus_key: 'sea' }], reranker: { type: 'userfn', user_function: "get('$.score' *" } });
    expect(bad.status).toBe(400);
    expect(bad.body.field_errors).toHaveProperty(['search.reranker.user_function']);
  });

  it('diversifies near-duplicates with mmr', async () => {
    const plain = await results({ corpora: [{ corpus_key: 'sea' }], limit: 3, reranker: { type: 'none' } }, 'otters urchins kelp forests');
    expect(plain.slice(0, 2).map((r) => r.document_id).sort()).toEqual(['s2', 's3']);
    const diverse = await results({ corpora: [{ corpus_key: 'sea' }], limit: 3, reranker: { type: 'mmr', diversity_bias: 0.8 } }, 'otters urchins kelp forests');
    expect(diverse[0].document_id).toBe(plain[0].document_id);
    expect(diverse[1].document_id).toBe('s1');
    for (let i = 1; i < diverse.length; i++) expect(diverse[i - 1].score).toBeGreaterThanOrEqual(diverse[i].score);
  });

  it('reranks with the configured model reranker, chains stages with cutoff before limit, and names what to configure', async () => {
    const model = await results({ corpora: [{ corpus_key: 'sea' }, { corpus_key: 'lab' }], limit: 5, reranker: { type: 'customer_reranker', reranker_name: 'kelp-counter' } });
    expect(model[0]).toMatchObject({ document_id: 'l1', score: 1 });
    expect(reranker.requests.length).toBe(1);
    const chained = await results({
      corpora: [{ corpus_key: 'sea' }, { corpus_key: 'lab' }],
      limit: 5,
      reranker: { type: 'chain', rerankers: [{ type: 'customer_reranker', reranker_name: 'kelp-counter', cutoff: 0.3 }, { type: 'userfn', user_function: "get('$.score') / 2", limit: 1 }] },
    });
    expect(chained.map((r) => [r.document_id, r.score])).toEqual([['l1', 0.5]]);
    const unknown = await query({ corpora: [{ corpus_key: 'sea' }], reranker: { type: 'customer_reranker', reranker_name: 'Rerank_Multilingual_v1' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.messages[0]).toMatch(/No reranker named "Rerank_Multilingual_v1": the configured one is "kelp-counter"/);
    expect((await query({ corpora: [{ corpus_key: 'sea' }], reranker: { type: 'mmr' } })).body.field_errors).toHaveProperty(['search.reranker.diversity_bias']);
    expect((await query({ corpora: [{ corpus_key: 'sea' }], reranker: { type: 'magic' } })).status).toBe(400);
  });

  it('scores the text with its context window unless include_context is false, and refuses instructions', async () => {
    const search = (include?: boolean) => ({ corpora: [{ corpus_key: 'sea' }], limit: 5, context_configuration: { sentences_before: 1, sentences_after: 1 }, reranker: { type: 'customer_reranker', reranker_name: 'kelp-counter', ...(include === undefined ? {} : { include_context: include }) } });
    await query(search());
    const withContext = (reranker.requests.at(-1) as { documents: string[] }).documents;
    await query(search(false));
    const plain = (reranker.requests.at(-1) as { documents: string[] }).documents;
    expect(withContext.some((t) => t.includes('Tides rise twice a day. Sea otters wrap themselves in kelp to sleep. Their fur is dense.'))).toBe(true);
    expect(plain.every((t) => !t.includes('Tides rise twice a day. Sea otters'))).toBe(true);
    const refused = await query({ corpora: [{ corpus_key: 'sea' }], reranker: { type: 'customer_reranker', reranker_name: 'kelp-counter', instructions: 'prefer recent' } });
    expect(refused.status).toBe(400);
    expect(refused.body.field_errors).toHaveProperty(['search.reranker.instructions']);
  });

  it('lists the model reranker at GET /v2/rerankers, reachable by its id too, and the table extractor', async () => {
    const listed = await app.call('GET', '/v2/rerankers');
    expect(listed.status).toBe(200);
    expect(listed.body.rerankers).toEqual([{ id: 'rnk_1', name: 'kelp-counter', description: expect.any(String), enabled: true }]);
    expect((await app.call('GET', '/v2/rerankers?filter=nothing-like-it')).body.rerankers).toEqual([]);
    const byId = await results({ corpora: [{ corpus_key: 'sea' }, { corpus_key: 'lab' }], limit: 5, reranker: { type: 'customer_reranker', reranker_id: 'rnk_1' } });
    expect(byId[0]).toMatchObject({ document_id: 'l1', score: 1 });
    const unknownId = await query({ corpora: [{ corpus_key: 'sea' }], reranker: { type: 'customer_reranker', reranker_id: 'rnk_99' } });
    expect(unknownId.status).toBe(400);
    expect(unknownId.body.field_errors).toHaveProperty(['search.reranker.reranker_id']);
    expect((await app.call('GET', '/v2/table_extractors')).body.table_extractors).toEqual([expect.objectContaining({ name: 'structure', is_default: true })]);
  });
});
