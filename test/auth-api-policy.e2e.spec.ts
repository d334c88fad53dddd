import { createKey, createUser } from './support/auth-fixtures';
import { referenceErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 20: an API key shows what it may do as the reference's `api_policy`, from its type and roles. */
describe('API keys show their api_policy', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    expect((await app.call('POST', '/v2/corpora', { key: 'c1', name: 'One' })).status).toBe(201);
  });
  afterAll(async () => app.close());

  it('names a serving key and limits its one operation to the corpus it was given', async () => {
    const created = await app.call('POST', '/v2/api_keys', { name: 'reader', api_key_role: 'serving', corpus_keys: ['c1'] });
    expect(created.status).toBe(201);
    expect(referenceErrors('createApiKey', 201, created.body)).toEqual([]);
    const expected = { name: 'serving', allowed_operations: { 'corpus.read': { allow_any_resource: false, allowed_resources: { 'path.corpus_key': ['c1'] } } } };
    expect(created.body.api_policy).toEqual(expected);
    const read = await app.call('GET', `/v2/api_keys/${created.body.id}`);
    expect(referenceErrors('getApiKey', 200, read.body)).toEqual([]);
    expect(read.body.api_policy).toEqual(expected);
  });

  it('keeps an indexing key to data actions even when given an administrator role on the corpus', async () => {
    const created = await app.call('POST', '/v2/api_keys', { name: 'writer', api_key_role: 'serving_and_indexing', corpus_roles: [{ corpus_key: 'c1', role: 'administrator' }] });
    expect(created.status).toBe(201);
    expect(created.body.api_policy.name).toBe('serving_and_indexing');
    expect(Object.keys(created.body.api_policy.allowed_operations)).toEqual(['corpus.read', 'corpus.write']);
  });

  it("gives a personal key its user's operations, on any resource", async () => {
    const key = await createUser(app, 'vera', { api_roles: ['corpus_viewer'] });
    const own = await createKey(app, { name: 'mine', api_key_role: 'personal' }, key);
    const read = await app.call('GET', `/v2/api_keys/${own.id}`);
    expect(read.body.api_policy).toEqual({
      name: 'personal',
      allowed_operations: { 'corpus.read': { allow_any_resource: true }, 'llm.use': { allow_any_resource: true }, 'users.read': { allow_any_resource: true } },
    });
    const owner = (await app.call('GET', '/v2/api_keys?limit=100')).body;
    expect(referenceErrors('listApiKeys', 200, owner)).toEqual([]);
    expect(owner.api_keys.find((k: { id: string }) => k.id === 'aky_owner').api_policy.allowed_operations['keys.manage']).toEqual({ allow_any_resource: true });
  });
});
