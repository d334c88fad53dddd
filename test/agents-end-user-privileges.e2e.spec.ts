import { ScriptedOpenAIServer } from '@lib/testing';
import { asBearer, createClient } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Client = { id: string; client_id: string; client_secret: string };

/**
 * Issue 41, findings 8, 9 and 16 (docs/end-user-sessions.md, docs/security.md "Agents and their privileges"): an
 * end user's token reaches only its own sessions' routes, only through the aliases its app client was granted
 * (the client may use every agent the alias routes to), steers routing only with the metadata the alias's policy
 * declares, and cannot tell another end user's session keys from free ones.
 */
describe('end users and their privileges', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let storefront: Client;
  let alice: Record<string, string>;
  let bob: Record<string, string>;

  const mint = async (c: Client, endUser: string) => {
    const res = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id: c.client_id, client_secret: c.client_secret, end_user: endUser }) });
    return asBearer(((await res.json()) as { access_token: string }).access_token);
  };
  const agent = (key: string, secret: string) => ({ key, name: key, model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', name: 'i', template: `Internal: ${secret}` }] } } });
  const single = (agentKey: string) => ({ targets: { type: 'single', agent_key: agentKey } });
  const sessionsOf = async (agentKey: string) => ((await app.call('GET', `/v2/agents/${agentKey}/sessions?limit=100`)).body.sessions as { key: string; end_user?: string; metadata: Record<string, unknown> }[]);

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    for (const [key, secret] of [['helper', 'shop'], ['vip', 'gold desk'], ['hr', 'salaries ZX-HR']]) expect((await app.call('POST', '/v2/agents', agent(key, secret))).status).toBe(201);
    // The storefront's aliases route only to agents its app client may use; hrdesk routes to hr, which it may not.
    const aliases = [
      { key: 'front', name: 'Front', policy: { type: 'routed', rules: [single('helper')] } },
      { key: 'hrdesk', name: 'HR desk', policy: { type: 'routed', rules: [single('hr')] } },
      { key: 'mixed', name: 'Mixed', policy: { type: 'routed', rules: [{ match: "get('$.session.metadata.dept', '') == 'hr'", ...single('hr') }, single('helper')] } },
      // A tier steers to the gold desk: only where the policy lets end users set it.
      { key: 'tiers', name: 'Tiers', policy: { type: 'routed', end_user_metadata: ['locale'], rules: [{ match: "get('$.session.metadata.tier', '') == 'gold'", ...single('vip') }, single('helper')] } },
      { key: 'tiers-open', name: 'Tiers open', policy: { type: 'routed', end_user_metadata: ['tier'], rules: [{ match: "get('$.session.metadata.tier', '') == 'gold'", ...single('vip') }, single('helper')] } },
    ];
    for (const a of aliases) expect((await app.call('POST', '/v2/agent_aliases', a)).status).toBe(201);
    storefront = await createClient(app, 'storefront', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'helper', role: 'agent_user' }, { agent_key: 'vip', role: 'agent_user' }] });
    alice = await mint(storefront, 'alice');
    bob = await mint(storefront, 'bob');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('finding 8: an end user’s token reaches no route but its own sessions’, and creates nothing there', async () => {
    const keysBefore = (await app.call('GET', '/v2/api_keys?limit=100')).body.api_keys.length;
    const usersBefore = (await app.call('GET', '/v2/users?limit=100')).body.users.length;
    const attempts: [string, string, unknown, number][] = [
      ['POST', '/v2/api_keys', { name: 'forever', api_key_role: 'serving', api_roles: ['agent_end_user'] }, 403],
      ['POST', '/v2/api_keys', { name: 'forever', api_roles: ['agent_end_user'] }, 403],
      ['GET', '/v2/api_keys', undefined, 403],
      ['POST', '/v2/users', { email: 'e@example.com', username: 'eve', api_roles: ['agent_end_user'] }, 403],
      ['GET', '/v2/corpora', undefined, 403],
      ['POST', '/v2/app_clients', { type: 'client_credentials', name: 'x', api_roles: ['agent_end_user'] }, 403],
      ['GET', '/v2/agents/helper', undefined, 404],
      ['POST', '/v2/agents/helper/sessions', { key: 'direct' }, 404],
      ['POST', '/v2/agent_aliases/front/sessions', { key: 'direct' }, 403],
    ];
    for (const [method, path, body, status] of attempts) {
      const res = await app.call(method, path, body, alice);
      expect([`${method} ${path}`, res.status]).toEqual([`${method} ${path}`, status]);
      expect(res.body.messages).toEqual([expect.any(String)]);
    }
    expect((await app.call('GET', '/v2/api_keys?limit=100')).body.api_keys.length).toBe(keysBefore);
    expect((await app.call('GET', '/v2/users?limit=100')).body.users.length).toBe(usersBefore);
    expect((await sessionsOf('helper')).map((s) => s.key)).not.toContain('direct');
    // Its own route still answers.
    expect((await app.call('GET', '/v2/agent_aliases/front/end_user_sessions', undefined, alice)).status).toBe(200);
  });

  it('finding 9: an alias routing to an agent the app client may not use answers as a missing alias, and creates nothing', async () => {
    const missing = await app.call('POST', '/v2/agent_aliases/nosuch/end_user_sessions', { key: 'k' }, alice);
    expect(missing.status).toBe(404);
    for (const alias of ['hrdesk', 'mixed']) {
      const res = await app.call('POST', `/v2/agent_aliases/${alias}/end_user_sessions`, { key: 'k' }, alice);
      expect(res.status).toBe(404);
      expect(res.body.messages).toEqual([missing.body.messages[0].replace('nosuch', alias)]);
      expect(JSON.stringify(res.body)).not.toMatch(/ZX-HR|salaries/);
      const listed = await app.call('GET', `/v2/agent_aliases/${alias}/end_user_sessions`, undefined, alice);
      expect(listed.status).toBe(404);
      expect(listed.body.messages).toEqual([(await app.call('GET', '/v2/agent_aliases/nosuch/end_user_sessions', undefined, alice)).body.messages[0].replace('nosuch', alias)]);
    }
    expect(await sessionsOf('hr')).toEqual([]);
    // The granted alias works; the app client's own token did not get its end users' agents (an end-user grant is no agent route).
    expect((await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 'granted' }, alice)).status).toBe(201);
    // Granting hr to the client opens hrdesk to its end users.
    expect((await app.call('PATCH', `/v2/app_clients/${storefront.id}`, { agent_roles: [{ agent_key: 'helper', role: 'agent_user' }, { agent_key: 'vip', role: 'agent_user' }, { agent_key: 'hr', role: 'agent_user' }] })).status).toBe(200);
    expect((await app.call('POST', '/v2/agent_aliases/hrdesk/end_user_sessions', { key: 'now-granted' }, alice)).status).toBe(201);
    expect((await app.call('PATCH', `/v2/app_clients/${storefront.id}`, { agent_roles: [{ agent_key: 'helper', role: 'agent_user' }, { agent_key: 'vip', role: 'agent_user' }] })).status).toBe(200);
    // Taken back: the session there is gone for the end user, as is the alias.
    expect((await app.call('GET', '/v2/agent_aliases/hrdesk/end_user_sessions/now-granted', undefined, alice)).status).toBe(404);
    expect((await app.call('POST', '/v2/agent_aliases/hrdesk/end_user_sessions/now-granted/events', { messages: [{ type: 'text', content: 'hi' }] }, alice)).status).toBe(404);
  });

  it('finding 9: an end user steers routing only with the metadata the policy declares; anything else is refused and creates nothing', async () => {
    const refused = await app.call('POST', '/v2/agent_aliases/tiers/end_user_sessions', { key: 'gold1', metadata: { tier: 'gold' } }, alice);
    expect(refused.status).toBe(400);
    expect(refused.body.field_errors).toEqual({ 'metadata.tier': expect.any(String) });
    expect(refused.body.request_id).toEqual(expect.any(String));
    expect((await sessionsOf('vip')).length + (await sessionsOf('helper')).filter((s) => s.metadata?.tier).length).toBe(0);
    expect((await app.call('GET', '/v2/agent_aliases/tiers/end_user_sessions/gold1', undefined, alice)).status).toBe(404);
    // A declared field is taken; end_user is always the credential's, whatever was sent.
    const declared = await app.call('POST', '/v2/agent_aliases/tiers/end_user_sessions', { key: 'fr', metadata: { locale: 'fr', end_user: { id: 'bob' } } }, alice);
    expect(declared.status).toBe(201);
    const stored = (await sessionsOf('helper')).find((s) => s.metadata?.locale === 'fr');
    expect(stored?.metadata).toEqual({ locale: 'fr', end_user: { id: 'alice', app_client_id: storefront.id } });
    // Where the policy declares the tier, it is an input the end user may steer with, by the alias's own decision.
    expect((await app.call('POST', '/v2/agent_aliases/tiers-open/end_user_sessions', { key: 'gold2', metadata: { tier: 'gold' } }, alice)).status).toBe(201);
    expect((await sessionsOf('vip')).map((s) => s.end_user)).toEqual([`${storefront.id}/alice`]);
    // The declaration is checked when the policy is written.
    const bad = await app.call('PUT', '/v2/agent_aliases/tiers/policy', { policy: { type: 'routed', end_user_metadata: ['end_user'], rules: [single('helper')] } });
    expect([bad.status, Object.keys(bad.body.field_errors ?? {})]).toEqual([400, ['policy.end_user_metadata']]);
  });

  it('finding 16: a key another end user holds answers as a free key does, and leaves that session untouched', async () => {
    upstream.enqueue({ content: 'Hello Alice.' });
    expect((await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 'shared', name: 'My chat' }, alice)).status).toBe(201);
    expect((await app.call('POST', '/v2/agent_aliases/front/end_user_sessions/shared/events', { messages: [{ type: 'text', content: 'I am alice' }] }, alice)).status).toBe(201);
    const taken = await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 'shared', name: 'My chat' }, bob);
    const free = await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 'nobody-has-it', name: 'Other chat' }, bob);
    expect([taken.status, free.status]).toEqual([201, 201]);
    const shape = (b: Record<string, unknown>) => Object.keys(b).sort();
    expect(shape(taken.body)).toEqual(shape(free.body));
    expect(taken.body).toMatchObject({ key: 'shared', name: 'My chat', alias_key: 'front' });
    // Two sessions, each its owner's: alice's conversation is intact and bob's is empty.
    const aliceEvents = (await app.call('GET', '/v2/agent_aliases/front/end_user_sessions/shared/events', undefined, alice)).body.events;
    expect(aliceEvents.map((e: { type: string }) => e.type)).toEqual(['input_message', 'agent_output']);
    expect(aliceEvents.every((e: { session_key: string }) => e.session_key === 'shared')).toBe(true);
    expect((await app.call('GET', '/v2/agent_aliases/front/end_user_sessions/shared/events', undefined, bob)).body.events).toEqual([]);
    expect((await app.call('GET', '/v2/agent_aliases/front/end_user_sessions/shared', undefined, bob)).body).toMatchObject({ key: 'shared', name: 'My chat' });
    const owners = (await sessionsOf('helper')).filter((s) => s.end_user?.endsWith('/alice') || s.end_user?.endsWith('/bob'));
    expect(owners.filter((s) => s.key.endsWith('-shared')).map((s) => s.end_user).sort()).toEqual([`${storefront.id}/alice`, `${storefront.id}/bob`]);
    // A key is still one session per owner: its own second use is refused (400 on the key), in its own words.
    const again = await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 'shared' }, bob);
    expect(again.status).toBe(400);
    expect(again.body.messages[0]).not.toMatch(/eu-/);
  });
});
