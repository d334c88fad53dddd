import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DomainError } from '@lib/platform';
import { dot } from '../vectors';
import { OpenAiEmbeddingsEncoder, OpenAiEncoderOptions } from './openai-embeddings-encoder';

type Handler = (body: { model: string; input: string[] }, req: IncomingMessage, res: ServerResponse) => void;

/** A local embeddings endpoint whose answer each test scripts. */
describe('OpenAiEmbeddingsEncoder against a local endpoint', () => {
  let server: Server;
  let baseUrl = '';
  let handler: Handler = () => undefined;
  const seen: { auth?: string; body: { model: string; input: string[] } }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = JSON.parse(raw) as { model: string; input: string[] };
        seen.push({ auth: req.headers.authorization, body });
        if (req.url !== '/v1/embeddings') return void res.writeHead(404).end();
        handler(body, req, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => (seen.length = 0));

  const encoder = (over: Partial<OpenAiEncoderOptions> = {}) =>
    new OpenAiEmbeddingsEncoder({ name: 'remote', baseUrl, model: 'm', dimensions: 2, apiKey: 'sk-test', batchSize: 2, ...over });
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  async function failure(p: Promise<unknown>): Promise<DomainError> {
    const e = await p.then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(DomainError);
    return e as DomainError;
  }

  it('batches, prefixes, authenticates, reorders by index and normalises', async () => {
    handler = (body, _req, res) =>
      json(res, 200, { data: body.input.map((t, i) => ({ index: i, embedding: [t.length, 0] })).reverse() });
    const vectors = await encoder({ queryPrefix: 'q: ' }).encode(['a', 'bbb', 'cc'], 'query');
    expect(seen.map((s) => s.body.input)).toEqual([['q: a', 'q: bbb'], ['q: cc']]);
    expect(seen.every((s) => s.auth === 'Bearer sk-test' && s.body.model === 'm')).toBe(true);
    expect(vectors.map((v) => Array.from(v))).toEqual([[1, 0], [1, 0], [1, 0]]);
    expect(dot(vectors[0], vectors[0])).toBeCloseTo(1);
  });

  it('turns an HTTP error into a typed upstream error with the status', async () => {
    handler = (_b, _r, res) => json(res, 500, { error: { message: 'model not loaded' } });
    const e = await failure(encoder().encode(['x'], 'document'));
    expect(e).toMatchObject({ kind: 'upstream', code: 'encoder.http_error' });
    expect(e.message).toContain('500');
    expect(e.message).not.toContain('sk-test');
  });

  it('refuses vectors of the wrong length rather than storing them', async () => {
    handler = (body, _r, res) => json(res, 200, { data: body.input.map((_t, i) => ({ index: i, embedding: [1, 2, 3] })) });
    expect(await failure(encoder().encode(['x'], 'document'))).toMatchObject({ kind: 'upstream', code: 'encoder.bad_response' });
  });

  it('gives up after the timeout', async () => {
    handler = () => undefined;
    expect(await failure(encoder({ timeoutMs: 200 }).encode(['x'], 'document'))).toMatchObject({ kind: 'timeout', code: 'encoder.timeout' });
  });

  it('says when the endpoint cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const e = await failure(encoder({ baseUrl: `http://127.0.0.1:${port}/v1` }).encode(['x'], 'document'));
    expect(e).toMatchObject({ kind: 'unavailable', code: 'encoder.unreachable' });
  });
});
