import { startTestApp, TestApp } from './support/test-app';

/** `GET /v2/encoders`: the built-in encoder and a configured endpoint, in the reference API's list shape. */
describe('GET /v2/encoders', () => {
  let app: TestApp;
  const env = {
    OPENAI_ENCODER_URL: 'http://127.0.0.1:9/v1',
    OPENAI_ENCODER_MODEL: 'bge-small-en-v1.5',
    OPENAI_ENCODER_DIMENSIONS: '384',
    OPENAI_ENCODER_NAME: 'remote-bge',
  };

  beforeAll(async () => {
    app = await startTestApp({ env });
  });
  afterAll(async () => app.close());

  it('lists the built-in encoders, GloVe as the default, and the configured endpoint after them', async () => {
    const res = await app.call('GET', '/v2/encoders');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      encoders: [
        expect.objectContaining({ id: 'enc_1', name: 'glove-6b-100d', type: 'built-in', output_dimensions: 100, default: true, enabled: true, image_encoding: false }),
        expect.objectContaining({ id: 'enc_2', name: 'universal-sentence-encoder-lite', type: 'built-in', output_dimensions: 512, default: false }),
        expect.objectContaining({ id: 'enc_3', name: 'remote-bge', type: 'openai-compatible', output_dimensions: 384, default: false }),
      ],
      metadata: {},
    });
  });

  it('pages with limit and page_key, and filters by a regular expression', async () => {
    const first = await app.call('GET', '/v2/encoders?limit=2');
    expect(first.body.encoders.map((e: { id: string }) => e.id)).toEqual(['enc_1', 'enc_2']);
    const second = await app.call('GET', `/v2/encoders?limit=2&page_key=${first.body.metadata.page_key}`);
    expect(second.body).toEqual({ encoders: [expect.objectContaining({ id: 'enc_3' })], metadata: {} });
    const filtered = await app.call('GET', '/v2/encoders?filter=^remote');
    expect(filtered.body.encoders.map((e: { name: string }) => e.name)).toEqual(['remote-bge']);
  });

  it('refuses a bad limit, filter or page key with 400', async () => {
    for (const q of ['limit=0', 'limit=101', 'filter=(', 'page_key=not-a-key']) {
      const res = await app.call('GET', `/v2/encoders?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
    }
  });
});
