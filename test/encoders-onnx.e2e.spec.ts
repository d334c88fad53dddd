import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { writeTinyCrossEncoder, writeTinyEncoder } from '@lib/testing';
import { referenceErrors } from './support/reference-openapi';
import { scratchDir } from './support/scratch-dir';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 19, real models in process: an `onnx` encoder registered through `POST /v2/encoders` (from a directory, or
 * fetched from a Hub by name) and by environment, and an onnx cross-encoder as the `customer_reranker`. The models
 * are tiny graphs written here: the encoder puts "otter" and "lutra" on one axis, "kelp" and "seaweed" on
 * another, "tide" on a third; the reranker adds +2 per "kelp" and −1 per "otter" over the query and the text.
 */
const WORDS = ['otter', 'lutra', 'kelp', 'seaweed', 'tide', 'the', 'on', 'its', 'back', '##s'];
const AXES: Record<string, number[]> = { otter: [1, 0, 0], lutra: [1, 0, 0], kelp: [0, 1, 0], seaweed: [0, 1, 0], tide: [0, 0, 1] };
const encoderModel = (dir: string) => writeTinyEncoder({ dir, words: WORDS, dimensions: 3, vector: (w) => AXES[w] ?? [0, 0, 0] });
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** A stand-in for the Hugging Face Hub: `/<owner>/<name>/resolve/main/<path>` from a directory per model. */
async function startHub(models: Record<string, string>): Promise<{ url: string; paths: string[]; close: () => Promise<void> }> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url!);
    const m = /^\/([^/]+\/[^/]+)\/resolve\/main\/(.+)$/.exec(req.url!);
    const file = m && models[m[1]] ? join(models[m[1]], m[2]) : undefined;
    if (!file || !existsSync(file)) return void res.writeHead(404).end('Entry not found');
    res.writeHead(200).end(readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, close: () => new Promise((r) => server.close(() => r())) };
}

