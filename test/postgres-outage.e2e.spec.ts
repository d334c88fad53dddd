import { randomBytes } from 'node:crypto';
import { expectReferenceShape } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pg = require('./support/postgres-cluster') as {
  postgresBin: () => string | undefined;
  initCluster: (o: { prefix: string }) => unknown;
  startCluster: (c: unknown, port: number) => string;
  stopCluster: (c: unknown, mode?: 'fast' | 'immediate') => void;
  removeCluster: (c: unknown) => void;
  freePort: () => number;
};

/**
 * Issue 47: the service on PostgreSQL (a cluster of this file's own) while the server is stopped: a write answers 503
 * with Retry-After and the reference error body, never 500; readiness says not ready; once the server is back the
 * service answers again by itself, and what it acknowledged before is still there.
 */
const suite = pg.postgresBin() ? describe : describe.skip;
if (!pg.postgresBin()) process.stderr.write('skipped: the service through a PostgreSQL outage: PostgreSQL is not installed (apt-get install postgresql)\n');

suite('the service through a PostgreSQL outage', () => {
  let cluster: unknown;
  let port: number;
  let app: TestApp;

  beforeAll(async () => {
    cluster = pg.initCluster({ prefix: 'ars-outage-pg-' });
    port = pg.freePort();
    const url = pg.startCluster(cluster, port);
    app = await startTestApp({ env: { POSTGRES_URL: url, OAUTH_SIGNING_KEY: randomBytes(32).toString('base64'), SECRETS_KEY: randomBytes(32).toString('hex'), LAMBDA_SNAPSHOT_AT_START: 'false' } });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    if (cluster) pg.removeCluster(cluster);
  }, 60_000);

  it('answers 503 with Retry-After while PostgreSQL is down, not ready, and recovers by itself with nothing acknowledged lost', async () => {
    expect((await app.call('POST', '/v2/corpora', { key: 'before', name: 'before' })).status).toBe(201);

    pg.stopCluster(cluster, 'fast');
    try {
      const started = Date.now();
      const refused = await app.call('POST', '/v2/corpora', { key: 'during', name: 'during' });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(refused.body).toEqual({ messages: [expect.any(String)], request_id: expect.any(String) });
      expectReferenceShape('Error', refused.body);
      // Neither the database's password nor a stack in the answer.
      expect(JSON.stringify(refused.body)).not.toMatch(/ars-test-password|at .*\.ts:\d+/);
      expect(Date.now() - started).toBeLessThan(15_000);

      const ready = await app.call('GET', '/health/ready', undefined, { 'x-api-key': '' });
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ status: 'not_ready', stores: expect.arrayContaining([expect.objectContaining({ name: 'event_store', ok: false })]) });
      expect(JSON.stringify(ready.body)).not.toMatch(/ars-test-password/);
    } finally {
      pg.startCluster(cluster, port);
    }

    // Back without a restart of the service: the next write succeeds, and the one acknowledged before is there.
    await until('a write to succeed again', async () => ((await app.call('POST', '/v2/corpora', { key: 'after', name: 'after' })).status === 201 ? true : undefined), 30_000, 250);
    const keys = (await app.call('GET', '/v2/corpora?limit=100')).body.corpora.map((c: { key: string }) => c.key);
    expect(keys).toEqual(expect.arrayContaining(['before', 'after']));
    expect((await app.call('GET', '/health/ready', undefined, { 'x-api-key': '' })).status).toBe(200);
    expect(app.logLines.filter((l) => l.includes('"msg":"unhandled error"'))).toEqual([]);
  }, 90_000);
});
