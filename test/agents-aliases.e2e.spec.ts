import { pickWeighted } from '@lib/aliases';
import { ScriptedOpenAIServer } from '@lib/testing';
import { createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/** Issue 16, aliases (docs/aliases.md): routing policies, alias-routed sessions, isolation of what a caller may use. */
describe('agent aliases', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  const agent = (key: string) => app.call('POST', '/v2/agents', { key, name: key, model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
  const weighted = { type: 'weighted', partition_by: "get('$.session.metadata.user_id', '')", options: [{ agent_key: 'blue', weight: 70 }, { agent_key: 'green', weight: 30 }] };
  const policy = { type: 'routed', rules: [{ match: "get('$.session.metadata.tenant') == 'eu'", targets: { type: 'single', agent_key: 'green' } }, { targets: weighted }] };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    for (const key of ['blue', 'green']) expect((await agent(key)).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('refuses a policy with an unreachable rule, an unknown agent, no weight or a bad expression, naming the field', async () => {
    const bad = async (p: unknown, field: string) => {
      const res = await app.call('POST', '/v2/agent_aliases', { key: 'bad', name: 'Bad', policy: p });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.field_errors ?? {})).toContain(field);
    };
    await bad({ type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'blue' } }, { targets: { type: 'single', agent_key: 'green' } }] }, 'policy.rules[1]');
    await bad({ type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'nobody' } }] }, 'policy.rules[0].targets.agent_key');
    await bad({ type: 'routed', rules: [{ targets: { ...weighted, options: [{ agent_key: 'blue', weight: 0 }] } }] }, 'policy.rules[0].targets.options');
    await bad({ type: 'routed', rules: [{ match: "get('$.x' ==", targets: { type: 'single', agent_key: 'blue' } }] }, 'policy.rules[0].match');
    await bad({ type: 'routed', rules: [{ targets: { type: 'weighted', options: [{ agent_key: 'blue', weight: 1 }] } }] }, 'policy.rules[0].targets.partition_by');
    expect((await app.call('GET', '/v2/agent_aliases/bad')).status).toBe(404);
  });

  it('creates, lists (aliased_agent_key), gets, updates and replaces the policy; alias and agent keys are separate namespaces', async () => {
    const created = await app.call('POST', '/v2/agent_aliases', { key: 'support', name: 'Support', policy, metadata: { region: 'global' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ key: 'support', name: 'Support', enabled: true, policy, metadata: { region: 'global' }, description: null });
    expect((await app.call('POST', '/v2/agent_aliases', { key: 'support', name: 'Again', policy })).status).toBe(409);
    // An alias may carry an agent's key: /v2/agent_aliases/blue is the alias, /v2/agents/blue the agent.
    expect((await app.call('POST', '/v2/agent_aliases', { key: 'blue', name: 'Blue alias', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'green' } }] } })).status).toBe(201);
    expect((await app.call('GET', '/v2/agents/blue')).body.name).toBe('blue');
    expect((await app.call('GET', '/v2/agent_aliases?aliased_agent_key=blue')).body.aliases.map((a: any) => a.key)).toEqual(['support']);
    expect((await app.call('GET', '/v2/agent_aliases?aliased_agent_key=green')).body.aliases.map((a: any) => a.key)).toEqual(['blue', 'support']);
    expect((await app.call('PATCH', '/v2/agent_aliases/support', { description: 'Front door' })).body).toMatchObject({ description: 'Front door', policy });
  });

  it('splits 1,000 sessions within 3 % of the weights, keeps one partition value on one agent, and routes by match', async () => {
    const counts: Record<string, number> = { blue: 0, green: 0 };
    const ids = Array.from({ length: 1000 }, (_, i) => i);
    for (let i = 0; i < ids.length; i += 20) {
      const batch = await Promise.all(ids.slice(i, i + 20).map((n) => app.call('POST', '/v2/agent_aliases/support/sessions', { key: `u${n}`, metadata: { user_id: `user-${n}` } })));
      for (const res of batch) {
        expect(res.status).toBe(201);
        counts[res.body.agent_key]++;
      }
    }
    expect(Math.abs(counts.blue / 1000 - 0.7)).toBeLessThan(0.03);
    expect(Math.abs(counts.green / 1000 - 0.3)).toBeLessThan(0.03);
    const same = await Promise.all([1, 2, 3, 4, 5].map((n) => app.call('POST', '/v2/agent_aliases/support/sessions', { key: `again${n}`, metadata: { user_id: 'user-7' } })));
    expect(new Set(same.map((r) => r.body.agent_key)).size).toBe(1);
    const eu = await app.call('POST', '/v2/agent_aliases/support/sessions', { key: 'eu1', metadata: { tenant: 'eu', user_id: 'user-1' } });
    expect(eu.body).toMatchObject({ agent_key: 'green', alias_key: 'support' });
  }, 60_000);

  it('serves an alias-routed session on the agent chosen at creation, even after the policy changes', async () => {
    const created = await app.call('POST', '/v2/agent_aliases/support/sessions', { key: 'chat', metadata: { user_id: 'user-42' } });
    const chosen = created.body.agent_key as string;
    const other = chosen === 'blue' ? 'green' : 'blue';
    expect((await app.call('PUT', '/v2/agent_aliases/support/policy', { policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: other } }] } })).status).toBe(200);
    upstream.enqueue({ content: 'Hello from the routed agent.' });
    const input = await app.call('POST', '/v2/agent_aliases/support/sessions/chat/events', { messages: [{ type: 'text', content: 'hi' }] });
    expect(input.status).toBe(201);
    expect(input.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
    expect((await app.call('GET', '/v2/agent_aliases/support/sessions/chat')).body).toMatchObject({ key: 'chat', agent_key: chosen, alias_key: 'support' });
    expect((await app.call('GET', `/v2/agents/${chosen}/sessions/chat`)).status).toBe(200);
    expect((await app.call('GET', `/v2/agents/${other}/sessions/chat`)).status).toBe(404);
    const events = (await app.call('GET', '/v2/agent_aliases/support/sessions/chat/events')).body.events;
    expect(events.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
    expect((await app.call('GET', `/v2/agent_aliases/support/sessions/chat/events/${events[1].id}`)).body.type).toBe('agent_output');
    expect((await app.call('POST', `/v2/agent_aliases/support/sessions/chat/events/${events[1].id}/hide`)).status).toBe(200);
    expect((await app.call('GET', '/v2/agent_aliases/support/sessions/chat/outstanding_client_tool_calls')).body.client_tool_calls).toEqual([]);
    expect((await app.call('GET', '/v2/agent_aliases/support/sessions/chat/artifacts')).body.artifacts).toEqual([]);
    expect((await app.call('PATCH', '/v2/agent_aliases/support/sessions/chat', { name: 'Renamed' })).body.name).toBe('Renamed');
    const listed = (await app.call('GET', '/v2/agent_aliases/support/sessions?limit=100')).body.sessions;
    expect(listed.every((s: any) => s.alias_key === 'support')).toBe(true);
    // The key is the alias's: taken once, whichever agent holds it; nothing is created the second time.
    const dup = await app.call('POST', '/v2/agent_aliases/support/sessions', { key: 'chat' });
    expect(dup.status).toBe(400); // the reference lists no 409 for createAliasSession
    expect(dup.body.field_errors).toEqual({ key: 'already taken' });
    expect((await app.call('GET', `/v2/agents/${other}/sessions/chat`)).status).toBe(404);
    expect((await app.call('DELETE', '/v2/agent_aliases/support/sessions/chat')).status).toBe(204);
    expect((await app.call('GET', '/v2/agent_aliases/support/sessions/chat')).status).toBe(404);
    expect((await app.call('GET', '/v2/agent_aliases/support/sessions/nope')).status).toBe(404);
  });

  it('a caller reaches only alias sessions on agents it may use, and a disabled alias takes no sessions', async () => {
    expect((await app.call('PUT', '/v2/agent_aliases/support/policy', { policy })).status).toBe(200);
    const key = await createUser(app, 'blueuser', { agent_roles: [{ agent_key: 'blue', role: 'agent_user' }] });
    const as = (method: string, path: string, body?: unknown) => app.call(method, path, body, { 'x-api-key': key });
    // tenant eu routes to green, which this key may not use.
    expect((await as('POST', '/v2/agent_aliases/support/sessions', { key: 'k-eu', metadata: { tenant: 'eu' } })).status).toBe(403);
    expect((await app.call('GET', '/v2/agents/green/sessions/k-eu')).status).toBe(404);
    expect((await as('GET', '/v2/agent_aliases/support/sessions/eu1')).status).toBe(404);
    const mine = await as('POST', '/v2/agent_aliases/support/sessions', { key: 'k-blue', metadata: { tenant: 'us', user_id: 'user-0' } });
    // Routing is a pure function of the partition value: this key gets a session only where the policy sends user-0 to blue.
    if (pickWeighted(weighted.options, 'user-0') === 'blue') {
      expect(mine.status).toBe(201);
      expect((await as('GET', '/v2/agent_aliases/support/sessions/k-blue')).status).toBe(200);
    } else expect(mine.status).toBe(403);
    expect((await app.call('PATCH', '/v2/agent_aliases/support', { enabled: false })).status).toBe(200);
    expect((await app.call('POST', '/v2/agent_aliases/support/sessions', { key: 'late' })).status).toBe(404);
    expect((await app.call('DELETE', '/v2/agent_aliases/support')).status).toBe(204);
    expect((await app.call('GET', '/v2/agent_aliases/support')).status).toBe(404);
  });
});
