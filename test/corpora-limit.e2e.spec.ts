import { startTestApp, TestApp } from './support/test-app';

/**
 * MAX_CORPORA (docs/deployment.md, "How many corpora"): past the limit a creation is refused with the reference
 * API's error body and changes nothing; a deleted corpus frees its place; a taken key still gets its 400.
 */
describe('the limit on corpora', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { MAX_CORPORA: '2' } });
  });
  afterAll(async () => app.close());

  it('refuses the corpus past the limit with 403 and its reason, until one is deleted', async () => {
    // Created together: the creations take turns, so the third counts the first two.
    const created = await Promise.all(['one', 'two', 'three'].map((key) => app.call('POST', '/v2/corpora', { key, name: key })));
    expect(created.map((r) => r.status).sort()).toEqual([201, 201, 403]);
    const refused = created.find((r) => r.status === 403)!;
    expect(refused.body).toMatchObject({ messages: [expect.stringMatching(/limit of 2 corpora \(MAX_CORPORA\)/)], request_id: expect.any(String) });
    const refusedKey = ['one', 'two', 'three'][created.indexOf(refused)];
    // Nothing was made: the refused key is unknown, and two corpora are listed.
    expect((await app.call('GET', `/v2/corpora/${refusedKey}`)).status).toBe(404);
    expect((await app.call('GET', '/v2/corpora')).body.corpora).toHaveLength(2);
    // A key already taken is told so (400, as the spec has it), not that the service is full.
    const taken = ['one', 'two', 'three'].find((k) => k !== refusedKey)!;
    const again = await app.call('POST', '/v2/corpora', { key: taken, name: 'again' });
    expect(again.status).toBe(400);
    expect(again.body.messages[0]).not.toMatch(/MAX_CORPORA/);

    expect((await app.call('DELETE', `/v2/corpora/${taken}`)).status).toBe(204);
    expect((await app.call('POST', '/v2/corpora', { key: refusedKey, name: refusedKey })).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora', { key: 'four', name: 'four' })).status).toBe(403);
  });
});
