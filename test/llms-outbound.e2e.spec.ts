import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedOpenAIServer } from '@lib/testing';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Calls to models under the outbound policy (docs/security.md, Outbound calls): loopback, private and
 * metadata addresses are refused by default, at registration and at every connection; credentials in a uri
 * are refused (and masked when found in older records); an upstream's error text never reaches the caller.
 */
describe('LLM outbound calls', () => {
  let upstream: ScriptedOpenAIServer;
  const apps: TestApp[] = [];
  const start = async (env: Record<string, string>, dataDir?: string) => {
    const app = await startTestApp({ env, dataDir });
    apps.push(app);
    return app;
  };
  // The test support allows 127.0.0.1 for every other test; '' restores the default policy.
  const DEFAULT_POLICY = { OUTBOUND_ALLOWED_HOSTS: '' };
  const model = (name: string, uri: string, extra: Record<string, unknown> = {}) => ({ type: 'openai-compatible', name, model: 'm', uri, ...extra });
  const chat = (app: TestApp, name: string) => app.call('POST', '/v2/llms/chat/completions', { model: name, messages: [{ role: 'user', content: 'hi' }] });

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await upstream?.close();
  });

  it('by default refuses loopback, metadata and names resolving to loopback at registration, and stores nothing', async () => {
    const app = await start(DEFAULT_POLICY);
    const port = new URL(upstream.url).port;
    for (const uri of [`http://127.0.0.1:${port}/v1/chat/completions`, 'http://169.254.169.254/latest/meta-data', `http://localhost:${port}/v1/chat/completions`, `http://[::ffff:127.0.0.1]:${port}/v1/chat/completions`]) {
      const res = await app.call('POST', '/v2/llms', model('local', uri));
      expect(res.status).toBe(400);
      expect(res.body.field_errors.uri).toMatch(/is not allowed by the outbound policy \((loopback|link-local) address\).*OUTBOUND_ALLOWED_HOSTS/);
    }
    const oauth = await app.call('POST', '/v2/llms', model('oauth', 'https://api.openai.com/v1/chat/completions', { auth: { type: 'oauth_client_credentials', client_id: 'c', client_secret: 's-123456', token_endpoint: `http://127.0.0.1:${port}/token` } }));
    expect(oauth.body.field_errors).toHaveProperty(['auth.token_endpoint']);
    const discover = await app.call('POST', '/v2/llms/discover', { model: 'm', uri: `http://localhost:${port}/v1/chat/completions` });
    expect(discover.status).toBe(400);
    expect(discover.body.field_errors.uri).toMatch(/outbound policy/);

    expect((await app.call('GET', '/v2/llms')).body.llms).toEqual([]);
    expect(JSON.stringify((await app.call('GET', '/v2/events?limit=1000')).body)).not.toContain('LlmCreated');
    expect(upstream.chatRequests()).toEqual([]);
  });

  it('refuses at connect time a model whose address became refused (here: the policy changed), and sends it nothing', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ars-outbound-'));
    try {
      const port = new URL(upstream.url).port;
      const allowing = await start({ OUTBOUND_ALLOW_PRIVATE: 'true' }, dataDir);
      expect((await allowing.call('POST', '/v2/llms', model('local', `http://localhost:${port}/v1/chat/completions`))).status).toBe(201);
      upstream.enqueue({ content: 'hello' });
      expect((await chat(allowing, 'local')).status).toBe(200);
      await allowing.close();
      apps.splice(apps.indexOf(allowing), 1);

      const seen = upstream.chatRequests().length;
      const strict = await start(DEFAULT_POLICY, dataDir);
      const refused = await chat(strict, 'local');
      expect(refused.status).toBe(502);
      expect(refused.body.messages[0]).toMatch(new RegExp(`LLM "local" cannot be called: localhost:${port} \\(127\\.0\\.0\\.1\\) is not allowed by the outbound policy \\(loopback address\\).*OUTBOUND_ALLOWED_HOSTS or OUTBOUND_ALLOW_PRIVATE=true`));
      expect(upstream.chatRequests().length).toBe(seen);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('with an allow entry a local model registers and answers', async () => {
    const port = new URL(upstream.url).port;
    const app = await start({ OUTBOUND_ALLOWED_HOSTS: `localhost:${port},127.0.0.1:${port}` });
    expect((await app.call('POST', '/v2/llms', model('local', `http://localhost:${port}/v1/chat/completions`))).status).toBe(201);
    upstream.enqueue({ content: 'hello' });
    const answered = await chat(app, 'local');
    expect(answered.status).toBe(200);
    expect(answered.body.choices[0].message.content).toBe('hello');
    // The entry names one port: another port on the same host stays refused.
    expect((await app.call('POST', '/v2/llms', model('other', `http://127.0.0.1:${Number(port) + 1}/v1/chat/completions`))).status).toBe(400);
  });

  it("an allow entry for a model does not open that server to agent tools: web_get and MCP tool servers have their own list (issue 41, finding 14)", async () => {
    const port = new URL(upstream.url).port;
    const app = await start({ OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${port}`, OUTBOUND_TOOLS_ALLOWED_HOSTS: '', OUTBOUND_PIPELINES_ALLOWED_HOSTS: '' });
    expect((await app.call('POST', '/v2/llms', model('local', `${upstream.url}/v1/chat/completions`))).status).toBe(201);
    const agent = await app.call('POST', '/v2/agents', { key: 'browser', name: 'browser', model: { name: 'local' }, tool_configurations: { web: { type: 'web_get' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(agent.status).toBe(201);
    await app.call('POST', '/v2/agents/browser/sessions', { key: 's' });
    upstream.enqueue({ toolCalls: [{ id: 'w', name: 'web', arguments: JSON.stringify({ url: `${upstream.url}/v1/models` }) }] }, { content: 'done' });
    const turn = await app.call('POST', '/v2/agents/browser/sessions/s/events', { messages: [{ type: 'text', content: 'read the model server' }] });
    expect(turn.status).toBe(201);
    // The model answered through its entry; the tool's call to the same server was refused, naming the tools' settings.
    const output = turn.body.events.find((e: { type: string }) => e.type === 'tool_output');
    expect(output).toMatchObject({ error: true, tool_output: { error: `refused: 127.0.0.1:${port} is not allowed by the outbound policy (loopback address); an administrator can allow it with OUTBOUND_TOOLS_ALLOWED_HOSTS or OUTBOUND_TOOLS_ALLOW_PRIVATE=true` } });
    const server = await app.call('POST', '/v2/tool_servers', { name: 'local-mcp', type: 'mcp', uri: `${upstream.url}/mcp`, transport: 'streamable-http' });
    expect(server.status).toBe(400);
    expect(server.body.field_errors.uri).toContain('OUTBOUND_TOOLS_ALLOWED_HOSTS');
    expect((await app.call('GET', '/v2/tool_servers')).body.tool_servers ?? []).toEqual([]);
  });

  it('refuses user:password@ in a uri, and masks it in records made before that', async () => {
    const app = await start({});
    const PASSWORD = 'hunter2-uri-password-XYZ';
    const withCredentials = `${upstream.url.replace('http://', `http://admin:${PASSWORD}@`)}/v1/chat/completions`;
    const refused = await app.call('POST', '/v2/llms', model('basic', withCredentials));
    expect(refused.status).toBe(400);
    expect(refused.body.field_errors.uri).toMatch(/must not carry user:password@.*auth/);
    expect(JSON.stringify(refused.body)).not.toContain(PASSWORD);

    // A record written before the refusal (appended directly, as an older version stored it).
    const created = await app.call('POST', '/v2/llms', model('legacy', `${upstream.url}/v1/chat/completions`));
    const patched = await app.call('PATCH', '/v2/llms/legacy', { uri: withCredentials });
    expect(patched.status).toBe(400);
    const events = await app.started.infra.events.readAll({ after: 0, maxCount: 100_000 });
    const event = events.find((e) => e.type === 'LlmCreated' && (e.data as { name: string }).name === 'legacy')!;
    await app.started.infra.events.append(event.streamId, [
      { id: randomUUID(), type: 'LlmUpdated', data: { llmId: created.body.id, name: 'legacy', changes: { uri: withCredentials }, updatedAt: new Date().toISOString() }, metadata: event.metadata },
    ]);
    let one: { body: { uri: string } } | undefined;
    for (let i = 0; i < 50; i++) {
      one = await app.call('GET', '/v2/llms/legacy');
      if (one.body.uri.includes('@')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(one!.body.uri).toBe(`${upstream.url.replace('http://', 'http://****:****@')}/v1/chat/completions`);
    const reads = JSON.stringify([(await app.call('GET', '/v2/llms')).body, (await app.call('GET', '/v2/events?limit=1000')).body, (await app.call('GET', '/v2/llms/legacy')).body]);
    expect(reads).toContain('****:****@');
    expect(reads).not.toContain(PASSWORD);
  });

  it("does not relay an upstream's error text to the caller, and keeps it in the log", async () => {
    const app = await start({});
    const LEAK = 'internal-db-password=Zq9-leaky-upstream-detail';
    expect((await app.call('POST', '/v2/llms', model('failing', `${upstream.url}/v1/chat/completions`))).status).toBe(201);
    upstream.enqueue({ error: { status: 500, message: `stack trace: ${LEAK}` } });
    const failed = await chat(app, 'failing');
    expect(failed.status).toBe(502);
    expect(failed.body.messages[0]).toBe('LLM "failing" failed: the model endpoint answered 500');
    upstream.enqueue({ error: { status: 401, message: `bad key; ${LEAK}` } });
    const refused = await chat(app, 'failing');
    expect(refused.status).toBe(502);
    expect(refused.body.messages[0]).toBe('LLM "failing" refused the stored credentials: the model endpoint answered 401');
    upstream.enqueue({ error: { status: 400, message: `bad request; ${LEAK}` } });
    const discovered = await app.call('POST', '/v2/llms/discover', { model: 'm', uri: `${upstream.url}/v1/chat/completions` });
    expect(discovered.status).toBe(400);
    for (const body of [failed.body, refused.body, discovered.body]) expect(JSON.stringify(body)).not.toContain('leaky');
    expect(app.logLines.join('\n')).toContain(LEAK);
  });
});
