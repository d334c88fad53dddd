import { createServer, Server } from 'node:http';
import { decodeVector } from '@lib/corpora';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Hybrid search (issue 5, docs/search.md): corpora keep the encoder they were created with, documents are
 * embedded into their DocumentIndexed events, and queries blend the semantic and the lexical score by
 * lexical_interpolation.
 */
describe('hybrid search over HTTP', () => {
  let app: TestApp;
  let embeddings: Server;
  let embeddingsUp = true;
  const requests: string[][] = [];

  /** A deterministic OpenAI-compatible embeddings endpoint: 3 dimensions, one per topic word family. */
  const topics = [/\b(apples?|fruit|orchards?)\b/gi, /\b(engines?|motors?|cars?)\b/gi, /\b(rivers?|water|floods?)\b/gi];
  const embed = (text: string) => {
    const v = topics.map((t) => (text.match(t) ?? []).length + 0.01);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };

  beforeAll(async () => {
    embeddings = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        if (!embeddingsUp) {
          res.writeHead(500).end('{"error":"down"}');
          return;
        }
        const input = (JSON.parse(body) as { input: string[] }).input;
        requests.push(input);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: input.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) })), model: 'topics' }));
      });
    });
    await new Promise<void>((r) => embeddings.listen(0, '127.0.0.1', r));
    const port = (embeddings.address() as { port: number }).port;
    app = await startTestApp({
      env: { OPENAI_ENCODER_URL: `http://127.0.0.1:${port}/v1`, OPENAI_ENCODER_MODEL: 'topics', OPENAI_ENCODER_DIMENSIONS: '3', OPENAI_ENCODER_NAME: 'topics' },
    });
  }, 60_000);
  afterAll(async () => {
    await app.close();
    await new Promise((r) => embeddings.close(r));
  });

  const core = (id: string, text: string) => ({ id, type: 'core', metadata: {}, document_parts: [{ text }] });
  const ids = (res: { body: { search_results: { document_id: string }[] } }) => res.body.search_results.map((r) => r.document_id);

  it('gives a corpus the default encoder (GloVe) when none is named, and refuses an unknown one with nothing created', async () => {
    expect((await app.call('POST', '/v2/corpora', { key: 'plain', name: 'Plain' })).status).toBe(201);
    expect((await app.call('GET', '/v2/corpora/plain')).body.encoder_name).toBe('glove-6b-100d');
    const bad = await app.call('POST', '/v2/corpora', { key: 'bad', name: 'Bad', encoder_name: 'no-such-encoder' });
    expect(bad.status).toBe(400);
    expect(bad.body.field_errors).toHaveProperty('encoder_name');
    expect((await app.call('GET', '/v2/corpora/bad')).status).toBe(404);
  });

  it('finds by meaning with the built-in encoder: a synonym with no word in common ranks first when semantic', async () => {
    await app.call('POST', '/v2/corpora/plain/documents', core('medical', 'The physician examined the patient and prescribed medicine.'));
    await app.call('POST', '/v2/corpora/plain/documents', core('sport', 'The football team won the championship final on Sunday.'));
    await app.call('POST', '/v2/corpora/plain/documents', core('weather', 'Heavy snow closed the mountain roads overnight.'));
    const semantic = await app.call('POST', '/v2/corpora/plain/query', { query: 'doctor', search: { lexical_interpolation: 0 } });
    expect(ids(semantic)[0]).toBe('medical');
    // No part holds the word "doctor": lexically nothing matches.
    expect(ids(await app.call('POST', '/v2/corpora/plain/query', { query: 'doctor', search: { lexical_interpolation: 1 } }))).toEqual([]);
    const hybrid = await app.call('POST', '/v2/corpora/plain/query', { query: 'doctor' });
    expect(ids(hybrid)[0]).toBe('medical');
    for (const r of [...semantic.body.search_results, ...hybrid.body.search_results]) {
      expect(r.score).toBeGreaterThanOrEqual(0);
      expect(r.score).toBeLessThanOrEqual(1);
    }
    expect(hybrid.body.warnings).toBeUndefined();
  });

  it('records each part’s vector in the DocumentIndexed event, from the corpus’s encoder', async () => {
    const page = await app.call('GET', '/v2/events?category=document&limit=1000');
    const indexed = page.body.events.find((e: { type: string; data: { documentId: string } }) => e.type === 'DocumentIndexed' && e.data.documentId === 'medical');
    expect(indexed.data.embedding).toMatchObject({ encoder: 'glove-6b-100d', dimensions: 100 });
    expect(indexed.data.embedding.vectors).toHaveLength(indexed.data.parts.length);
    const v = decodeVector(indexed.data.embedding.vectors[0]);
    expect(v).toHaveLength(100);
    expect(Math.hypot(...v)).toBeCloseTo(1, 4);
  });

  it('moves results with lexical_interpolation: the lexical side wins at 1, the semantic side at 0', async () => {
    await app.call('POST', '/v2/corpora', { key: 'topics', name: 'Topics', encoder_name: 'topics' });
    expect((await app.call('GET', '/v2/corpora/topics')).body.encoder_name).toBe('topics');
    // "engine" is the query's only word; the car document says it once, the fruit document says it three times
    // but is about fruit.
    await app.call('POST', '/v2/corpora/topics/documents', core('cars', 'Motors and cars: the motor of a car.'));
    await app.call('POST', '/v2/corpora/topics/documents', core('fruit', 'An engine engine engine for apples, fruit and orchards of apples and fruit.'));
    const at = async (lexical_interpolation: number) => ids(await app.call('POST', '/v2/corpora/topics/query', { query: 'engine', search: { lexical_interpolation } }));
    expect(await at(1)).toEqual(['fruit']);
    expect((await at(0))[0]).toBe('cars');
    // The query was encoded by the corpus's encoder, as a query.
    expect(requests.some((r) => r.length === 1 && r[0] === 'engine')).toBe(true);
  });

  it('fails indexing with a clear 5xx when the corpus’s encoder is down, and stores nothing', async () => {
    embeddingsUp = false;
    try {
      const res = await app.call('POST', '/v2/corpora/topics/documents', core('rivers', 'Rivers flood after rain.'));
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(res.body.messages[0]).toMatch(/encoder|embedding/i);
      expect((await app.call('GET', '/v2/corpora/topics/documents/rivers')).status).toBe(404);
      expect((await app.call('GET', '/v2/corpora/topics')).body.limits.used_docs).toBe(2);
    } finally {
      embeddingsUp = true;
    }
    expect((await app.call('POST', '/v2/corpora/topics/documents', core('rivers', 'Rivers flood after rain.'))).status).toBe(201);
  });

  it('resets a corpus and keeps its encoder: new documents are embedded and found by meaning', async () => {
    expect((await app.call('POST', '/v2/corpora/topics/reset')).status).toBeLessThan(300);
    await app.call('POST', '/v2/corpora/topics/documents', core('water', 'Rivers and water.'));
    await app.call('POST', '/v2/corpora/topics/documents', core('orchard', 'Apples in the orchard.'));
    expect((await at0('flood'))[0]).toBe('water');
  });

  const at0 = async (query: string) => ids(await app.call('POST', '/v2/corpora/topics/query', { query, search: { lexical_interpolation: 0 } }));

  it('diversifies with mmr by the parts\' stored vectors: a paraphrase sharing no topic word is demoted, not the other topic', async () => {
    await app.call('POST', '/v2/corpora', { key: 'mmr', name: 'MMR', encoder_name: 'topics' });
    // BM25 order for "report": apples (3×) > orchards (2×) > cars (1×). Word sets: each pair shares only "report",
    // so words alone cannot tell the paraphrase from the other topic; the vectors can (fruit, fruit, cars).
    for (const [id, text] of [
      ['apples', 'report report report apples apples'],
      ['orchards', 'report report orchards orchards'],
      ['cars', 'report cars cars'],
      ['rivers', 'rivers and water'],
      ['floods', 'floods of water'],
    ]) {
      expect((await app.call('POST', '/v2/corpora/mmr/documents', core(id, text))).status).toBe(201);
    }
    const ask = async (reranker?: object) => {
      const res = await app.call('POST', '/v2/corpora/mmr/query', { query: 'report', search: { lexical_interpolation: 1, limit: 3, ...(reranker && { reranker }) } });
      expect(res.status).toBe(200);
      expect(res.body.search_results.every((r: Record<string, unknown>) => !('vector' in r) && !('encoder' in r))).toBe(true);
      return ids(res);
    };
    expect(await ask()).toEqual(['apples', 'orchards', 'cars']);
    expect(await ask({ type: 'mmr', diversity_bias: 0.8 })).toEqual(['apples', 'cars', 'orchards']);
    expect(await ask({ type: 'chain', rerankers: [{ type: 'mmr', diversity_bias: 0.8 }] })).toEqual(['apples', 'cars', 'orchards']);
  });
});
