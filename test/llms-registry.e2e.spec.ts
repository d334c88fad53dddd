import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/** The LLM registry: masked credentials and rotation, discovery, and the LLM-judge factual-consistency scorer. */
describe('LLM registry', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const FIRST = 'sk-first-secret-AAAAAAAAAAAAAAAAAAAAAAAA';
  const ROTATED = 'sk-rotated-secret-BBBBBBBBBBBBBBBBBBBBBBBB';
  const HEADER_SECRET = 'azure-key-CCCCCCCCCCCCCCCCCCCCCCCCCCCC';
  const OAUTH_SECRET = 'oauth-client-secret-DDDDDDDDDDDDDDDDDDDD';

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    // Debug logs every request, so the log scan below sees every line a request could write.
    app = await startTestApp({ env: { FCS_JUDGE_LLM: 'judge', LOG_LEVEL: 'debug' } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('registers, rotates and keeps credentials, and never shows one in a response, an event or a log line', async () => {
    const created = await registerScripted(app, upstream, 'rotating', { auth: { type: 'bearer', token: FIRST }, description: 'rotation test' });
    expect(created).toMatchObject({ id: expect.stringMatching(/^llm_/), name: 'rotating', type: 'openai-compatible', auth: { type: 'bearer', token: '****' } });
    const azure = await registerScripted(app, upstream, 'azure-like', { auth: { type: 'header', header: 'api-key', value: HEADER_SECRET } });
    expect(azure.auth).toEqual({ type: 'header', header: 'api-key', value: '****' });
    const oauth = await app.call('POST', '/v2/llms', {
      name: 'oauth-model',
      model: 'm',
      uri: `${upstream.baseURL}/chat/completions`,
      auth: { type: 'oauth_client_credentials', client_id: 'client-1', client_secret: OAUTH_SECRET, token_endpoint: 'https://auth.example.com/token', scopes: ['a'] },
    });
    expect(oauth.body.auth).toEqual({ type: 'oauth_client_credentials', client_id: 'client-1', client_secret: '****', token_endpoint: 'https://auth.example.com/token', scopes: ['a'] });

    const chat = (model: string) => app.call('POST', '/v2/llms/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
    expect((await chat('azure-like')).status).toBe(200);
    expect(upstream.chatRequests().at(-1)!.headers).toMatchObject({ 'api-key': HEADER_SECRET });
    expect(upstream.chatRequests().at(-1)!.headers.authorization).toBeUndefined();

    const rotated = await app.call('PATCH', `/v2/llms/${created.id}`, { auth: { type: 'bearer', token: ROTATED } });
    expect(rotated.body.auth).toEqual({ type: 'bearer', token: '****' });
    expect((await chat('rotating')).status).toBe(200);
    expect(upstream.chatRequests().at(-1)!.headers.authorization).toBe(`Bearer ${ROTATED}`);
    // Omitting auth keeps it.
    const kept = await app.call('PATCH', '/v2/llms/rotating', { description: 'still rotating', llm_quota: { requests_per_second: 50 } });
    expect(kept.body).toMatchObject({ description: 'still rotating', llm_quota: { requests_per_second: 50 }, auth: { token: '****' } });
    expect((await chat('rotating')).status).toBe(200);
    expect(upstream.chatRequests().at(-1)!.headers.authorization).toBe(`Bearer ${ROTATED}`);

    const responses = JSON.stringify([
      created,
      azure,
      oauth.body,
      rotated.body,
      kept.body,
      (await app.call('GET', '/v2/llms?limit=100')).body,
      (await app.call('GET', '/v2/llms/rotating')).body,
      (await app.call('GET', '/v2/events?limit=1000')).body,
    ]);
    const events = JSON.stringify(await app.started.infra.events.readAll({ after: 0, maxCount: 100_000 }));
    expect(events).toContain('LlmUpdated');
    const logs = app.logLines.join('\n');
    expect(app.logLines.length).toBeGreaterThan(10);
    for (const secret of [FIRST, ROTATED, HEADER_SECRET, OAUTH_SECRET]) {
      expect(responses).not.toContain(secret);
      expect(events).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });

  it('refuses credentials in plain headers, unsupported types and incomplete auth with 400', async () => {
    const base = { name: 'bad', model: 'm', uri: `${upstream.baseURL}/chat/completions` };
    expect((await app.call('POST', '/v2/llms', { ...base, headers: { Authorization: 'Bearer x' } })).body.field_errors).toHaveProperty(['headers.Authorization']);
    expect((await app.call('POST', '/v2/llms', { ...base, type: 'vertex-ai' })).status).toBe(400);
    expect((await app.call('POST', '/v2/llms', { ...base, auth: { type: 'header', header: 'x' } })).body.field_errors).toHaveProperty(['auth.value']);
    expect((await app.call('POST', '/v2/llms', { ...base, idle_timeout_seconds: 3601 })).body.field_errors).toHaveProperty('idle_timeout_seconds');
    expect((await app.call('POST', '/v2/llms', { ...base, llm_quota: { tokens_per_year: 1 } })).status).toBe(400);
  });

  it('lists, gets by id or name, deletes (404 after) and lets the name be registered again', async () => {
    const made = await registerScripted(app, upstream, 'short-lived');
    expect((await app.call('GET', '/v2/llms?filter=^short')).body.llms.map((l: { name: string }) => l.name)).toEqual(['short-lived']);
    expect((await app.call('POST', '/v2/llms', { name: 'short-lived', model: 'm', uri: 'http://127.0.0.1:1/v1' })).status).toBe(400);
    expect((await app.call('DELETE', `/v2/llms/${made.id}`)).status).toBe(204);
    expect((await app.call('GET', '/v2/llms/short-lived')).status).toBe(404);
    expect((await registerScripted(app, upstream, 'short-lived')).id).not.toBe(made.id);
  });

  it('discovers capabilities by probing the candidate, saying how each was found', async () => {
    upstream.models.push({ id: 'probe-model', object: 'model', max_model_len: 32768 });
    upstream.onChat = (req) => {
      if (req.body?.model !== 'probe-model') return undefined;
      const messages = req.body.messages as { role: string; content: unknown }[];
      if (req.body.tools) return { toolCalls: [{ name: 'get_time', arguments: '{}' }] };
      if (req.body.response_format) return { content: '{"answer":"Paris"}' };
      if (Array.isArray(messages[0].content)) return { content: 'Red' };
      if (messages.length === 2 && messages[0].role === messages[1].role) return { error: { status: 400, message: 'roles must alternate' } };
      return { content: 'OK' };
    };
    const res = await app.call('POST', '/v2/llms/discover', { type: 'openai-compatible', model: 'probe-model', uri: `${upstream.baseURL}/chat/completions`, auth: { type: 'bearer', token: FIRST } });
    upstream.onChat = undefined;
    expect(res.status).toBe(200);
    expect(res.body.capabilities).toEqual({ image_support: true, context_limit: 32768, tool_calling: true, structured_outputs: true, requires_role_alternation: true });
    expect(res.body.discovery.context_limit.method).toBe('models_endpoint');
    expect(res.body.discovery.tool_calling.method).toBe('probe');
    expect(res.body.auth).toEqual({ type: 'bearer', token: '****' });

    upstream.enqueue({ error: { status: 503, message: 'overloaded' } });
    const down = await app.call('POST', '/v2/llms/discover', { model: 'probe-model', uri: `${upstream.baseURL}/chat/completions` });
    expect(down.status).toBe(502);
  });

  it('scores factual consistency with the configured judge LLM, and validates the request', async () => {
    await registerScripted(app, upstream, 'judge');
    upstream.enqueue({ content: 'Score: 0.12' });
    const scored = await app.call('POST', '/v2/evaluate_factual_consistency', { generated_text: 'The Eiffel Tower is in Berlin.', source_texts: ['The Eiffel Tower is in Paris.'] });
    expect(scored.body).toEqual({ score: 0.12, scorer: 'llm_judge:judge' });
    expect(JSON.stringify(upstream.chatRequests().at(-1)!.body?.messages)).toContain('The Eiffel Tower is in Berlin.');

    const unknown = await app.call('POST', '/v2/evaluate_factual_consistency', { generated_text: 'x', source_texts: ['y'], model_parameters: { model_name: 'hhem_v9' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.field_errors).toHaveProperty(['body.model_parameters.model_name']);
    expect((await app.call('POST', '/v2/evaluate_factual_consistency', { generated_text: 'x', source_texts: ['y'], language: 'eng' })).status).toBe(400);
    upstream.enqueue({ content: 'I cannot say.' });
    expect((await app.call('POST', '/v2/evaluate_factual_consistency', { generated_text: 'x', source_texts: ['y'] })).status).toBe(502);
  });
});
