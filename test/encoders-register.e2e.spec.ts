import { ScriptedOpenAIServer } from '@lib/testing';
import { createUser } from './support/auth-fixtures';
import { referenceErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 20: `POST /v2/encoders` registers an OpenAI-compatible embeddings endpoint as a named encoder; corpora then
 * embed with it, its credential sealed and never shown.
 */
const TOKEN = 'sekret-embedding-token-0123456789';

/** A toy embedding model: "otter" and "lutra" are the same concept, as a real model would place them. */
function embed(text: string, dims: number): number[] {
  const t = text.toLowerCase();
  const v = [/otter|lutra/.test(t) ? 1 : 0, /kelp|seaweed/.test(t) ? 1 : 0, /tide/.test(t) ? 1 : 0, 0.1];
  return Array.from({ length: dims }, (_, i) => v[i] ?? 0);
}

describe('registered encoders', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.route('POST', '/v1/embeddings', (req) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return { status: 401, json: { error: 'no' } };
      const body = req.body as { input: string[]; model: string; dimensions?: number };
      // `fixed-embed` cannot shorten or lengthen its output, as many models cannot.
      const dims = body.model === 'fixed-embed' ? 4 : (body.dimensions ?? 4);
      return { status: 200, json: { data: body.input.map((text, index) => ({ index, embedding: embed(text, dims) })) } };
    });
    app = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const create = (over: Record<string, unknown> = {}) =>
    app.call('POST', '/v2/encoders', { type: 'openai-compatible', name: 'toy', description: 'Toy embeddings', uri: `${upstream.baseURL}/embeddings`, model: 'toy-embed', auth: { type: 'bearer', token: TOKEN }, ...over });

  it('registers an endpoint after one probe, learns its dimensions, lists it, and never shows or stores the token in clear', async () => {
    const res = await create();
    expect(res.status).toBe(201);
    expect(referenceErrors('createEncoder', 201, res.body)).toEqual([]);
    expect(res.body).toMatchObject({ name: 'toy', type: 'openai-compatible', output_dimensions: 4, enabled: true, default: false });
    const list = await app.call('GET', '/v2/encoders?limit=100');
    expect(referenceErrors('listEncoders', 200, list.body)).toEqual([]);
    expect(list.body.encoders.map((e: { name: string }) => e.name)).toEqual(expect.arrayContaining(['glove-6b-100d', 'toy']));
    const events = await app.started.infra.events.readAll({ after: 0, maxCount: 100_000 });
    expect(events.some((e) => e.type === 'EncoderCreated')).toBe(true);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    expect(JSON.stringify(list.body) + JSON.stringify(res.body)).not.toContain(TOKEN);
  });

  it('embeds a corpus with it: documents and queries go to the endpoint with the credential, and a synonym is found', async () => {
    expect((await app.call('POST', '/v2/corpora', { key: 'toyc', name: 'Toy', encoder_name: 'toy' })).status).toBe(201);
    expect((await app.call('GET', '/v2/corpora/toyc')).body.encoder_name).toBe('toy');
    const before = upstream.requests.length;
    expect((await app.call('POST', '/v2/corpora/toyc/documents', { type: 'core', id: 'd1', document_parts: [{ text: 'The otter floats on its back.' }, { text: 'Tides rise twice a day.' }] })).status).toBe(201);
    const q = await app.call('POST', '/v2/corpora/toyc/query', { query: 'lutra', search: { lexical_interpolation: 0, limit: 1 } });
    expect(q.status).toBe(200);
    expect(q.body.search_results[0].text).toBe('The otter floats on its back.');
    const calls = upstream.requests.slice(before).filter((r) => r.path === '/v1/embeddings');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((r) => r.headers.authorization === `Bearer ${TOKEN}` && (r.body as { model: string }).model === 'toy-embed')).toBe(true);
  });

  it('sends output_dimensions upstream when asked, and refuses a length the endpoint does not give', async () => {
    const sized = await create({ name: 'toy-8', output_dimensions: 8 });
    expect(sized.status).toBe(201);
    expect(sized.body.output_dimensions).toBe(8);
    expect((upstream.requests.at(-1)!.body as { dimensions?: number }).dimensions).toBe(8);
    const fixed = await create({ name: 'fixed', model: 'fixed-embed', output_dimensions: 8 });
    expect(fixed.status).toBe(400);
    expect(fixed.body.field_errors.output_dimensions).toBe('the endpoint returned 4 dimensions, not the 8 asked for');
  });

  it('refuses, naming the field, and stores nothing: taken names, a failing endpoint, a refused host, unsupported types', async () => {
    const cases: [Record<string, unknown>, number, string | undefined][] = [
      [{}, 409, undefined],
      [{ name: 'glove-6b-100d' }, 409, undefined],
      [{ name: 'bad-key', auth: { type: 'bearer', token: 'wrong' } }, 400, 'uri'],
      [{ name: 'private', uri: 'http://10.1.2.3/v1/embeddings' }, 400, 'uri'],
      [{ name: 'creds', uri: 'http://user:pw@127.0.0.1/v1/embeddings' }, 400, 'uri'],
      [{ name: 'vision', type: 'vllm-compatible' }, 400, 'type'],
      [{ name: 'oauth', auth: { type: 'oauth_client_credentials', client_id: 'c', client_secret: 's', token_endpoint: 'http://127.0.0.1/t' } }, 400, 'auth.type'],
      [{ name: 'no-model', model: undefined }, 400, 'model'],
    ];
    for (const [over, status, field] of cases) {
      const res = await create(over);
      expect([over, res.status]).toEqual([over, status]);
      if (field) expect(res.body.field_errors).toHaveProperty([field]);
    }
    const names = (await app.call('GET', '/v2/encoders?limit=100')).body.encoders.map((e: { name: string }) => e.name);
    expect(names.filter((n: string) => ['bad-key', 'private', 'creds', 'vision', 'oauth', 'no-model'].includes(n))).toEqual([]);
    expect(names.filter((n: string) => n === 'toy')).toHaveLength(1);
  });

  it('is for administrators: a corpus viewer may list encoders but not register one', async () => {
    const viewer = await createUser(app, 'viewer', { api_roles: ['corpus_viewer'] });
    expect((await app.call('GET', '/v2/encoders', undefined, { 'x-api-key': viewer })).status).toBe(200);
    expect((await app.call('POST', '/v2/encoders', { type: 'openai-compatible', name: 'x', description: '', uri: 'http://127.0.0.1/e', model: 'm' }, { 'x-api-key': viewer })).status).toBe(403);
  });
});
