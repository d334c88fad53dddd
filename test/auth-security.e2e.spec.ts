import { asBearer, asKey, createClient, createKey, createUser, tokenFor } from './support/auth-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Security tests of issue 3 (OWASP API1 BOLA, API2 broken auth, API3 mass assignment, API4 rate limits, API5
 * escalation). Each would fail with the guard or the rule it checks removed.
 */
describe('auth security', () => {
  let app: TestApp;
  let viewerKey: string;
  let editorKey: string;
  const secrets: string[] = [];

  const eventsOf = async (type: string) => (await app.started.infra.events.readAll({ after: 0, maxCount: 100_000, filter: { types: [type] } })).length;

  beforeAll(async () => {
    app = await startTestApp({ env: { LOG_LEVEL: 'debug' } });
    await app.call('POST', '/v2/corpora', { key: 'c1', name: 'C1' });
    await app.call('POST', '/v2/corpora', { key: 'c2', name: 'C2' });
    await app.call('POST', '/v2/corpora/c2/documents', { id: 'secret-doc', type: 'core', document_parts: [{ text: 'Only c2 readers see this.' }] });
    viewerKey = await createUser(app, 'c1viewer', { corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
    editorKey = await createUser(app, 'c1editor', { corpus_roles: [{ corpus_key: 'c1', role: 'editor' }] });
    secrets.push(app.key, viewerKey, editorKey);
  });
  afterAll(async () => app?.close());

  describe('BOLA: another corpus or another user’s key', () => {
    it('hides a corpus the caller holds no role on, in the path, the body and lists, exactly like a missing one', async () => {
      const missing = await app.call('GET', '/v2/corpora/nope', undefined, asKey(viewerKey));
      const hidden = await app.call('GET', '/v2/corpora/c2', undefined, asKey(viewerKey));
      expect(hidden.status).toBe(404);
      expect(hidden.body.messages).toEqual(['Corpus "c2" does not exist']);
      expect(Object.keys(hidden.body).sort()).toEqual(Object.keys(missing.body).sort());
      expect((await app.call('GET', '/v2/corpora/c2/documents/secret-doc', undefined, asKey(viewerKey))).status).toBe(404);
      expect((await app.call('GET', '/v2/corpora/c2/query?query=readers', undefined, asKey(viewerKey))).status).toBe(404);
      const multi = await app.call('POST', '/v2/query', { query: 'readers', search: { corpora: [{ corpus_key: 'c1' }, { corpus_key: 'c2' }] } }, asKey(viewerKey));
      expect(multi.status).toBe(404);
      expect(JSON.stringify(multi.body)).not.toContain('Only c2 readers');
      const list = await app.call('GET', '/v2/corpora', undefined, asKey(viewerKey));
      expect(list.body.corpora.map((c: { key: string }) => c.key)).toEqual(['c1']);
    });

    it('changes nothing when a caller without a role deletes or writes another corpus', async () => {
      expect((await app.call('DELETE', '/v2/corpora/c2/documents/secret-doc', undefined, asKey(editorKey))).status).toBe(404);
      expect((await app.call('DELETE', '/v2/corpora/c2', undefined, asKey(editorKey))).status).toBe(404);
      expect((await app.call('POST', '/v2/corpora/c2/documents', { id: 'x', type: 'core', document_parts: [{ text: 'x' }] }, asKey(editorKey))).status).toBe(404);
      expect((await app.call('GET', '/v2/corpora/c2/documents/secret-doc')).status).toBe(200);
      expect((await app.call('GET', '/v2/corpora/c2/documents/x')).status).toBe(404);
    });

    it('returns 404 for another user’s key (get, enable, delete) and lists only one’s own personal keys', async () => {
      const own = await createKey(app, { name: 'mine', api_key_role: 'personal' }, viewerKey);
      secrets.push(own.secret_key);
      const others = await createKey(app, { name: 'editor key', api_key_role: 'personal' }, editorKey);
      secrets.push(others.secret_key);
      for (const [method, body] of [['GET', undefined], ['PATCH', { enabled: false }], ['DELETE', undefined]] as const) {
        expect((await app.call(method, `/v2/api_keys/${others.id}`, body, asKey(viewerKey))).status).toBe(404);
        expect((await app.call(method, '/v2/api_keys/aky_owner', body, asKey(viewerKey))).status).toBe(404);
      }
      expect((await app.call('GET', `/v2/api_keys/${others.id}`, undefined, asKey(editorKey))).status).toBe(200);
      expect((await app.call('GET', '/v2/api_keys', undefined, asKey(viewerKey))).status).toBe(403);
      const mine = await app.call('GET', '/v2/api_keys?api_key_role=personal&limit=100', undefined, asKey(viewerKey));
      expect(mine.status).toBe(200);
      expect(mine.body.api_keys.map((k: { id: string }) => k.id).sort()).toEqual(expect.arrayContaining([own.id]));
      expect(mine.body.api_keys.every((k: { owner_username: string }) => k.owner_username === 'c1viewer')).toBe(true);
      const all = await app.call('GET', '/v2/api_keys?limit=100');
      expect(all.body.api_keys.map((k: { id: string }) => k.id)).toEqual(expect.arrayContaining([own.id, others.id, 'aky_owner']));
    });
  });

  describe('mass assignment', () => {
    it('rejects extra fields such as roles, owner or id with a 400 and stores nothing', async () => {
      const keysBefore = await eventsOf('ApiKeyCreated');
      const usersBefore = await eventsOf('UserCreated');
      const key = await app.call('POST', '/v2/api_keys', { name: 'k', api_key_role: 'serving', corpus_keys: ['c1'], owner: 'owner', id: 'aky_mine' }, asKey(viewerKey));
      expect(key.status).toBe(400);
      expect(key.body.field_errors).toHaveProperty('owner');
      const user = await app.call('POST', '/v2/users', { email: 'm@example.com', username: 'mass', id: 'usr_1', enabled: true, created_at: '2000-01-01' });
      expect(user.status).toBe(400);
      const patch = await app.call('PATCH', '/v2/users/c1viewer', { api_roles: ['owner'], username: 'root' }, asKey(viewerKey));
      expect(patch.status).toBe(403);
      const patchAsOwner = await app.call('PATCH', '/v2/users/c1viewer', { enabled: true, username: 'root', user_id: 'usr_x' });
      expect(patchAsOwner.status).toBe(400);
      const keyPatch = await app.call('PATCH', '/v2/api_keys/aky_owner', { enabled: true, api_roles: ['owner'] });
      expect(keyPatch.status).toBe(400);
      expect(await eventsOf('ApiKeyCreated')).toBe(keysBefore);
      expect(await eventsOf('UserCreated')).toBe(usersBefore);
      expect(await eventsOf('UserRolesChanged')).toBe(0);
      expect((await app.call('GET', '/v2/users/c1viewer')).body).toMatchObject({ username: 'c1viewer', api_roles: [], corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
    });
  });

  describe('escalation', () => {
    it('never lets a key carry more than its creator holds', async () => {
      const write = await app.call('POST', '/v2/api_keys', { name: 'w', api_key_role: 'serving_and_indexing', corpus_keys: ['c1'] }, asKey(viewerKey));
      expect(write.status).toBe(403);
      const other = await app.call('POST', '/v2/api_keys', { name: 'o', api_key_role: 'serving', corpus_keys: ['c2'] }, asKey(viewerKey));
      expect(other.status).toBe(403);
      const all = await app.call('POST', '/v2/api_keys', { name: 'a', api_key_role: 'serving' }, asKey(viewerKey));
      expect(all.status).toBe(403);
      const roles = await app.call('POST', '/v2/api_keys', { name: 'r', api_roles: ['administrator'] }, asKey(viewerKey));
      expect([400, 403]).toContain(roles.status);
      const allowed = await createKey(app, { name: 'read c1', api_key_role: 'serving', corpus_keys: ['c1'] }, viewerKey);
      secrets.push(allowed.secret_key);
      expect((await app.call('GET', '/v2/corpora/c1/query?query=x', undefined, asKey(allowed.secret_key))).status).toBe(200);
    });

    it('bounds a key by its creator now: demoting the creator takes the access away from the key', async () => {
      const creator = await createUser(app, 'shortlived', { corpus_roles: [{ corpus_key: 'c2', role: 'viewer' }] });
      const key = await createKey(app, { name: 'c2 reader', api_key_role: 'serving', corpus_keys: ['c2'] }, creator);
      secrets.push(creator, key.secret_key);
      expect((await app.call('GET', '/v2/corpora/c2/query?query=readers', undefined, asKey(key.secret_key))).status).toBe(200);
      await app.call('PATCH', '/v2/users/shortlived', { corpus_roles: [] });
      expect((await app.call('GET', '/v2/corpora/c2/query?query=readers', undefined, asKey(key.secret_key))).status).toBe(404);
      await app.call('PATCH', '/v2/users/shortlived', { enabled: false });
      expect((await app.call('GET', '/v2/corpora', undefined, asKey(creator))).status).toBe(401);
      expect((await app.call('GET', '/v2/corpora', undefined, asKey(key.secret_key))).status).toBe(401);
    });

    it('keeps administrators from making owners, and data keys and app clients from making personal keys', async () => {
      const admin = await createUser(app, 'admin', { api_roles: ['administrator'] });
      secrets.push(admin);
      expect((await app.call('POST', '/v2/users', { email: 'o@example.com', username: 'o2', api_roles: ['owner'] }, asKey(admin))).status).toBe(403);
      await createUser(app, 'owner2', { api_roles: ['owner'] });
      expect((await app.call('PATCH', '/v2/users/owner2', { enabled: false }, asKey(admin))).status).toBe(403);
      expect((await app.call('DELETE', '/v2/users/owner2', undefined, asKey(admin))).status).toBe(403);
      expect((await app.call('PATCH', '/v2/users/owner2', { api_roles: [] }, asKey(admin))).status).toBe(403);
      expect((await app.call('GET', '/v2/users/owner2')).body).toMatchObject({ enabled: true, api_roles: ['owner'] });
      // The account owner itself cannot be disabled or deleted by anyone (409).
      expect((await app.call('DELETE', '/v2/users/owner')).status).toBe(409);
      expect((await app.call('POST', '/v2/users', { email: 'c@example.com', username: 'ca', api_roles: ['corpus_administrator'] }, asKey(admin))).status).toBe(201);
      const dataKey = await createKey(app, { name: 'q', api_key_role: 'serving', corpus_keys: ['c1'] });
      secrets.push(dataKey.secret_key);
      expect((await app.call('POST', '/v2/api_keys', { name: 'p', api_key_role: 'personal' }, asKey(dataKey.secret_key))).status).toBe(403);
      const client = await createClient(app, 'svc', { api_roles: ['corpus_administrator'] });
      secrets.push(client.client_secret);
      const token = await tokenFor(app, client);
      secrets.push(token);
      const personal = await app.call('POST', '/v2/api_keys', { name: 'p', api_key_role: 'personal' }, asBearer(token));
      expect(personal.status).toBe(403);
      expect(personal.body.messages[0]).toMatch(/cannot create personal keys/);
      const serving = await app.call('POST', '/v2/api_keys', { name: 's', api_key_role: 'serving', corpus_keys: ['c1'] }, asBearer(token));
      expect(serving.status).toBe(201);
      secrets.push(serving.body.secret_key);
    });
  });

  describe('broken authentication', () => {
    it('answers missing, unknown, malformed and wrong-secret credentials with the same 401 body', async () => {
      const bodies = [];
      for (const h of [{ 'x-api-key': '' }, asKey('zqt_aky_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAA'), asKey('nonsense'), asKey(`${viewerKey.slice(0, -2)}xx`), asBearer('x.y.z')]) {
        const res = await app.call('GET', '/v2/corpora', undefined, h);
        expect(res.status).toBe(401);
        bodies.push(res.body.messages);
      }
      expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
      expect((await app.call('GET', `/v2/corpora?x-api-key=${encodeURIComponent(app.key)}`, undefined, { 'x-api-key': '' })).status).toBe(401);
    });
  });

  it('never shows a secret or full key after creation: not in responses, events, or any log line', async () => {
    const responses = JSON.stringify([
      (await app.call('GET', '/v2/api_keys?limit=100')).body,
      (await app.call('GET', '/v2/api_keys/aky_owner')).body,
      (await app.call('GET', '/v2/app_clients?limit=100')).body,
      (await app.call('GET', '/v2/users?limit=100')).body,
      (await app.call('GET', '/v2/events?limit=1000')).body,
      (await app.call('GET', '/v2/audit?limit=1000')).body,
    ]);
    const events = JSON.stringify(await app.started.infra.events.readAll({ after: 0, maxCount: 100_000 }));
    const logs = app.logLines.join('\n');
    expect(secrets.length).toBeGreaterThan(8);
    expect(app.logLines.length).toBeGreaterThan(50);
    for (const secret of secrets) {
      const tail = secret.slice(-24);
      expect(responses).not.toContain(tail);
      expect(events).not.toContain(tail);
      expect(logs).not.toContain(tail);
    }
    expect(responses).not.toMatch(/"(digest|secret_digest|secretDigest)":"[0-9a-f]{64}"/);
  });
});

describe('rate limits', () => {
  it('answers 429 with Retry-After past the per-key limit, and after repeated failed authentications', async () => {
    const app = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '5', AUTH_FAILURES_PER_MINUTE: '3' } });
    try {
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await app.call('GET', '/v2/corpora')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      const limited = await app.call('GET', '/v2/corpora');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.body.messages[0]).toMatch(/Too many requests/);
      const failures = [];
      for (let i = 0; i < 5; i++) failures.push((await app.call('GET', '/v2/corpora', undefined, asKey('zqt_aky_1_wrongwrongwrongwrongwrong'))).status);
      expect(failures).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await app.close();
    }
  });
});
