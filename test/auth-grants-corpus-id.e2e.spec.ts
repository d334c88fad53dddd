import { asKey, createClient, createKey, createUser, tokenFor, asBearer } from './support/auth-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/** Grants bind to the corpus, not its key: a corpus deleted and created again under its key is a new corpus. */
describe('grants on a corpus deleted and created again under the same key', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  const doc = (id: string) => ({ id, type: 'core', document_parts: [{ text: `Grant binding sample ${id}.` }] });
  const read = (corpus: string, headers: Record<string, string>) => app.call('GET', `/v2/corpora/${corpus}/documents/d-new`, undefined, headers);

  it('gives old keys, users and app clients nothing on the new corpus, exactly as a caller with no grant on it; new grants work', async () => {
    expect((await app.call('POST', '/v2/corpora', { key: 'reborn', name: 'Reborn' })).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora', { key: 'elsewhere', name: 'Elsewhere' })).status).toBe(201);
    const oldKey = await createKey(app, { name: 'old reader', api_key_role: 'serving', corpus_keys: ['reborn'] });
    const oldUser = await createUser(app, 'old-viewer', { corpus_roles: [{ corpus_key: 'reborn', role: 'viewer' }] });
    const oldClient = await tokenFor(app, await createClient(app, 'old-client', { corpus_roles: [{ corpus_key: 'reborn', role: 'viewer' }] }));
    const unrelated = await createKey(app, { name: 'unrelated', api_key_role: 'serving', corpus_keys: ['elsewhere'] });
    await app.call('POST', '/v2/corpora/reborn/documents', doc('d-old'));
    expect((await app.call('GET', '/v2/corpora/reborn/documents/d-old', undefined, asKey(oldKey.secret_key))).status).toBe(200);

    expect((await app.call('DELETE', '/v2/corpora/reborn')).status).toBe(204);
    expect((await app.call('POST', '/v2/corpora', { key: 'reborn', name: 'Reborn again' })).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora/reborn/documents', doc('d-new'))).status).toBe(201);

    const noGrant = await read('reborn', asKey(unrelated.secret_key));
    expect(noGrant.status).toBe(404);
    for (const headers of [asKey(oldKey.secret_key), asKey(oldUser), asBearer(oldClient)]) {
      const res = await read('reborn', headers);
      expect({ status: res.status, messages: res.body.messages }).toEqual({ status: noGrant.status, messages: noGrant.body.messages });
      const query = await app.call('GET', '/v2/corpora/reborn/query?query=binding', undefined, headers);
      expect(query.status).toBe(404);
      expect((await app.call('GET', '/v2/corpora', undefined, headers)).body.corpora ?? []).toEqual([]);
    }

    // What the old grants show: nothing on the new corpus, in the reference API's shape.
    const shown = await app.call('GET', `/v2/api_keys/${oldKey.id}`);
    expect(shown.body).toMatchObject({ id: oldKey.id, api_key_role: 'serving', corpus_roles: [] });
    expect((await app.call('GET', '/v2/users/old-viewer')).body.corpus_roles).toEqual([]);
    expect((await app.call('GET', '/v2/api_keys?corpus_key=reborn')).body.api_keys.map((k: { id: string }) => k.id)).not.toContain(oldKey.id);

    const newKey = await createKey(app, { name: 'new reader', api_key_role: 'serving', corpus_keys: ['reborn'] });
    expect((await read('reborn', asKey(newKey.secret_key))).status).toBe(200);
    const listed = await app.call('GET', `/v2/api_keys/${newKey.id}`);
    expect(listed.body.corpus_roles).toEqual([{ corpus_key: 'reborn', role: 'viewer' }]);
    expect((await app.call('GET', '/v2/api_keys?corpus_key=reborn')).body.api_keys.map((k: { id: string }) => k.id)).toContain(newKey.id);

    // Granting again re-binds: the user is given the role on the corpus that exists now.
    expect((await app.call('PATCH', '/v2/users/old-viewer', { corpus_roles: [{ corpus_key: 'reborn', role: 'viewer' }] })).status).toBe(200);
    expect((await read('reborn', asKey(oldUser))).status).toBe(200);
  });

  it('refuses a grant on a corpus that does not exist, after the caller\'s own rights are checked', async () => {
    const res = await app.call('POST', '/v2/api_keys', { name: 'nowhere', api_key_role: 'serving', corpus_keys: ['never-created'] });
    expect(res.status).toBe(404);
    const limited = await createUser(app, 'limited', { corpus_roles: [{ corpus_key: 'elsewhere', role: 'viewer' }] });
    const probe = await app.call('POST', '/v2/api_keys', { name: 'probe', api_key_role: 'serving', corpus_keys: ['never-created'] }, asKey(limited));
    expect(probe.status).toBe(403);
  });
});
