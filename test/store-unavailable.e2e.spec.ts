import { DomainError, EventStore } from '@lib/platform';
import { expectReferenceShape } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 47: while the event store's database cannot be reached (PostgreSQL restarting, a link cut), a request that
 * needs it is answered 503 with Retry-After and the reference error body, never 500; readiness says not ready; and
 * the service answers again by itself once the store is back. The store is the app's own, its methods replaced for
 * the outage, as the PostgreSQL adapter fails (`event_store.unavailable`) or as a driver error that reached the edge
 * untranslated (node-postgres's "Connection terminated unexpectedly").
 */
describe('the event store unreachable', () => {
  let app: TestApp;
  let events: EventStore;
  const saved: Partial<Record<keyof EventStore, unknown>> = {};

  /** Makes `method` of the store fail with `error` (or never answer) until `restore()`. */
  const outage = (methods: (keyof EventStore)[], fail: () => Promise<never>) => {
    for (const m of methods) {
      saved[m] ??= events[m];
      (events as unknown as Record<string, unknown>)[m] = fail;
    }
  };
  const restore = () => {
    for (const [m, f] of Object.entries(saved)) (events as unknown as Record<string, unknown>)[m] = f;
    for (const m of Object.keys(saved)) delete saved[m as keyof EventStore];
  };
  const createCorpus = (key: string) => app.call('POST', '/v2/corpora', { key, name: key });

  beforeAll(async () => {
    app = await startTestApp();
    events = app.started.infra.events;
  });
  afterEach(restore);
  afterAll(async () => {
    restore();
    await app?.close();
  });

  it.each([
    ['the adapter says event_store.unavailable', () => new DomainError('unavailable', 'event_store.unavailable', 'The event store cannot be reached right now: retry in a few seconds')],
    ['a connection error reaches the edge untranslated', () => new Error('Connection terminated unexpectedly')],
    ['the server is shutting down (57P01)', () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', severity: 'FATAL' })],
  ])('a write answers 503 with Retry-After and the reference error body when %s, and succeeds once the store is back', async (_case, error) => {
    outage(['append', 'readStream'], () => Promise.reject(error()));
    const refused = await createCorpus(`down-${Math.random().toString(36).slice(2, 8)}`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(refused.body).toEqual({ messages: [expect.stringMatching(/cannot be reached right now/)], request_id: expect.any(String) });
    expectReferenceShape('Error', refused.body);

    restore();
    const key = `back-${Math.random().toString(36).slice(2, 8)}`;
    const created = await createCorpus(key);
    expect(created.status).toBe(201);
    expect((await app.call('GET', `/v2/corpora/${key}`)).status).toBe(200);
    // A 503 of an unreachable store is expected, not a defect: nothing logged as an unhandled error.
    expect(app.logLines.filter((l) => l.includes('"msg":"unhandled error"'))).toEqual([]);
  });

  it('keeps a Retry-After the adapter chose', async () => {
    outage(['append', 'readStream'], () => Promise.reject(new DomainError('unavailable', 'event_store.unavailable', 'down', { retryAfterSeconds: 7 })));
    const refused = await createCorpus('down-retry-after');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('7');
  });

  it('gives no Retry-After to an unavailable setting that no wait mends', async () => {
    outage(['append', 'readStream'], () => Promise.reject(new DomainError('unavailable', 'encoder.not_configured', 'The encoder is not configured')));
    const refused = await createCorpus('down-not-configured');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBeNull();
  });

  it('readiness says not ready while the store fails its ping or does not answer it, and ready again after', async () => {
    const ready = () => app.call('GET', '/health/ready', undefined, { 'x-api-key': '' });
    expect((await ready()).status).toBe(200);

    outage(['ping'], () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })));
    const failing = await ready();
    expect(failing.status).toBe(503);
    expect(failing.body).toMatchObject({ status: 'not_ready', stores: expect.arrayContaining([expect.objectContaining({ name: 'event_store', ok: false })]) });

    // A cut link: the ping never answers. The probe still answers, within its bound.
    outage(['ping'], () => new Promise<never>(() => undefined));
    const started = Date.now();
    const hanging = await ready();
    expect(hanging.status).toBe(503);
    expect(hanging.body.stores.find((s: { name: string }) => s.name === 'event_store')).toMatchObject({ ok: false, error: expect.stringMatching(/no answer within 2000 ms/) });
    expect(Date.now() - started).toBeLessThan(5_000);

    restore();
    expect((await ready()).status).toBe(200);
  });
});
