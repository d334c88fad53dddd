import { APIError } from 'openai';
import { FakeAnthropicServer, FakeGeminiServer, FakeLlmServer, FakeOpenAIResponsesServer, FakeRequest, makeServiceAccountKey } from '@lib/testing';
import { openaiFor } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Provider types other than openai-compatible (issue 6), each through its official SDK against a local fake of
 * its HTTP protocol: the official `openai` client completes and streams through the service, requests are
 * translated and authenticated as the provider expects, usage is reported and counted, failures map to 4xx/5xx.
 */
describe('LLM providers', () => {
  let app: TestApp;
  let anthropic: FakeAnthropicServer;
  let gemini: FakeGeminiServer;
  let responses: FakeOpenAIResponsesServer;
  let geminiKey: ReturnType<typeof makeServiceAccountKey>;
  let claudeKey: ReturnType<typeof makeServiceAccountKey>;
  const USAGE = { input: 21, output: 9, cachedInput: 4, reasoning: 3 };
  const AWS = { id: 'AKIAFAKEACCESSKEY001', secret: 'fake/aws/secret/key/0123456789abcdefABCDEF' };

  const register = async (name: string, body: Record<string, unknown>) => {
    const res = await app.call('POST', '/v2/llms', { name, ...body });
    if (res.status !== 201) throw new Error(`register ${name} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  beforeAll(async () => {
    [anthropic, gemini, responses] = await Promise.all([FakeAnthropicServer.start(), FakeGeminiServer.start(), FakeOpenAIResponsesServer.start()]);
    for (const fake of [anthropic, gemini, responses] as FakeLlmServer[]) fake.fallback = { content: 'Paris is the capital.', usage: USAGE, chunkDelayMs: 1 };
    geminiKey = makeServiceAccountKey({ tokenUri: `${gemini.url}/token`, project: 'proj-1' });
    claudeKey = makeServiceAccountKey({ tokenUri: `${anthropic.url}/token`, email: 'claude@proj-2.iam.gserviceaccount.com' });
    gemini.tokens.trust(geminiKey.email, geminiKey.publicKeyPem);
    anthropic.tokens.trust(claudeKey.email, claudeKey.publicKeyPem);
    anthropic.awsSecrets.set(AWS.id, AWS.secret);
    app = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
    const claude = { type: 'anthropic', model: 'claude-fake-1' };
    await register('o-reasoner', { type: 'openai-responses', model: 'o4-mini', uri: responses.responsesUrl, auth: { type: 'bearer', token: 'sk-responses-token' } });
    await register('gemini-studio', { type: 'vertex-ai', model: 'gemini-2.5-flash', uri: gemini.geminiApiUri, auth: { type: 'api_key', api_key: 'AIza-fake-gemini-key' } });
    await register('gemini-vertex', { type: 'vertex-ai', model: 'gemini-2.5-pro', uri: gemini.vertexUri('proj-1', 'us-central1'), auth: { type: 'service_account', key_json: geminiKey.keyJson } });
    await register('claude', { ...claude, uri: anthropic.messagesUrl, auth: { type: 'header', header: 'x-api-key', value: 'sk-ant-fake-key' } });
    await register('claude-bearer', { ...claude, uri: anthropic.messagesUrl, auth: { type: 'bearer', token: 'sk-ant-oauth-token' } });
    await register('claude-bedrock', { ...claude, model: 'anthropic.claude-fake-1-v1:0', uri: anthropic.url, auth: { type: 'bedrock_static_iam', aws_access_key_id: AWS.id, aws_secret_access_key: AWS.secret, region: 'us-east-1' } });
    await register('claude-bedrock-key', { ...claude, model: 'anthropic.claude-fake-1-v1:0', uri: anthropic.url, auth: { type: 'bedrock_api_key', api_key: 'bedrock-api-key-fake', region: 'eu-west-1' } });
    await register('claude-vertex-sa', { ...claude, uri: `${anthropic.url}/v1`, auth: { type: 'vertex_service_account', key_json: claudeKey.keyJson, project: 'proj-2', region: 'us-east5' } });
    await register('claude-vertex-token', { ...claude, uri: `${anthropic.url}/v1`, auth: { type: 'vertex_access_token', access_token: 'ya29.static-token', project: 'proj-3', region: 'europe-west1' } });
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([anthropic?.close(), gemini?.close(), responses?.close()]);
  });

  const messages = [
    { role: 'system' as const, content: 'Be brief.' },
    { role: 'user' as const, content: 'Capital of France?' },
  ];
  type Case = [string, () => FakeLlmServer, (req: FakeRequest, stream: boolean) => void];
  const cases: Case[] = [
    ['o-reasoner', () => responses, (req) => {
      expect(req.path).toBe('/v1/responses');
      expect(req.headers.authorization).toBe('Bearer sk-responses-token');
      expect(req.body).toMatchObject({ model: 'o4-mini', store: false, max_output_tokens: 50, temperature: 0.2, input: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Capital of France?' }] });
    }],
    ['gemini-studio', () => gemini, (req, stream) => {
      expect(req.path).toBe(`/v1beta/models/gemini-2.5-flash:${stream ? 'streamGenerateContent' : 'generateContent'}`);
      expect(req.headers['x-goog-api-key']).toBe('AIza-fake-gemini-key');
      expect(req.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'Capital of France?' }] }], systemInstruction: { parts: [{ text: 'Be brief.' }] }, generationConfig: { temperature: 0.2, maxOutputTokens: 50 } });
    }],
    ['gemini-vertex', () => gemini, (req, stream) => {
      expect(req.path).toBe(`/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-pro:${stream ? 'streamGenerateContent' : 'generateContent'}`);
      const token = String(req.headers.authorization).replace(/^Bearer /, '');
      expect(gemini.tokens.issued.get(token)).toBe(geminiKey.email);
    }],
    ['claude', () => anthropic, (req) => {
      expect(req.path).toBe('/v1/messages');
      expect(req.headers['x-api-key']).toBe('sk-ant-fake-key');
      expect(req.headers.authorization).toBeUndefined();
      expect(req.body).toMatchObject({ model: 'claude-fake-1', max_tokens: 50, temperature: 0.2, system: 'Be brief.', messages: [{ role: 'user', content: 'Capital of France?' }] });
    }],
    ['claude-bearer', () => anthropic, (req) => {
      expect(req.headers.authorization).toBe('Bearer sk-ant-oauth-token');
      expect(req.headers['x-api-key']).toBeUndefined();
    }],
    ['claude-bedrock', () => anthropic, (req, stream) => {
      expect(req.path).toBe(`/model/anthropic.claude-fake-1-v1:0/${stream ? 'invoke-with-response-stream' : 'invoke'}`);
      expect(anthropic.sigv4Of(req)).toMatchObject({ ok: true, accessKeyId: AWS.id, region: 'us-east-1', service: 'bedrock' });
      expect(req.body).toMatchObject({ max_tokens: 50, system: 'Be brief.', anthropic_version: expect.any(String) });
      expect(req.body?.model).toBeUndefined();
    }],
    ['claude-bedrock-key', () => anthropic, (req) => {
      expect(req.path).toMatch(/^\/model\/anthropic\.claude-fake-1-v1:0\/invoke/);
      expect(req.headers.authorization).toBe('Bearer bedrock-api-key-fake');
    }],
    ['claude-vertex-sa', () => anthropic, (req, stream) => {
      expect(req.path).toBe(`/v1/projects/proj-2/locations/us-east5/publishers/anthropic/models/claude-fake-1:${stream ? 'streamRawPredict' : 'rawPredict'}`);
      expect(anthropic.tokens.issued.get(String(req.headers.authorization).replace(/^Bearer /, ''))).toBe(claudeKey.email);
    }],
    ['claude-vertex-token', () => anthropic, (req) => {
      expect(req.path).toMatch(/^\/v1\/projects\/proj-3\/locations\/europe-west1\/publishers\/anthropic\/models\/claude-fake-1:/);
      expect(req.headers.authorization).toBe('Bearer ya29.static-token');
    }],
  ];

  it.each(cases)('%s completes through the official openai client, translated and authenticated, with usage', async (name, fake, check) => {
    const completion = await openaiFor(app).chat.completions.create({ model: name, messages, temperature: 0.2, max_tokens: 50 });
    expect(completion).toMatchObject({ object: 'chat.completion', model: name, choices: [{ index: 0, message: { role: 'assistant', content: 'Paris is the capital.' }, finish_reason: 'stop' }] });
    expect(completion.usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 });
    check(fake().generations().at(-1)!, false);
  });

  it.each(cases)('%s streams chat.completion.chunk deltas, usage at the end when asked, and [DONE]', async (name, fake, check) => {
    const stream = await openaiFor(app).chat.completions.create({ model: name, messages, temperature: 0.2, max_tokens: 50, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === name)).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Paris is the capital.');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 });
    check(fake().generations().at(-1)!, true);

    const raw = await fetch(`${app.url}/v2/llms/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': app.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: name, messages, stream: true }),
    });
    const text = await raw.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).not.toContain('"usage":{');
  });

  it('records the usage each call reported, for quotas and audit', async () => {
    // Usage events are appended in batches (within 100 ms).
    await new Promise((r) => setTimeout(r, 300));
    const events = await app.started.infra.events.readAll({ after: 0, maxCount: 100_000 });
    const usage = events.filter((e) => e.type === 'LlmUsageRecorded').map((e) => e.data as { llmName: string; input: number; output: number; estimated: boolean; outcome: string });
    for (const [name] of cases) {
      const mine = usage.filter((u) => u.llmName === name && u.outcome === 'completed');
      expect(mine.length).toBeGreaterThanOrEqual(3);
      expect(mine.every((u) => u.input === 21 && u.output === 9 && !u.estimated)).toBe(true);
    }
  });

  it('counts streamed usage against a token quota', async () => {
    await register('claude-metered', { type: 'anthropic', model: 'claude-fake-1', uri: anthropic.messagesUrl, auth: { type: 'header', header: 'x-api-key', value: 'k-metered' }, llm_quota: { output_tokens_per_minute: 10 } });
    const ask = () => app.call('POST', '/v2/llms/chat/completions', { model: 'claude-metered', messages, stream: true });
    expect((await ask()).status).toBe(200);
    expect((await ask()).status).toBe(200);
    const refused = await ask();
    expect(refused.status).toBe(429);
    expect(refused.body.messages[0]).toMatch(/output_tokens_per_minute of LLM "claude-metered" is used up \(18 of 10\)/);
  });

  describe.each([
    ['anthropic', () => anthropic as FakeLlmServer, { type: 'anthropic', model: 'claude-fake-1', auth: { type: 'header', header: 'x-api-key', value: 'k' } }, (f: FakeLlmServer) => (f as FakeAnthropicServer).messagesUrl],
    ['bedrock', () => anthropic as FakeLlmServer, { type: 'anthropic', model: 'm', auth: { type: 'bedrock_api_key', api_key: 'k', region: 'us-east-1' } }, (f: FakeLlmServer) => f.url],
    ['vertex-ai', () => gemini as FakeLlmServer, { type: 'vertex-ai', model: 'gemini-2.5-flash', auth: { type: 'api_key', api_key: 'k' } }, (f: FakeLlmServer) => (f as FakeGeminiServer).geminiApiUri],
    ['openai-responses', () => responses as FakeLlmServer, { type: 'openai-responses', model: 'o4-mini' }, (f: FakeLlmServer) => (f as FakeOpenAIResponsesServer).responsesUrl],
  ])('%s failures', (label, fake, body, uri) => {
    const name = `impatient-${label}`;
    const chat = (stream = false) => app.call('POST', '/v2/llms/chat/completions', { model: name, messages, stream });
    beforeAll(async () => {
      await register(name, { ...body, uri: uri(fake()), idle_timeout_seconds: 1 });
    });

    it('maps an upstream 500 to 502 with its status (not its text), a 429 to 429, a 400 to 400, and a hang to 504', async () => {
      fake().enqueue({ error: { status: 500, message: 'the GPU caught fire' } }, { error: { status: 429, message: 'slow down' } }, { error: { status: 400, message: 'bad temperature' } }, { hang: true });
      const failed = await chat();
      expect(failed.status).toBe(502);
      expect(failed.body.messages[0]).toBe(`LLM "${name}" failed: the model endpoint answered 500`);
      expect((await chat()).status).toBe(429);
      expect((await chat()).status).toBe(400);
      const hung = await chat(true);
      expect(hung.status).toBe(504);
      expect(hung.body.messages[0]).toMatch(/did not answer within 1 s/);
    });

    it('ends a stream that goes quiet past idle_timeout_seconds, and ends it on an in-stream error without relaying its text', async () => {
      fake().enqueue({ content: 'one two three four', stallAfterChunks: 1 });
      const stalled = await openaiFor(app).chat.completions.create({ model: name, messages, stream: true });
      const seen: string[] = [];
      const error = await (async () => {
        for await (const chunk of stalled) seen.push(chunk.choices[0]?.delta?.content ?? '');
      })().catch((e: unknown) => e);
      expect(seen.join('')).toBe('one ');
      expect(error).toBeInstanceOf(APIError);
      expect((error as Error).message).toMatch(/sent nothing for 1 s \(idle_timeout_seconds\)/);

      fake().enqueue({ content: 'half an answer', streamError: 'Overloaded upstream' });
      const broken = await openaiFor(app).chat.completions.create({ model: name, messages, stream: true });
      const failure = await (async () => {
        for await (const _chunk of broken) void _chunk;
      })().catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(APIError);
      expect((failure as Error).message).toMatch(/the model endpoint (reported an error|answered \d+)/);
      expect((failure as Error).message).not.toMatch(/Overloaded upstream/);
    });

    it('cancels the upstream call when the caller disconnects', async () => {
      fake().enqueue({ chunks: Array.from({ length: 50 }, (_, i) => `w${i} `), chunkDelayMs: 50 });
      const abort = new AbortController();
      const res = await fetch(`${app.url}/v2/llms/chat/completions`, {
        method: 'POST',
        signal: abort.signal,
        headers: { 'x-api-key': app.key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: name, messages, stream: true }),
      });
      await res.body!.getReader().read();
      abort.abort();
      const sent = fake().generations().at(-1)!;
      for (let i = 0; i < 100 && !sent.aborted; i++) await new Promise((r) => setTimeout(r, 20));
      expect(sent.aborted).toBe(true);
    });
  });

  it('refuses what a provider cannot be given: untranslated fields, web images for Gemini, mismatched or missing auth', async () => {
    const tools = await app.call('POST', '/v2/llms/chat/completions', { model: 'claude', messages, tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] });
    expect(tools.status).toBe(400);
    expect(tools.body.field_errors).toHaveProperty('tools');
    const image = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] };
    expect((await app.call('POST', '/v2/llms/chat/completions', { model: 'gemini-studio', messages: [image] })).body.field_errors).toHaveProperty(['messages.0.content.0.image_url']);
    expect(responses.generations().every((r) => r.body?.tools === undefined) && gemini.generations().length > 0).toBe(true);

    const bad = (body: Record<string, unknown>) => app.call('POST', '/v2/llms', { name: 'bad', model: 'm', ...body });
    expect((await bad({ type: 'vertex-ai', uri: gemini.geminiApiUri, auth: { type: 'bearer', token: 't' } })).body.field_errors).toHaveProperty(['auth.type']);
    expect((await bad({ type: 'anthropic', uri: anthropic.messagesUrl })).body.field_errors).toHaveProperty('auth');
    expect((await bad({ type: 'vertex-ai', uri: gemini.geminiApiUri, auth: { type: 'service_account', key_json: geminiKey.keyJson } })).body.field_errors).toHaveProperty('uri');
    expect((await bad({ type: 'vertex-ai', uri: gemini.vertexUri('p', 'l'), auth: { type: 'service_account', key_json: '{"not":"a key"}' } })).body.field_errors).toHaveProperty(['auth.key_json']);
    expect((await bad({ type: 'anthropic', auth: { type: 'bedrock_api_key', api_key: 'k' } })).body.field_errors).toHaveProperty(['auth.region']);
    const patched = await app.call('PATCH', '/v2/llms/claude', { type: 'vertex-ai' });
    expect(patched.status).toBe(400);
    expect(patched.body.field_errors).toHaveProperty(['auth.type']);
  });

  it('discovers an Anthropic and a Gemini model: probes what is translated, reads the context window from the models endpoint', async () => {
    anthropic.models.set('claude-fake-1', 200_000);
    gemini.models.set('gemini-2.5-flash', 1_048_576);
    const colour = (req: FakeRequest) => (JSON.stringify(req.body).includes('What colour') ? { content: 'Red.' } : undefined);
    anthropic.onRequest = colour;
    gemini.onRequest = colour;
    const claude = await app.call('POST', '/v2/llms/discover', { type: 'anthropic', model: 'claude-fake-1', auth: { type: 'header', header: 'x-api-key', value: 'k' }, uri: anthropic.messagesUrl });
    const flash = await app.call('POST', '/v2/llms/discover', { type: 'vertex-ai', model: 'gemini-2.5-flash', uri: gemini.geminiApiUri, auth: { type: 'api_key', api_key: 'k' } });
    anthropic.onRequest = gemini.onRequest = undefined;
    expect(claude.status).toBe(200);
    expect(claude.body.discovery.context_limit).toMatchObject({ value: 200_000, method: 'models_endpoint' });
    expect(claude.body.discovery.image_support).toMatchObject({ value: true, method: 'probe' });
    expect(claude.body.discovery.tool_calling).toMatchObject({ method: 'inferred', detail: expect.stringMatching(/not translated for LLM type anthropic/) });
    expect(claude.body.auth).toEqual({ type: 'header', header: 'x-api-key', value: '****' });
    expect(flash.status).toBe(200);
    expect(flash.body.capabilities).toMatchObject({ context_limit: 1_048_576, image_support: true });
  });
});
