import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { ScriptedOpenAIServer } from '@lib/testing';
import { asBearer, createClient } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/**
 * Issue 16, end-user sessions (docs/end-user-sessions.md), as an application uses them: its app client holds
 * `agent_end_user`, mints a short-lived token per end user at /oauth/token (`end_user`), and each end user's
 * browser talks to the alias with its own token.
 */
describe('end-user sessions', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let client: { id: string; client_id: string; client_secret: string };
  let alice: Record<string, string>;
  let bob: Record<string, string>;

  const mint = async (endUser: unknown, c = client) => {
    const res = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id: c.client_id, client_secret: c.client_secret, end_user: endUser }) });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'helper', name: 'helper', model: { name: 'm' }, tool_configurations: { notes: { type: 'scratch_pad' } }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'Be helpful. Internal code: ZX-41.' }] } } });
    // End users may set the metadata the alias's policy declares (issue 41, finding 9).
    await app.call('POST', '/v2/agent_aliases', { key: 'front', name: 'Front desk', policy: { type: 'routed', end_user_metadata: ['topic'], rules: [{ targets: { type: 'single', agent_key: 'helper' } }] } });
    // Its end users reach the aliases routing only to agents the client may use (issue 41, finding 9).
    client = await createClient(app, 'storefront', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'helper', role: 'agent_user' }] });
    const a = await mint('alice@example.com');
    const b = await mint('bob');
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body).toMatchObject({ token_type: 'Bearer', expires_in: 1800 });
    alice = asBearer(a.body.access_token);
    bob = asBearer(b.body.access_token);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('mints end-user tokens only for a well-formed end user id', async () => {
    for (const bad of ['', 'has space', 'x'.repeat(129), 42]) expect((await mint(bad)).status).toBe(400);
  });

  it('shows an end user only the conversation of its session: no tool calls, no thinking, no configuration', async () => {
    const created = await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 'a1', metadata: { topic: 'returns' } }, alice);
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['alias_key', 'created_at', 'key', 'name', 'status', 'updated_at']);
    upstream.enqueue({ toolCalls: [{ id: 't1', name: 'notes', arguments: JSON.stringify({ operation: 'write', pad: 'p', content: 'customer wants a refund' }) }] }, { content: 'Your refund is on its way.' });
    const res = await app.call('POST', '/v2/agent_aliases/front/end_user_sessions/a1/events', { messages: [{ type: 'text', content: 'Where is my refund?' }] }, alice);
    expect(res.status).toBe(201);
    expect(res.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
    const listed = (await app.call('GET', '/v2/agent_aliases/front/end_user_sessions/a1/events', undefined, alice)).body.events;
    expect(listed.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
    expect(JSON.stringify(listed)).not.toMatch(/refund"\}|customer wants|ZX-41|tool/);
    // The operator sees everything on the agent, and who the session belongs to (its key in the end user's namespace).
    const stored = ((await app.call('GET', '/v2/agents/helper/sessions?limit=100')).body.sessions as { key: string; end_user?: string }[]).find((s) => s.end_user === `${client.id}/alice@example.com`)!.key;
    expect(stored).toMatch(/^eu-[0-9a-f]{16}-a1$/);
    const full = (await app.call('GET', `/v2/agents/helper/sessions/${stored}/events`)).body.events.map((e: Ev) => e.type);
    expect(full).toEqual(expect.arrayContaining(['tool_input', 'tool_output']));
    const op = (await app.call('GET', `/v2/agents/helper/sessions/${stored}`)).body;
    expect(op).toMatchObject({ alias_key: 'front', end_user: `${client.id}/alice@example.com`, metadata: { topic: 'returns', end_user: { id: 'alice@example.com', app_client_id: client.id } } });
    // Streamed, the same filter applies.
    upstream.enqueue({ toolCalls: [{ id: 't2', name: 'notes', arguments: JSON.stringify({ operation: 'read', pad: 'p' }) }] }, { content: 'Still on its way.' });
    const streamed = await fetch(`${app.url}/v2/agent_aliases/front/end_user_sessions/a1/events`, { method: 'POST', headers: { ...alice, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ type: 'text', content: 'And now?' }], stream_response: true }) });
    expect(streamed.status).toBe(201);
    const text = await streamed.text();
    // The reply in pieces, then the end naming the stored answer (no agent_output frame, as in the reference's stream).
    expect(text).toContain('event:streaming_agent_output_end');
    expect(text.match(/event:streaming_agent_output\ndata:(.*)/g)!.map((f) => JSON.parse(f.split('data:')[1]).content).join('')).toBe('Still on its way.');
    expect(text).not.toMatch(/event:tool_|event:agent_output|customer wants/);
  });

  it('keeps end users apart: another end user’s session does not exist for them', async () => {
    expect((await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 'b1' }, bob)).status).toBe(201);
    for (const [method, path, body] of [
      ['GET', '/v2/agent_aliases/front/end_user_sessions/a1'],
      ['GET', '/v2/agent_aliases/front/end_user_sessions/a1/events'],
      ['POST', '/v2/agent_aliases/front/end_user_sessions/a1/events', { messages: [{ type: 'text', content: 'let me in' }] }],
    ] as const) expect((await app.call(method, path, body, bob)).status).toBe(404);
    expect((await app.call('GET', '/v2/agent_aliases/front/end_user_sessions', undefined, bob)).body.sessions.map((s: any) => s.key)).toEqual(['b1']);
    expect((await app.call('GET', '/v2/agent_aliases/front/end_user_sessions', undefined, alice)).body.sessions.map((s: any) => s.key)).toEqual(['a1']);
    // Keys are each end user's own (issue 41, finding 16): bob's a1 is another session, alice's is untouched.
    expect((await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 'a1' }, bob)).status).toBe(201);
    expect((await app.call('GET', '/v2/agent_aliases/front/end_user_sessions/a1/events', undefined, bob)).body.events).toEqual([]);
    expect((await app.call('GET', '/v2/agent_aliases/front/end_user_sessions/a1/events', undefined, alice)).body.events.length).toBeGreaterThan(0);
  });

  it('gives an end-user token nothing else: no agent, alias-routed, corpus or key routes, and it expires', async () => {
    expect((await app.call('GET', '/v2/agents/helper/sessions/a1', undefined, alice)).status).toBe(404);
    expect((await app.call('GET', '/v2/agent_aliases/front/sessions/a1', undefined, alice)).status).toBe(403);
    expect((await app.call('GET', '/v2/agent_aliases/front', undefined, alice)).status).toBe(403);
    expect((await app.call('GET', '/v2/corpora', undefined, alice)).status).toBe(403);
    expect((await app.call('POST', '/v2/api_keys', { name: 'x', api_key_role: 'serving' }, alice)).status).toBe(403);
    // An app client without agent_end_user mints tokens that reach no end-user session.
    const plain = await createClient(app, 'no end users', { api_roles: ['viewer'] });
    const token = (await mint('carol', plain)).body.access_token;
    expect((await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', {}, asBearer(token))).status).toBe(403);
    // Expired: 401.
    const key = new TextEncoder().encode(readFileSync(join(app.dataDir, 'oauth-signing-key'), 'utf8').trim());
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ end_user: 'alice@example.com' }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(client.id).setIssuer('agent-retrieval-service').setIssuedAt(now - 3600).setExpirationTime(now - 60).sign(key);
    expect((await app.call('GET', '/v2/agent_aliases/front/end_user_sessions/a1', undefined, asBearer(expired))).status).toBe(401);
  });
});
