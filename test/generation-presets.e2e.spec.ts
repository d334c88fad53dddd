import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 20: customer generation presets — create, replace, delete; the built-in ones stay read-only. */
describe('generation presets', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const TERSE = '[{"role": "system", "content": "Be terse."}, {"role": "user", "content": "$vectaraQuery#foreach ($r in $vectaraQueryResults) [$foreach.count] $r.getText()#end"}]';
  const query = (generation: Record<string, unknown>) => app.call('POST', '/v2/query', { query: 'How do otters sleep?', search: { corpora: [{ corpus_key: 'sea' }] }, generation });
  const lastRequest = () => upstream.chatRequests().at(-1)!.body as any;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'main');
    await registerScripted(app, upstream, 'other');
    await app.call('POST', '/v2/corpora', { key: 'sea', name: 'Sea' });
    await app.call('POST', '/v2/corpora/sea/documents', { id: 'otters', type: 'core', document_parts: [{ text: 'Sea otters sleep floating on their backs, holding hands.' }] });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('creates a preset that generation then uses by name, with its model, template and sampling', async () => {
    const created = await app.call('POST', '/v2/generation_presets', { name: 'terse', description: 'Short answers', llm_name: 'other', prompt_template: TERSE, max_tokens: 50, temperature: 0.3, max_used_search_results: 3 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^gnp_/), name: 'terse', llm_name: 'other', max_tokens: 50, enabled: true, default: false, ownership: 'customer' });
    upstream.enqueue({ content: 'On their backs [1].' });
    const res = await query({ generation_preset_name: 'terse' });
    expect(res.status).toBe(200);
    expect(res.body.summary).toContain('On their backs');
    expect(lastRequest()).toMatchObject({ model: 'other-upstream', max_tokens: 50, temperature: 0.3 });
    expect(lastRequest().messages[0]).toEqual({ role: 'system', content: 'Be terse.' });
    const listed = (await app.call('GET', '/v2/generation_presets?limit=100')).body.generation_presets;
    expect(listed.map((p: any) => p.ownership)).toEqual(expect.arrayContaining(['platform', 'customer']));
    expect((await app.call('GET', '/v2/generation_presets?filter=terse')).body.generation_presets.map((p: any) => p.name)).toEqual(['terse']);
  });

  it('refuses a taken or built-in name, an unknown model and a template that does not compile, creating nothing', async () => {
    const base = { llm_name: 'main', prompt_template: TERSE };
    expect((await app.call('POST', '/v2/generation_presets', { ...base, name: 'terse' })).status).toBe(409);
    expect((await app.call('POST', '/v2/generation_presets', { ...base, name: 'rag-default' })).status).toBe(409);
    const unknown = await app.call('POST', '/v2/generation_presets', { ...base, name: 'x1', llm_name: 'nope' });
    expect(unknown.status).toBe(400);
    expect(Object.keys(unknown.body.field_errors)).toEqual(['llm_name']);
    const broken = await app.call('POST', '/v2/generation_presets', { ...base, name: 'x2', prompt_template: '#foreach ($r in' });
    expect(broken.status).toBe(400);
    expect(Object.keys(broken.body.field_errors)).toEqual(['prompt_template']);
    expect((await app.call('POST', '/v2/generation_presets', { name: 'x3', prompt_template: TERSE })).status).toBe(400);
    expect((await app.call('GET', '/v2/generation_presets?filter=x[123]')).body.generation_presets).toEqual([]);
  });

  it('replaces a preset whole and deletes it; the built-in presets cannot be changed; a model default is honoured', async () => {
    const id = (await app.call('GET', '/v2/generation_presets?filter=terse')).body.generation_presets[0].id;
    const replaced = await app.call('PUT', `/v2/generation_presets/${id}`, { name: 'terse', llm_name: 'other', prompt_template: TERSE, max_tokens: 20 });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ max_tokens: 20 });
    expect(replaced.body.temperature).toBeUndefined();
    upstream.enqueue({ content: 'Backs [1].' });
    await query({ generation_preset_name: 'terse' });
    expect(lastRequest()).toMatchObject({ max_tokens: 20, temperature: 0 });
    expect((await app.call('PUT', '/v2/generation_presets/gnp_1', { name: 'rag-default', llm_name: 'main', prompt_template: TERSE })).status).toBe(403);
    expect((await app.call('DELETE', '/v2/generation_presets/gnp_1')).status).toBe(403);
    expect((await app.call('PUT', '/v2/generation_presets/gnp_c_missing', { name: 'y', llm_name: 'main', prompt_template: TERSE })).status).toBe(404);
    // A default for the model the query runs on replaces the built-in default.
    const dflt = await app.call('POST', '/v2/generation_presets', { name: 'house-style', llm_name: 'main', prompt_template: '[{"role": "system", "content": "House style."}, {"role": "user", "content": "$vectaraQuery"}]', default: true });
    expect(dflt.status).toBe(201);
    upstream.enqueue({ content: 'House answer.' });
    await query({ model_parameters: { llm_name: 'main' } });
    expect(lastRequest().messages[0]).toEqual({ role: 'system', content: 'House style.' });
    expect((await app.call('DELETE', `/v2/generation_presets/${id}`)).status).toBe(204);
    const gone = await query({ generation_preset_name: 'terse' });
    expect(gone.status).toBe(400);
    expect((await app.call('POST', '/v2/generation_presets', { name: 'terse', llm_name: 'main', prompt_template: TERSE })).status).toBe(201);
  });
});