describe('onnx encoders and rerankers, in process', () => {
  const root = scratchDir('onnx-models-');
  let app: TestApp;
  let hub: Awaited<ReturnType<typeof startHub>>;

  beforeAll(async () => {
    encoderModel(join(root, 'tiny-enc'));
    const env = encoderModel(join(scratchDir('onnx-env-'), 'tiny-env'));
    const reranker = writeTinyCrossEncoder({ dir: scratchDir('onnx-rr-'), words: WORDS, weight: (w) => ({ kelp: 2, otter: -1 })[w] ?? 0 });
    const broken = encoderModel(join(root, 'broken'));
    writeFileSync(join(broken, 'model.onnx'), 'not an onnx graph');
    const noTokenizer = encoderModel(join(root, 'no-tokenizer'));
    writeFileSync(join(noTokenizer, 'tokenizer.json'), '{"version": "1.0"}');
    hub = await startHub({ 'acme/tiny': encoderModel(scratchDir('onnx-hub-')) });
    app = await startTestApp({
      env: { LOG_LEVEL: 'warn', ENCODER_MODELS_ROOT: root, HF_ENDPOINT: hub.url, ENCODER_MODEL_DIR: env, ONNX_ENCODER_NAME: 'tiny-env', RERANKER_MODEL_DIR: reranker, ONNX_RERANKER_NAME: 'tiny-reranker' },
    });
  });
  afterAll(async () => {
    await app?.close();
    await hub?.close();
  });

  const create = (over: Record<string, unknown>) => app.call('POST', '/v2/encoders', { type: 'onnx', name: 'tiny', description: 'Tiny model', model_dir: 'tiny-enc', ...over });

  it('registers a model directory after running it once, learns its length, and lists it beside the configured one', async () => {
    const res = await create({});
    expect(res.status).toBe(201);
    expect(referenceErrors('createEncoder', 201, res.body)).toEqual([]);
    expect(res.body).toMatchObject({ name: 'tiny', type: 'onnx', output_dimensions: 3, enabled: true });
    const list = await app.call('GET', '/v2/encoders?limit=100');
    expect(list.body.encoders).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'tiny-env', type: 'onnx', output_dimensions: 3 }), expect.objectContaining({ name: 'tiny', type: 'onnx' })]));
  });

  it.each([['registered', 'tiny'], ['configured', 'tiny-env']])('embeds a corpus with the %s one: a query for a synonym no text contains finds the text by meaning', async (_, encoder) => {
    const key = `sea-${encoder}`;
    expect((await app.call('POST', '/v2/corpora', { key, name: 'Sea', encoder_name: encoder })).status).toBe(201);
    const texts = ['The otter floats on its back.', 'Kelp grows fast.', 'The tide turns.'];
    for (const [i, text] of texts.entries()) expect((await app.call('POST', `/v2/corpora/${key}/documents`, { type: 'core', id: `d${i}`, document_parts: [{ text }] })).status).toBe(201);
    for (const [query, first] of [['lutra', texts[0]], ['seaweed', texts[1]]]) {
      const q = await app.call('POST', `/v2/corpora/${key}/query`, { query, search: { lexical_interpolation: 0, limit: 3 } });
      expect(q.status).toBe(200);
      expect(q.body.search_results[0].text).toBe(first);
    }
  });

  it('reranks with the onnx cross-encoder: the order and scores are the tiny model\'s', async () => {
    expect((await app.call('GET', '/v2/rerankers')).body.rerankers).toEqual([expect.objectContaining({ id: 'rnk_1', name: 'tiny-reranker' })]);
    expect((await app.call('POST', '/v2/corpora', { key: 'rr', name: 'Rerank' })).status).toBe(201);
    const texts = ['Otter.', 'Otter otter kelp.', 'Kelp.'];
    for (const [i, text] of texts.entries()) expect((await app.call('POST', '/v2/corpora/rr/documents', { type: 'core', id: `r${i}`, document_parts: [{ text }] })).status).toBe(201);
    const q = await app.call('POST', '/v2/corpora/rr/query', { query: 'otter', search: { limit: 3, reranker: { type: 'customer_reranker', reranker_name: 'tiny-reranker' } } });
    expect(q.status).toBe(200);
    // Query "otter" adds −1 to every pair: Kelp. → 1, Otter otter kelp. → −1, Otter. → −2.
    expect(q.body.search_results.map((r: { text: string; score: number }) => [r.text, Number(r.score.toFixed(4))])).toEqual([
      ['Kelp.', Number(sigmoid(1).toFixed(4))],
      ['Otter otter kelp.', Number(sigmoid(-1).toFixed(4))],
      ['Otter.', Number(sigmoid(-2).toFixed(4))],
    ]);
  });

  it('fetches a model from the Hub by name once, and names the URLs tried when it cannot', async () => {
    const res = await app.call('POST', '/v2/encoders', { type: 'onnx', name: 'from-hub', description: '', model: 'acme/tiny' });
    expect(res.status).toBe(201);
    expect(existsSync(join(root, 'acme', 'tiny', 'tokenizer.json'))).toBe(true);
    const fetched = hub.paths.length;
    expect((await app.call('POST', '/v2/encoders', { type: 'onnx', name: 'from-hub-again', description: '', model: 'acme/tiny' })).status).toBe(201);
    expect(hub.paths.length).toBe(fetched);
    const missing = await app.call('POST', '/v2/encoders', { type: 'onnx', name: 'missing', description: '', model: 'acme/missing' });
    expect(missing.status).toBe(400);
    expect(missing.body.field_errors.model).toContain(`${hub.url}/acme/missing/resolve/main/onnx/model.onnx answered 404`);
  });

  it('refuses a missing, broken or out-of-bounds model with a 400 naming the field and what is wrong, and stores nothing', async () => {
    const before = (await app.started.infra.events.readAll({ after: 0, maxCount: 100_000 })).length;
    const cases: [Record<string, unknown>, string, string | RegExp][] = [
      [{ name: 'a', model_dir: 'nowhere' }, 'model_dir', `${join(root, 'nowhere')} is not a directory`],
      [{ name: 'b', model_dir: 'no-tokenizer' }, 'model_dir', 'tokenizer.json has no "model"'],
      [{ name: 'c', model_dir: 'broken' }, 'model_dir', /does not load/],
      [{ name: 'd', model_dir: '../etc' }, 'model_dir', 'is not inside the models directory'],
      [{ name: 'e', model_dir: '/etc' }, 'model_dir', 'is not inside the models directory'],
      [{ name: 'f', model_dir: undefined }, 'model_dir', 'required when model is not given'],
      [{ name: 'g', output_dimensions: 8 }, 'output_dimensions', 'the model gives 3 dimensions, not the 8 asked for'],
      [{ name: 'h', uri: 'http://127.0.0.1/e' }, 'uri', 'only for type "openai-compatible"'],
      [{ name: 'i', pooling: 'max' }, 'pooling', ''],
      [{ name: 'j', type: 'openai-compatible', uri: 'http://127.0.0.1/e', model: 'm' }, 'model_dir', 'only for type "onnx"'],
      [{ name: 'k', model_dir: undefined, model: '../../etc' }, 'model', '"../../etc" is not a Hugging Face model id'],
      [{ name: 'l', file: '../../../etc/passwd.onnx' }, 'model_dir', 'must be a relative path inside the directory ending in .onnx'],
      [{ name: 'm', model_dir: undefined, model: 'acme/tiny', file: '../x.onnx' }, 'model', 'must be a relative path inside the repository'],
    ];
    for (const [over, field, why] of cases) {
      const res = await create(over);
      expect([over, res.status]).toEqual([over, 400]);
      expect([over, res.body.field_errors?.[field]]).toEqual([over, typeof why === 'string' ? expect.stringContaining(why) : expect.stringMatching(why)]);
    }
    expect((await app.started.infra.events.readAll({ after: 0, maxCount: 100_000 })).length).toBe(before);
  });
});
