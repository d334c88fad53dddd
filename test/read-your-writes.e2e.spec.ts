import { startTestApp, TestApp } from './support/test-app';

describe('read-your-writes', () => {
  let app: TestApp;
  afterEach(async () => app?.close());

  it('answers a write after the reads it implies are visible, and ties its events to the request id', async () => {
    app = await startTestApp();
    const res = await app.call('POST', '/v2/corpora', { key: 'ryw', name: 'RYW' }, { 'x-request-id': 'req-ryw-1' });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-request-id')).toBe('req-ryw-1');
    expect((await app.call('GET', '/v2/corpora/ryw')).status).toBe(200);
    const events = await app.call('GET', '/v2/events?type=CorpusCreated');
    expect(events.body.events.at(-1).metadata).toMatchObject({ requestId: 'req-ryw-1', correlationId: 'req-ryw-1' });
  });

  it('split roles: an API process waits for a worker process; with no worker, a durable write answers 202', async () => {
    const worker = await startTestApp({ role: 'worker' });
    app = await startTestApp({ role: 'api', dataDir: worker.dataDir, env: { READ_YOUR_WRITES_TIMEOUT_MS: '300' } });
    const first = await app.call('POST', '/v2/corpora', { key: 'split', name: 'Split' });
    expect(first.status).toBe(201);
    expect((await app.call('GET', '/v2/corpora/split')).status).toBe(200);
    expect((await worker.call('GET', '/v2/corpora/split')).status).toBe(404);

    await worker.started.app.close();
    const late = await app.call('POST', '/v2/corpora', { key: 'late', name: 'Late' });
    expect(late.status).toBe(202);
    expect(late.headers.get('x-read-your-writes')).toBe('pending');
    expect((await app.call('GET', '/v2/corpora/late')).status).toBe(404);
    expect((await app.call('POST', '/v2/corpora', { key: 'late', name: 'Late' })).status).toBe(400);

    const restarted = await startTestApp({ role: 'worker', dataDir: worker.dataDir });
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await app.call('GET', '/v2/corpora/late')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(200);
    await restarted.started.app.close();
  });
});
