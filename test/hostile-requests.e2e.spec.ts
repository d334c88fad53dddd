import { request } from 'node:http';
import { Worker } from 'node:worker_threads';
import { asKey, createKey, createUser } from './support/auth-fixtures';
import { pollHealth, rawRequest } from '@lib/testing';
import { startTestApp, TestApp } from './support/test-app';

/**
 * A sanity bound on /health while the hostile work runs, on a machine the other test worker shares (1,012 and 1,127 ms
 * were seen there under a full run, with a 1,000 ms bound); the benches measure the figure against its 200 ms bar
 * (docs/benchmarks.md). A stall this bound misses is seen there.
 */
const HEALTH_SANITY_MS = 2_000;

/**
 * Issue 22, the HTTP edge: hostile bodies are refused in linear time, before they are read when the sender
 * is unknown, and a refused request changes nothing. The availability cases poll /health while the hostile
 * request runs: the slowest answer must stay under 1 s (it took 5–25 s before).
 */
describe('hostile requests at the HTTP edge', () => {
  let app: TestApp;
  const eventCount = async () => (await app.started.infra.events.readAll({ after: 0, maxCount: 1_000_000 })).length;

  beforeAll(async () => {
    // Room for the 2.6 MB bodies below on a loaded machine (700 ms gave a 408 under the full suite).
    app = await startTestApp({ env: { REQUEST_BODY_TIMEOUT_MS: '2000' } });
    expect((await app.call('POST', '/v2/corpora', { key: 'c1', name: 'C1' })).status).toBe(201);
  });
  afterAll(async () => app?.close());

  it('refuses a body of 200,000 keys at once, with a field error, while /health keeps answering', async () => {
    // 2.6 MB: past the 1 MB most routes take, so sent where documents go (50 MB).
    const body: Record<string, unknown> = { id: 'wide', type: 'core', document_parts: [{ text: 'x' }] };
    for (let i = 0; i < 200_000; i++) body[`k${i}`] = i;
    const probe = pollHealth(app.url);
    const res = await app.call('POST', '/v2/corpora/c1/documents', body);
    const health = await probe.stop();
    expect(res.status).toBe(400);
    expect(res.body.field_errors).toEqual({ body: 'has more than 1000 keys' });
    expect(typeof res.body.request_id).toBe('string');
    expect(health.slowestMs).toBeLessThan(HEALTH_SANITY_MS);
    expect((await app.call('GET', '/v2/corpora/c1/documents/wide')).status).toBe(404);
  });

  it('takes 1 MB of JSON on a route that does not carry content, 50 MB where documents go, and stores nothing past the bound', async () => {
    const before = await eventCount();
    const pad = 'x'.repeat(1_100_000);
    for (const [path, body] of [
      ['/v2/corpora', { key: 'padded', name: 'Padded', description: pad }],
      ['/v2/corpora/c1/query', { query: 'x', pad }],
      ['/v2/api_keys', { name: 'padded', api_key_role: 'serving', corpus_keys: ['c1'], pad }],
    ] as const) {
      const res = await app.call('POST', path, body);
      expect(res.status).toBe(413);
      expect(res.body.messages).toEqual(['The request body is too large: this route takes at most 1 MB (after decompression)']);
      expect(res.body.request_id).toEqual(expect.any(String));
    }
    expect(await eventCount()).toBe(before);
    // A declared 40 MB to the query route is refused before it is read (then read and thrown away, so that a sender
    // writing it all sees the answer: the next test).
    const forty = 40 * 1024 * 1024;
    const declared = await rawRequest(app.url, { path: '/v2/corpora/c1/query', contentLength: forty, headers: { 'x-api-key': app.key } });
    expect(declared.status).toBe(413);
    expect(declared.bodyBytesBeforeAnswer).toBeLessThan(forty / 4);
    const doc = await app.call('POST', '/v2/corpora/c1/documents', { id: 'large', type: 'core', document_parts: [{ text: `${'word '.repeat(300_000)}` }] });
    expect(doc.status).toBe(201);
  });

  it('answers a sender that expects 100-continue from the headers when it refuses, and asks for the body when it reads it', async () => {
    const reader = await createKey(app, { name: 'expecting', api_key_role: 'serving', corpus_keys: ['c1'] });
    const send = (path: string, body: string, declared = Buffer.byteLength(body), key = app.key) =>
      new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
        let continued = false;
        const req = request(`${app.url}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': declared, expect: '100-continue' } });
        req.on('continue', () => {
          continued = true;
          req.end(body);
        });
        req.on('response', (res) => {
          resolve({ status: res.statusCode!, continued });
          // The refused request's body was never sent: the connection goes (the server closes it too).
          req.destroy();
        });
        req.on('error', reject);
        req.setTimeout(15_000, () => req.destroy(new Error(`no answer to ${path}`)));
        // The headers go now: a request that expects 100-continue sends no body before the answer.
        req.flushHeaders();
      });
    expect(await send('/v2/corpora/c1/query', '', 40 * 1024 * 1024)).toEqual({ status: 413, continued: false });
    expect(await send('/v2/corpora/c1/documents', '', 40 * 1024 * 1024, reader.secret_key)).toEqual({ status: 403, continued: false });
    expect(await send('/v2/corpora/other/documents', '', 40 * 1024 * 1024, reader.secret_key)).toEqual({ status: 404, continued: false });
    expect(await send('/v2/corpora/c1/query', JSON.stringify({ query: 'x' }))).toEqual({ status: 200, continued: true });
  });

  it('lets a sender that does not wait for 100-continue read the refusal of its body, within bounds', async () => {
    // fetch writes the whole body before it reads: closed on it unread, it saw EPIPE, not the answer. From another
    // thread, as a client would be (on the service's own loop the answer is read before the reset comes).
    const twenty = JSON.stringify({ key: 'twenty', name: 'Twenty', description: 'x'.repeat(20 * 1024 * 1024) });
    const tooLarge = await fetchFromThread(`${app.url}/v2/corpora`, app.key, twenty);
    expect(tooLarge).toMatchObject({ status: 413, connection: 'close' });
    expect(JSON.parse(tooLarge.body!).messages).toEqual(['The request body is too large: this route takes at most 1 MB (after decompression)']);
    const reader = await createKey(app, { name: 'no-continue', api_key_role: 'serving', corpus_keys: ['c1'] });
    const document = JSON.stringify({ id: 'refused', type: 'core', document_parts: [{ text: 'word '.repeat(4_000_000) }] });
    const forbidden = await fetchFromThread(`${app.url}/v2/corpora/c1/documents`, reader.secret_key, document);
    expect(forbidden.status).toBe(403);
    expect(JSON.parse(forbidden.body!).request_id).toEqual(expect.any(String));
    expect((await app.call('GET', '/v2/corpora/c1/documents/refused')).status).toBe(404);
    // The answer goes before the body is read; the connection closes once it has been (or after the drain's time,
    // here the 2 s body deadline, for a sender that stalls).
    const stalled = await rawRequest(app.url, { path: '/v2/corpora', contentLength: 3 * 1024 * 1024, sendBytes: 1024 * 1024, headers: { 'x-api-key': app.key } });
    expect(stalled.status).toBe(413);
    expect(stalled.closedAfterMs).toBeGreaterThanOrEqual(1500);
    expect(stalled.closedAfterMs).toBeLessThan(6000);
    // Past the drain's 64 MB the connection is cut as soon as the answer is written.
    const past = await rawRequest(app.url, { path: '/v2/corpora', contentLength: 65 * 1024 * 1024, headers: { 'x-api-key': app.key } });
    expect(past.status).toBe(413);
    expect(past.bodyBytesWritten).toBeLessThan(16 * 1024 * 1024);
  });

  it("decides a caller's right to a route before reading its body: a query-only key's 40 MB document is refused unread", async () => {
    const serving = await createKey(app, { name: 'reader', api_key_role: 'serving', corpus_keys: ['c1'] });
    const forty = 40 * 1024 * 1024;
    const [write, hidden] = await Promise.all([
      rawRequest(app.url, { path: '/v2/corpora/c1/documents', contentLength: forty, headers: { 'x-api-key': serving.secret_key } }),
      rawRequest(app.url, { path: '/v2/corpora/other/documents', contentLength: forty, headers: { 'x-api-key': serving.secret_key } }),
    ]);
    expect(write.status).toBe(403);
    expect(hidden.status).toBe(404);
    for (const o of [write, hidden]) expect(o.bodyBytesBeforeAnswer).toBeLessThan(forty / 4);
    // The multi-corpus query names its corpora in the body: it is read (within 1 MB), then decided.
    const query = await app.call('POST', '/v2/query', { query: 'x', search: { corpora: [{ corpus_key: 'other' }] } }, asKey(serving.secret_key));
    expect(query.status).toBe(404);
  });

  it('refuses metadata of 50,000 keys and metadata nested 1,000 deep before anything is stored: no 2xx, no dead letter', async () => {
    const before = await eventCount();
    const wide: Record<string, number> = {};
    for (let i = 0; i < 50_000; i++) wide[`k${i}`] = i;
    const flat = await app.call('POST', '/v2/corpora/c1/documents', { id: 'wide', type: 'core', document_parts: [{ text: 'x' }], metadata: wide });
    expect(flat.status).toBe(400);
    expect(flat.body.field_errors).toEqual({ 'body.metadata': 'has more than 1000 keys' });
    let deep: unknown = 1;
    for (let i = 0; i < 1000; i++) deep = { d: deep };
    const nested = await app.call('POST', '/v2/corpora/c1/documents', { id: 'deep', type: 'core', document_parts: [{ text: 'x' }], metadata: deep });
    expect(nested.status).toBe(400);
    expect(Object.values(nested.body.field_errors as Record<string, string>)).toEqual(['is nested more than 32 levels deep']);
    const patch = await app.call('PATCH', '/v2/corpora/c1/documents/none', { metadata: deep });
    expect(patch.status).toBe(400);
    expect(await eventCount()).toBe(before);
    expect((await app.call('GET', '/v2/corpora/c1/documents/deep')).status).toBe(404);
    expect(await app.started.infra.runtime!.deadLetters()).toEqual([]);
  });

  it('keeps a metadata key named constructor and refuses __proto__ anywhere in a body', async () => {
    const kept = await app.call('POST', '/v2/corpora/c1/documents', { id: 'ctor', type: 'core', document_parts: [{ text: 'x', metadata: { constructor: 'part' } }], metadata: { constructor: 1, prototype: 2 } });
    expect(kept.status).toBe(201);
    const read = await app.call('GET', '/v2/corpora/c1/documents/ctor');
    expect(read.body.metadata).toEqual({ constructor: 1, prototype: 2 });
    expect(read.body.parts[0].metadata).toEqual({ constructor: 'part' });
    const before = await eventCount();
    const proto = await app.call('POST', '/v2/corpora/c1/documents', '{"id":"p","type":"core","document_parts":[{"text":"x"}],"metadata":{"__proto__":{"admin":true}}}');
    expect(proto.status).toBe(400);
    expect(proto.body.field_errors).toEqual({ 'body.metadata.__proto__': 'is not an allowed key' });
    expect(await eventCount()).toBe(before);
  });

  it('answers a repeated query parameter, a bad compressed body and malformed Basic credentials with 4xx, not 500', async () => {
    for (const path of ['/v2/jobs?page_key=a&page_key=b', '/v2/corpora/c1/documents?page_key=a&page_key=b', '/v2/corpora?limit=1&limit=2']) {
      const res = await app.call('GET', path);
      expect(res.status).toBe(400);
      expect(Object.values(res.body.field_errors as Record<string, string>)).toEqual(['must be given once']);
    }
    const br = await fetch(`${app.url}/v2/corpora`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json', 'content-encoding': 'br' }, body: 'not brotli at all' });
    expect(br.status).toBe(400);
    expect(((await br.json()) as { messages: string[] }).messages[0]).toMatch(/cannot be read/);
    for (const basic of [Buffer.from('a%:b').toString('base64'), '%%%', Buffer.from('nocolon').toString('base64')]) {
      const res = await fetch(`${app.url}/oauth2/token`, { method: 'POST', headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
      expect([400, 401]).toContain(res.status);
    }
    expect(app.logLines.filter((l) => l.includes('unhandled error'))).toEqual([]);
  });

  it('never logs credentials sent in a query string, whatever the parameter is called', async () => {
    const secrets = ['s3cr3t-one', 's3cr3t-two', 's3cr3t-three', 's3cr3t-four', 's3cr3t-five'];
    const res = await app.call('GET', `/v2/corpora?x_api_key=${secrets[0]}&api-key=${secrets[1]}&authorization=${secrets[2]}&password=${secrets[3]}&jwt=${secrets[4]}`, undefined, { 'x-api-key': '' });
    expect(res.status).toBe(401);
    const logged = app.logLines.filter((l) => l.includes(res.body.request_id));
    expect(logged.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(logged.join('\n')).not.toContain(secret);
  });

  it('answers 401 to unauthenticated or wrongly authenticated bodies before reading them, and closes the connection', async () => {
    const fifty = 50 * 1024 * 1024;
    const outcomes = await Promise.all([
      rawRequest(app.url, { path: '/v2/corpora', contentLength: fifty }),
      rawRequest(app.url, { path: '/v2/corpora', contentLength: fifty, headers: { 'x-api-key': 'zqt_aky_1_wrongwrongwrongwrongwrong' } }),
      rawRequest(app.url, { path: '/v2/corpora/c1/documents', contentLength: fifty }),
    ]);
    for (const o of outcomes) {
      expect(o.status).toBe(401);
      expect(o.bodyBytesWritten).toBeLessThan(fifty / 4);
    }
    // Slow bodies without credentials are not held open: each is answered and closed at once.
    const slow = await Promise.all(Array.from({ length: 20 }, () => rawRequest(app.url, { path: '/v2/corpora', contentLength: 1000, sendBytes: 10 })));
    for (const o of slow) {
      expect(o.status).toBe(401);
      expect(o.closedAfterMs).toBeLessThan(2000);
    }
  });

  it('answers 408 and closes a slow body from an authenticated caller after REQUEST_BODY_TIMEOUT_MS', async () => {
    const o = await rawRequest(app.url, { path: '/v2/corpora', contentLength: 1000, sendBytes: 10, headers: { 'x-api-key': app.key } });
    expect(o.status).toBe(408);
    expect(o.response).toMatch(/did not arrive within/);
    expect(o.closedAfterMs).toBeGreaterThanOrEqual(600);
    expect(o.closedAfterMs).toBeLessThan(5000);
  });

  it('limits unauthenticated bodies on public routes to 64 KB', async () => {
    const res = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', pad: 'x'.repeat(70_000) }) });
    expect(res.status).toBe(413);
  });
});

describe('request bodies read at once', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { REQUEST_BODIES_MAX_MB: '1', REQUEST_BODY_TIMEOUT_MS: '3000' } });
    expect((await app.call('POST', '/v2/corpora', { key: 'c1', name: 'C1' })).status).toBe(201);
  });
  afterAll(async () => app?.close());

  it('refuses a body past REQUEST_BODIES_MAX_MB with 503 before reading it, storing nothing, and takes it once the budget is free', async () => {
    const big = JSON.stringify({ id: 'big', type: 'core', document_parts: [{ text: 'word '.repeat(90_000) }] }); // ~450 KB
    // A caller that announces 700 KB and sends 10 bytes holds 700 KB of the 1 MB until its 408.
    const stalled = rawRequest(app.url, { path: '/v2/corpora/c1/documents', contentLength: 700_000, sendBytes: 10, headers: { 'x-api-key': app.key } });
    await new Promise((r) => setTimeout(r, 300));
    const fifty = 50 * 1024 * 1024;
    const refused = await rawRequest(app.url, { path: '/v2/corpora/c1/documents', contentLength: fifty, headers: { 'x-api-key': app.key } });
    expect(refused.status).toBe(503);
    expect(refused.response).toMatch(/retry-after: 1/i);
    expect(refused.response).toMatch(/other request bodies/);
    expect(refused.bodyBytesBeforeAnswer).toBeLessThan(fifty / 4);
    const busy = await app.call('POST', '/v2/corpora/c1/documents', big);
    expect(busy.status).toBe(503);
    expect(busy.body.messages[0]).toMatch(/retry shortly/);
    expect(busy.body.request_id).toEqual(expect.any(String));
    // Small bodies still fit beside the stalled one.
    expect((await app.call('POST', '/v2/corpora/c1/documents', { id: 'small', type: 'core', document_parts: [{ text: 'small' }] })).status).toBe(201);
    expect((await stalled).status).toBe(408);
    expect((await app.call('GET', '/v2/corpora/c1/documents/big')).status).toBe(404);
    expect((await app.call('POST', '/v2/corpora/c1/documents', big)).status).toBe(201);
  });
});

describe('failed authentications and rate limits per owner', () => {
  it('keeps serving credentials that already worked from an address that sends many bad keys, refuses the guesses, and counts token-endpoint failures', async () => {
    const app = await startTestApp({ env: { AUTH_FAILURES_PER_MINUTE: '5' } });
    try {
      const viewer = await createUser(app, 'viewer', { api_roles: ['corpus_administrator'] });
      expect((await app.call('GET', '/v2/corpora', undefined, asKey(viewer))).status).toBe(200);
      const guesses = [];
      for (let i = 0; i < 8; i++) guesses.push((await app.call('GET', '/v2/corpora', undefined, asKey(`zqt_aky_${i}_wrongwrongwrongwrongwrong`))).status);
      expect(guesses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
      // The owner's key and the viewer's key worked from here before: they still do.
      expect((await app.call('GET', '/v2/corpora')).status).toBe(200);
      expect((await app.call('GET', '/v2/corpora', undefined, asKey(viewer))).status).toBe(200);
      // A valid key new to this address waits like a guess (the answer must not tell a guess it was right).
      const fresh = await createKey(app, { name: 'fresh', api_key_role: 'serving', corpus_keys: [] });
      expect((await app.call('GET', '/v2/corpora', undefined, asKey(fresh.secret_key))).status).toBe(429);
      const token = await fetch(`${app.url}/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=x&client_secret=y' });
      expect(token.status).toBe(429);
    } finally {
      await app.close();
    }
  });

  it('counts wrong client secrets at the token endpoint', async () => {
    const app = await startTestApp({ env: { AUTH_FAILURES_PER_MINUTE: '3' } });
    try {
      const statuses = [];
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${app.url}/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=client_credentials&client_id=c${i}&client_secret=wrong` });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await app.close();
    }
  });

  it('tells clients behind a trusted proxy apart by X-Forwarded-For', async () => {
    const app = await startTestApp({ env: { AUTH_FAILURES_PER_MINUTE: '2', TRUST_PROXY: 'loopback' } });
    try {
      const bad = { 'x-api-key': 'zqt_aky_1_wrongwrongwrongwrongwrong', 'x-forwarded-for': '203.0.113.7' };
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await app.call('GET', '/v2/corpora', undefined, bad)).status);
      expect(statuses).toEqual([401, 401, 429]);
      const other = await app.call('GET', '/v2/corpora', undefined, { 'x-api-key': 'zqt_aky_1_wrongwrongwrongwrongwrong', 'x-forwarded-for': '198.51.100.9' });
      expect(other.status).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('limits all the keys of one user together, so minting keys does not multiply the limit', async () => {
    const app = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100', RATE_LIMIT_PER_OWNER_PER_MINUTE: '6' } });
    try {
      const user = await createUser(app, 'minter', { api_roles: ['corpus_administrator'] });
      const second = await createKey(app, { name: 'second', api_key_role: 'personal' }, user);
      const third = await createKey(app, { name: 'third', api_key_role: 'serving', corpus_keys: [] }, user);
      // createKey used the user's key twice: four requests are left for the user, whichever key makes them.
      const statuses = [];
      for (const key of [second.secret_key, third.secret_key, second.secret_key, third.secret_key, second.secret_key]) {
        statuses.push((await app.call('GET', '/v2/corpora', undefined, asKey(key))).status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      // Another user is not affected.
      expect((await app.call('GET', '/v2/corpora')).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});

/** POSTs `body` with fetch from a worker thread: the status, `Connection` header and body it read, or its error's code. */
function fetchFromThread(url: string, key: string, body: string): Promise<{ status?: number; connection?: string | null; body?: string; error?: string }> {
  const code = `const { parentPort, workerData: w } = require('node:worker_threads');
    fetch(w.url, { method: 'POST', headers: { 'x-api-key': w.key, 'content-type': 'application/json' }, body: w.body })
      .then(async (r) => parentPort.postMessage({ status: r.status, connection: r.headers.get('connection'), body: await r.text() }))
      .catch((e) => parentPort.postMessage({ error: String(e.cause?.code ?? e.message) }));`;
  const worker = new Worker(code, { eval: true, workerData: { url, key, body } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => void worker.terminate().then(() => resolve(m)));
    worker.once('error', reject);
  });
}
