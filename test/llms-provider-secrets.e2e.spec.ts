import { FakeAnthropicServer, FakeGeminiServer, FakeOpenAIResponsesServer, makeServiceAccountKey } from '@lib/testing';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Every auth variant of the new provider types, registered and then rotated: reads show the variant with
 * `****` for each secret and the identifiers kept; the rotated credential is the one the upstream gets; no
 * secret (old or new, nor a service-account private key, nor a token minted from it) appears in any response,
 * stored event or log line.
 */
describe('provider credentials', () => {
  let app: TestApp;
  let anthropic: FakeAnthropicServer;
  let gemini: FakeGeminiServer;
  let responses: FakeOpenAIResponsesServer;

  beforeAll(async () => {
    [anthropic, gemini, responses] = await Promise.all([FakeAnthropicServer.start(), FakeGeminiServer.start(), FakeOpenAIResponsesServer.start()]);
    // Debug logs every request, so the scan sees every line a request could write.
    app = await startTestApp({ env: { LOG_LEVEL: 'debug' } });
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([anthropic?.close(), gemini?.close(), responses?.close()]);
  });

  it('masks, rotates and never shows a secret of any variant in a response, an event or a log line', async () => {
    const keys = [1, 2].map((n) => makeServiceAccountKey({ tokenUri: `${gemini.url}/token`, email: `svc${n}@p.iam.gserviceaccount.com` }));
    const claudeKeys = [1, 2].map((n) => makeServiceAccountKey({ tokenUri: `${anthropic.url}/token`, email: `claude${n}@p.iam.gserviceaccount.com` }));
    for (const k of keys) gemini.tokens.trust(k.email, k.publicKeyPem);
    for (const k of claudeKeys) anthropic.tokens.trust(k.email, k.publicKeyPem);
    anthropic.awsSecrets.set('AKIAFIRSTKEY00000001', 'aws-secret-first-AAAAAAAAAAAAAAAAAAAAAAAA');
    anthropic.awsSecrets.set('AKIAROTATEDKEY000002', 'aws-secret-rotated-BBBBBBBBBBBBBBBBBBBBBBBB');
    const claude = { type: 'anthropic', model: 'claude-fake-1' };
    // name → registration, the rotated auth, what a read shows, and how the upstream proves it got the rotated secret.
    const variants = [
      {
        name: 'resp-bearer',
        body: { type: 'openai-responses', model: 'o4-mini', uri: responses.responsesUrl },
        auth: [{ type: 'bearer', token: 'sk-resp-first-CCCCCCCCCCCCCCCC' }, { type: 'bearer', token: 'sk-resp-rotated-DDDDDDDDDDDDDDDD' }],
        masked: { type: 'bearer', token: '****' },
        got: () => responses.generations().at(-1)!.headers.authorization === 'Bearer sk-resp-rotated-DDDDDDDDDDDDDDDD',
      },
      {
        name: 'gemini-key',
        body: { type: 'vertex-ai', model: 'gemini-2.5-flash', uri: gemini.geminiApiUri },
        auth: [{ type: 'api_key', api_key: 'AIza-first-EEEEEEEEEEEEEEEE' }, { type: 'api_key', api_key: 'AIza-rotated-FFFFFFFFFFFFFFFF' }],
        masked: { type: 'api_key', api_key: '****' },
        got: () => gemini.generations().at(-1)!.headers['x-goog-api-key'] === 'AIza-rotated-FFFFFFFFFFFFFFFF',
      },
      {
        name: 'gemini-sa',
        body: { type: 'vertex-ai', model: 'gemini-2.5-pro', uri: gemini.vertexUri('p', 'us-central1') },
        auth: keys.map((k) => ({ type: 'service_account', key_json: k.keyJson })),
        masked: { type: 'service_account', key_json: '****' },
        got: () => gemini.tokens.issued.get(String(gemini.generations().at(-1)!.headers.authorization).slice(7)) === keys[1].email,
      },
      {
        name: 'claude-header',
        body: { ...claude, uri: anthropic.messagesUrl },
        auth: [{ type: 'header', header: 'x-api-key', value: 'sk-ant-first-GGGGGGGGGGGGGGGG' }, { type: 'header', header: 'x-api-key', value: 'sk-ant-rotated-HHHHHHHHHHHHHHHH' }],
        masked: { type: 'header', header: 'x-api-key', value: '****' },
        got: () => anthropic.generations().at(-1)!.headers['x-api-key'] === 'sk-ant-rotated-HHHHHHHHHHHHHHHH',
      },
      {
        name: 'claude-iam',
        body: { ...claude, uri: anthropic.url },
        auth: [
          { type: 'bedrock_static_iam', aws_access_key_id: 'AKIAFIRSTKEY00000001', aws_secret_access_key: 'aws-secret-first-AAAAAAAAAAAAAAAAAAAAAAAA', region: 'us-east-1' },
          { type: 'bedrock_static_iam', aws_access_key_id: 'AKIAROTATEDKEY000002', aws_secret_access_key: 'aws-secret-rotated-BBBBBBBBBBBBBBBBBBBBBBBB', region: 'us-west-2' },
        ],
        masked: { type: 'bedrock_static_iam', aws_access_key_id: 'AKIAROTATEDKEY000002', aws_secret_access_key: '****', region: 'us-west-2' },
        got: () => anthropic.sigv4Of(anthropic.generations().at(-1)!).ok && anthropic.sigv4Of(anthropic.generations().at(-1)!).region === 'us-west-2',
      },
      {
        name: 'claude-bedrock-key',
        body: { ...claude, uri: anthropic.url },
        auth: [{ type: 'bedrock_api_key', api_key: 'bedrock-first-IIIIIIIIIIIIIIII', region: 'us-east-1' }, { type: 'bedrock_api_key', api_key: 'bedrock-rotated-JJJJJJJJJJJJJJJJ', region: 'us-east-1' }],
        masked: { type: 'bedrock_api_key', api_key: '****', region: 'us-east-1' },
        got: () => anthropic.generations().at(-1)!.headers.authorization === 'Bearer bedrock-rotated-JJJJJJJJJJJJJJJJ',
      },
      {
        name: 'claude-vertex-sa',
        body: { ...claude, uri: `${anthropic.url}/v1` },
        auth: claudeKeys.map((k) => ({ type: 'vertex_service_account', key_json: k.keyJson, project: 'proj', region: 'us-east5' })),
        masked: { type: 'vertex_service_account', key_json: '****', project: 'proj', region: 'us-east5' },
        got: () => anthropic.tokens.issued.get(String(anthropic.generations().at(-1)!.headers.authorization).slice(7)) === claudeKeys[1].email,
      },
      {
        name: 'claude-vertex-token',
        body: { ...claude, uri: `${anthropic.url}/v1` },
        auth: [{ type: 'vertex_access_token', access_token: 'ya29.first-KKKKKKKKKKKKKKKK', project: 'proj', region: 'us-east5' }, { type: 'vertex_access_token', access_token: 'ya29.rotated-LLLLLLLLLLLLLLLL', project: 'proj', region: 'us-east5' }],
        masked: { type: 'vertex_access_token', access_token: '****', project: 'proj', region: 'us-east5' },
        got: () => anthropic.generations().at(-1)!.headers.authorization === 'Bearer ya29.rotated-LLLLLLLLLLLLLLLL',
      },
    ];

    const bodies: unknown[] = [];
    for (const v of variants) {
      const created = await app.call('POST', '/v2/llms', { name: v.name, ...v.body, auth: v.auth[0] });
      expect(created.status).toBe(201);
      expect(created.body.auth).toEqual({ ...v.masked, ...('aws_access_key_id' in v.auth[0] ? { aws_access_key_id: 'AKIAFIRSTKEY00000001', region: 'us-east-1' } : {}) });
      expect((await app.call('POST', '/v2/llms/chat/completions', { model: v.name, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
      const rotated = await app.call('PATCH', `/v2/llms/${created.body.id}`, { auth: v.auth[1] });
      expect(rotated.body.auth).toEqual(v.masked);
      const chat = await app.call('POST', '/v2/llms/chat/completions', { model: v.name, messages: [{ role: 'user', content: 'hi' }], stream: true });
      expect(chat.status).toBe(200);
      expect(v.got()).toBe(true);
      bodies.push(created.body, rotated.body, chat.body, (await app.call('GET', `/v2/llms/${v.name}`)).body);
    }
    // Discovery answers too, and a failing upstream's error text.
    bodies.push((await app.call('POST', '/v2/llms/discover', { ...variants[3].body, auth: variants[3].auth[1] })).body);
    anthropic.enqueue({ error: { status: 401, message: 'invalid x-api-key sk-ant-rotated-HHHHHHHHHHHHHHHH' } });
    const refused = await app.call('POST', '/v2/llms/chat/completions', { model: 'claude-header', messages: [{ role: 'user', content: 'hi' }] });
    expect(refused.status).toBe(502);
    expect(refused.body.messages[0]).toBe('LLM "claude-header" refused the stored credentials: the model endpoint answered 401');
    // The upstream's text goes to the log only, scrubbed of the model's secret.
    expect(app.logLines.join('\n')).toMatch(/upstream answered 401: .*invalid x-api-key \*\*\*\*/);
    bodies.push(refused.body, (await app.call('GET', '/v2/llms?limit=100')).body, (await app.call('GET', '/v2/events?limit=1000')).body);

    const responsesText = JSON.stringify(bodies);
    const events = JSON.stringify(await app.started.infra.events.readAll({ after: 0, maxCount: 100_000 }));
    expect(events).toContain('LlmUpdated');
    const logs = app.logLines.join('\n');
    expect(app.logLines.length).toBeGreaterThan(20);
    const privateKeyLines = [...keys, ...claudeKeys].flatMap((k) => k.privateKeyPem.split('\n').filter((l) => l.length > 40));
    const minted = [...gemini.tokens.issued.keys(), ...anthropic.tokens.issued.keys()];
    expect(minted.length).toBeGreaterThanOrEqual(4);
    const secrets = [...variants.flatMap((v) => v.auth.flatMap((a) => Object.entries(a).filter(([k]) => ['token', 'api_key', 'value', 'aws_secret_access_key', 'access_token'].includes(k)).map(([, s]) => s))), ...privateKeyLines, ...minted];
    expect(secrets.length).toBeGreaterThan(40);
    for (const secret of secrets) {
      expect(responsesText).not.toContain(secret);
      expect(events).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });
});
