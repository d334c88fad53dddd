import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { asBearer, asKey, createClient, createUser } from './support/auth-fixtures';
import { startTestApp, TestApp } from './support/test-app';

describe('users, keys, app clients and tokens (issue 3)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    await app.call('POST', '/v2/corpora', { key: 'c1', name: 'C1' });
    await app.call('POST', '/v2/corpora/c1/documents', { id: 'd1', type: 'core', document_parts: [{ text: 'Bearer tokens reach this.' }] });
  });
  afterAll(async () => app?.close());

  it('bootstraps the owner as a user whose personal key is the bootstrap key', async () => {
    const owner = await app.call('GET', '/v2/users/owner');
    expect(owner.body).toMatchObject({ username: 'owner', enabled: true, api_roles: ['owner'] });
    // No ADMIN_EMAIL: the reference requires an e-mail in a format clients check; the owner gets the local
    // mailbox of its name rather than none or an address somewhere else.
    expect(owner.body.email).toBe('owner@localhost.localdomain');
    expect((await app.call('GET', '/v2/api_keys/aky_owner')).body).toMatchObject({ id: 'aky_owner', api_key_role: 'personal', enabled: true, secret_key: 'zut_aky_owner_****' });
  });

  it('creates, lists, updates, disables and deletes users; a user signs in with the key handed over at creation', async () => {
    const created = await app.call('POST', '/v2/users', { email: 'ada@example.com', username: 'ada', description: 'analyst', corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ username: 'ada', email: 'ada@example.com', enabled: true, corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
    expect(created.body.id).toMatch(/^usr_/);
    const key = created.body.api_key as string;
    expect(key).toMatch(/^zut_aky_\d+_/);
    expect((await app.call('GET', '/v2/corpora/c1/query?query=tokens', undefined, asKey(key))).status).toBe(200);
    expect((await app.call('POST', '/v2/users', { email: 'ada@example.com', username: 'ada' })).status).toBe(400);

    const list = await app.call('GET', '/v2/users?corpus_key=c1');
    expect(list.body.users.map((u: { username: string }) => u.username)).toEqual(['ada']);
    const paged = await app.call('GET', '/v2/users?limit=1');
    expect(paged.body.users).toHaveLength(1);
    expect(paged.body.metadata.page_key).toBeDefined();

    // The reference's UpdateUserRequest carries a description; the same one again records nothing.
    const described = await app.call('PATCH', '/v2/users/ada', { description: 'lead analyst' });
    expect([described.status, described.body.description]).toEqual([200, 'lead analyst']);
    const before = (await app.call('GET', '/v2/events?category=user&limit=1000')).body.events.length;
    expect(before).toBeGreaterThan(0);
    expect((await app.call('PATCH', '/v2/users/ada', { description: 'lead analyst' })).status).toBe(200);
    expect((await app.call('GET', '/v2/events?category=user&limit=1000')).body.events.length).toBe(before);

    const promoted = await app.call('PATCH', '/v2/users/ada', { corpus_roles: [{ corpus_key: 'c1', role: 'editor' }] });
    expect(promoted.body.corpus_roles).toEqual([{ corpus_key: 'c1', role: 'editor' }]);
    expect((await app.call('POST', '/v2/corpora/c1/documents', { id: 'ada', type: 'core', document_parts: [{ text: 'by ada' }] }, asKey(key))).status).toBe(201);

    expect((await app.call('PATCH', '/v2/users/ada', { enabled: false })).body.enabled).toBe(false);
    expect((await app.call('GET', '/v2/corpora', undefined, asKey(key))).status).toBe(401);
    await app.call('PATCH', '/v2/users/ada', { enabled: true });
    expect((await app.call('GET', '/v2/corpora', undefined, asKey(key))).status).toBe(200);

    expect((await app.call('DELETE', '/v2/users/ada')).status).toBe(204);
    expect((await app.call('GET', '/v2/users/ada')).status).toBe(404);
    expect((await app.call('GET', '/v2/corpora', undefined, asKey(key))).status).toBe(401);
    // Re-creating the name gives a new user: the old key does not come back to life.
    await app.call('POST', '/v2/users', { email: 'ada@example.com', username: 'ada', api_roles: ['viewer'] });
    expect((await app.call('GET', '/v2/corpora', undefined, asKey(key))).status).toBe(401);
  });

  it('answers reset_password honestly: users have no password; the 400 says what to do, an unknown user is 404', async () => {
    await app.call('POST', '/v2/users', { email: 'reset-me@example.com', username: 'reset-me' });
    const res = await app.call('POST', '/v2/users/reset-me/reset_password');
    expect(res.status).toBe(400);
    expect(res.body.messages[0]).toMatch(/has no password to reset: users of this service authenticate with API keys/);
    expect(res.body.request_id).toEqual(expect.any(String));
    expect((await app.call('POST', '/v2/users/nobody-here/reset_password')).status).toBe(404);
  });

  it('creates query and index keys, shows the secret once, and disables and deletes them', async () => {
    const q = await app.call('POST', '/v2/api_keys', { name: 'reader', api_key_role: 'serving', corpus_keys: ['c1'] });
    expect(q.status).toBe(201);
    expect(q.body).toMatchObject({ name: 'reader', api_key_role: 'serving', enabled: true, corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
    expect(q.body.secret_key).toMatch(/^zqt_aky_\d+_[A-Za-z0-9_-]{43}$/);
    const w = await app.call('POST', '/v2/api_keys', { name: 'writer', corpus_roles: [{ corpus_key: 'c1', role: 'editor' }] });
    expect(w.body.secret_key).toMatch(/^zwt_/);
    expect(w.body.api_key_role).toBe('serving_and_indexing');

    const read = await app.call('GET', `/v2/api_keys/${q.body.id}`);
    expect(read.body.secret_key).toBe(`zqt_${q.body.id}_****`);
    expect((await app.call('GET', '/v2/api_keys?api_key_role=serving')).body.api_keys.map((k: { id: string }) => k.id)).toContain(q.body.id);
    expect((await app.call('GET', '/v2/api_keys?corpus_key=c1&limit=100')).body.api_keys.map((k: { id: string }) => k.id).sort()).toEqual([q.body.id, w.body.id].sort());

    const doc = { id: 'w1', type: 'core', document_parts: [{ text: 'indexed by a key' }] };
    expect((await app.call('POST', '/v2/corpora/c1/documents', doc, asKey(w.body.secret_key))).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora/c1/documents', doc, asKey(q.body.secret_key))).status).toBe(403);
    expect((await app.call('DELETE', '/v2/corpora/c1', undefined, asKey(w.body.secret_key))).status).toBe(403);

    expect((await app.call('PATCH', `/v2/api_keys/${q.body.id}`, { enabled: false })).body.enabled).toBe(false);
    expect((await app.call('GET', '/v2/corpora/c1', undefined, asKey(q.body.secret_key))).status).toBe(401);
    await app.call('PATCH', `/v2/api_keys/${q.body.id}`, { enabled: true });
    expect((await app.call('GET', '/v2/corpora/c1', undefined, asKey(q.body.secret_key))).status).toBe(200);
    expect((await app.call('DELETE', `/v2/api_keys/${q.body.id}`)).status).toBe(204);
    expect((await app.call('GET', '/v2/corpora/c1', undefined, asKey(q.body.secret_key))).status).toBe(401);
    expect((await app.call('DELETE', '/v2/api_keys/aky_owner')).status).toBe(409);
  });

  it('issues 30-minute client-credentials tokens (form and JSON) that authenticate as the app client', async () => {
    const client = await createClient(app, 'search service', { corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
    expect(client.client_secret).toBeTruthy();
    expect((await app.call('GET', `/v2/app_clients/${client.id}`)).body).toMatchObject({ name: 'search service', client_id: client.client_id, client_secret: '****' });
    const form = await fetch(`${app.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }),
    });
    const token = (await form.json()) as { access_token: string; token_type: string; expires_in: number };
    expect(form.status).toBe(200);
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 1800 });
    const basic = await fetch(`${app.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    expect(basic.status).toBe(200);
    const q = await app.call('GET', '/v2/corpora/c1/query?query=bearer', undefined, asBearer(token.access_token));
    expect(q.status).toBe(200);
    expect(q.body.search_results[0].document_id).toBe('d1');
    expect((await app.call('POST', '/v2/corpora/c1/documents', { id: 'x', type: 'core', document_parts: [{ text: 'x' }] }, asBearer(token.access_token))).status).toBe(403);

    const post = (path: string, body: unknown) => fetch(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const wrong = await post('/oauth/token', { grant_type: 'client_credentials', client_id: client.client_id, client_secret: 'wrong' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_client', messages: [expect.any(String)], request_id: expect.any(String) });
    expect((await post('/oauth/token', { grant_type: 'password', client_id: 'a', client_secret: 'b' })).status).toBe(400);
    expect((await post('/oauth/token', {})).status).toBe(400);

    expect((await app.call('DELETE', `/v2/app_clients/${client.id}`)).status).toBe(204);
    expect((await app.call('GET', '/v2/corpora/c1', undefined, asBearer(token.access_token))).status).toBe(401);
  });

  it('lets owners read the audit trail: who did what, through which key, in which request', async () => {
    const admin = await createUser(app, 'auditee', { api_roles: ['administrator'] });
    const made = await app.call('POST', '/v2/users', { email: 'z@example.com', username: 'zed' }, { ...asKey(admin), 'x-request-id': 'req-audit-1' });
    expect(made.status).toBe(201);
    const trail = await app.call('GET', '/v2/audit?actor=auditee&category=user');
    expect(trail.status).toBe(200);
    const entry = trail.body.entries.find((e: { type: string; data: { username: string } }) => e.type === 'UserCreated' && e.data.username === 'zed');
    expect(entry).toMatchObject({ actor: { type: 'user', id: 'auditee', via: expect.stringMatching(/^aky_/) }, request_id: 'req-audit-1', stream_id: 'user-zed' });
    const ownerTrail = await app.call('GET', '/v2/audit?category=apikey&limit=1000');
    expect(ownerTrail.body.entries.find((e: { data: { keyId: string } }) => e.data.keyId === 'aky_owner')).toMatchObject({ actor: { type: 'system', id: 'bootstrap' }, data: { digest: '****' } });
    expect((await app.call('GET', '/v2/audit', undefined, asKey(await createUser(app, 'nosy', { api_roles: ['corpus_administrator'] })))).status).toBe(403);
  });
});

describe('bootstrap key', () => {
  it('is generated in the key format on first start, printed once, and rotated by a changed ADMIN_API_KEY', async () => {
    const first = await startTestApp({ env: { ADMIN_API_KEY: '' } });
    const dataDir = first.dataDir;
    const generated = readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
    try {
      expect(generated).toMatch(/^zut_aky_owner_[A-Za-z0-9_-]{43}$/);
      expect(first.logLines.filter((l) => l.includes(generated))).toHaveLength(1);
      expect((await first.call('GET', '/v2/corpora', undefined, asKey(generated))).status).toBe(200);
    } finally {
      await first.started.app.close();
    }
    const rotated = 'rotated_bootstrap_key_0123456789abcdef';
    const second = await startTestApp({ dataDir, env: { ADMIN_API_KEY: rotated } });
    try {
      expect((await second.call('GET', '/v2/corpora', undefined, asKey(rotated))).status).toBe(200);
      expect((await second.call('GET', '/v2/corpora', undefined, asKey(generated))).status).toBe(401);
      expect((await second.call('GET', '/v2/users?limit=100', undefined, asKey(rotated))).body.users.filter((u: { username: string }) => u.username === 'owner')).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});
