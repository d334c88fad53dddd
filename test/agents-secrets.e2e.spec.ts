import { ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/** Agent secrets (sealed, `****` everywhere) and identity (the permissions an agent's tools act with). */
describe('agent secrets and identity', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const JIRA = 'jira-token-SECRET-1111111111';
  const SLACK = 'xoxb-slack-SECRET-2222222222';
  const ROTATED = 'jira-token-ROTATED-3333333333';
  const responses: unknown[] = [];
  const call = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const res = await app.call(method, path, body, headers);
    responses.push(res.body);
    return res;
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    // Debug logs every request, so the scan below sees every line a request could write.
    app = await startTestApp({ env: { LOG_LEVEL: 'debug' } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/corpora', { key: 'open', name: 'Open' });
    await app.call('POST', '/v2/corpora', { key: 'closed', name: 'Closed' });
    await app.call('POST', '/v2/corpora/open/documents', { id: 'd', type: 'core', document_parts: [{ text: 'The open corpus says hello.' }] });
    await app.call('POST', '/v2/corpora/closed/documents', { id: 'd', type: 'core', document_parts: [{ text: 'The closed corpus holds the salary table.' }] });
    const created = await app.call('POST', '/v2/agents', {
      key: 'ops',
      name: 'ops',
      model: { name: 'm' },
      tool_configurations: {
        ticket: { type: 'client', argument_override: { token: { $ref: 'agent.secrets.jira' } } },
        open: { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'open', lexical_interpolation: 1 }] } } },
        closed: { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'closed', lexical_interpolation: 1 }] } } },
      },
      first_step_name: 'main',
      steps: { main: { instructions: [] } },
    });
    expect(created.status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('stores secrets sealed and shows **** on every read and write: PUT replaces, PATCH adds and removes with null', async () => {
    expect((await call('GET', '/v2/agents/ops/secrets')).body).toEqual({ secrets: {} });
    const put = await call('PUT', '/v2/agents/ops/secrets', { secrets: { jira: JIRA, slack_bot_token: SLACK } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ secrets: { jira: '****', slack_bot_token: '****' } });
    const patched = await call('PATCH', '/v2/agents/ops/secrets', { secrets: { jira: ROTATED, slack_bot_token: null, extra: 'x' } });
    expect(patched.body).toEqual({ secrets: { extra: '****', jira: '****' } });
    const replaced = await call('PUT', '/v2/agents/ops/secrets', { secrets: { jira: ROTATED } });
    expect(replaced.body).toEqual({ secrets: { jira: '****' } });
    expect((await call('GET', '/v2/agents/ops/secrets')).body).toEqual({ secrets: { jira: '****' } });
    for (const [body, field] of [
      [{ secrets: { 'bad name': 'x' } }, 'secrets.bad name'],
      [{ secrets: { big: 'x'.repeat(4097) } }, 'secrets.big'],
      [{ secrets: { gone: null } }, 'secrets.gone'],
      [{ secrets: { n: 5 } }, 'secrets.n'],
    ] as const) {
      const res = await call('PUT', '/v2/agents/ops/secrets', body);
      expect(res.status).toBe(400);
      expect(res.body.field_errors).toHaveProperty([field]);
    }
    expect((await call('GET', '/v2/agents/ops/secrets')).body).toEqual({ secrets: { jira: '****' } });
    expect((await call('GET', '/v2/agents/ghost/secrets')).status).toBe(404);
  });

  it('resolves a secret for a tool, shows it masked in tool_input, and only to administrators', async () => {
    await call('POST', '/v2/agents/ops/sessions', { key: 's1' });
    upstream.enqueue({ toolCalls: [{ id: 't1', name: 'ticket', arguments: '{"title":"broken"}' }] });
    const res = await call('POST', '/v2/agents/ops/sessions/s1/events', { messages: [{ type: 'text', content: 'file a ticket' }] });
    const input = res.body.events.find((e: Ev) => e.type === 'tool_input');
    expect(input.tool_input).toEqual({ title: 'broken', token: '****' });
    // The caller that runs the client tool gets the secret's reference, never its value (issue 41, finding 13).
    const outstanding = await app.call('GET', '/v2/agents/ops/sessions/s1/outstanding_client_tool_calls');
    expect(outstanding.body.client_tool_calls[0].arguments).toEqual({ title: 'broken', token: { $ref: 'agent.secrets.jira' } });
    const developer = asKey(await createUser(app, 'dev', { agent_roles: [{ agent_key: 'ops', role: 'agent_developer' }] }));
    expect((await call('GET', '/v2/agents/ops/secrets', undefined, developer)).status).toBe(403);
    const stranger = asKey(await createUser(app, 'stranger', { agent_roles: [{ agent_key: 'other', role: 'agent_administrator' }] }));
    expect((await call('PUT', '/v2/agents/ops/secrets', { secrets: {} }, stranger)).status).toBe(404);
  });

  it("acts with the agent's identity: auto follows the tools, manual narrows it, and a corpus it may not read is a tool error", async () => {
    const auto = await call('GET', '/v2/agents/ops/identity');
    expect(auto.body).toEqual({ mode: 'auto', client_id: expect.stringMatching(/^agent_/), api_roles: [], corpus_roles: [{ corpus_key: 'closed', role: 'viewer' }, { corpus_key: 'open', role: 'viewer' }], agent_roles: [] });
    const manual = await call('PATCH', '/v2/agents/ops/identity', { mode: 'manual', corpus_roles: [{ corpus_key: 'open', role: 'viewer' }] });
    expect(manual.body).toMatchObject({ mode: 'manual', corpus_roles: [{ corpus_key: 'open', role: 'viewer' }] });
    expect((await call('PATCH', '/v2/agents/ops/identity', { api_roles: ['emperor'] })).status).toBe(400);
    await call('POST', '/v2/agents/ops/sessions', { key: 's2' });
    upstream.enqueue({ toolCalls: [{ id: 'o', name: 'open', arguments: '{"query":"hello"}' }, { id: 'c', name: 'closed', arguments: '{"query":"salary"}' }] }, { content: 'done' });
    const res = await call('POST', '/v2/agents/ops/sessions/s2/events', { messages: [{ type: 'text', content: 'search both' }] });
    const outputs = Object.fromEntries(res.body.events.filter((e: Ev) => e.type === 'tool_output').map((e: Ev) => [e.tool_call_id, e]));
    expect(outputs.o.error).toBe(false);
    expect(outputs.o.tool_output.search_results[0].text).toContain('open corpus');
    expect(outputs.c).toMatchObject({ error: true, tool_output: { error: expect.stringContaining('may not read') } });
    expect(JSON.stringify(res.body)).not.toContain('salary table');
    const back = await call('PATCH', '/v2/agents/ops/identity', { mode: 'auto', corpus_roles: [] });
    expect(back.body.corpus_roles).toHaveLength(2);
  });

  it('gives a deleted and re-created agent no secrets, and no secret value reaches a response, the log or a log line', async () => {
    expect((await call('DELETE', '/v2/agents/ops')).status).toBe(204);
    await call('POST', '/v2/agents', { key: 'ops', name: 'ops', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect((await call('GET', '/v2/agents/ops/secrets')).body).toEqual({ secrets: {} });
    const everything = JSON.stringify([responses, (await app.call('GET', '/v2/events?limit=1000')).body, app.logLines]);
    for (const secret of [JIRA, SLACK, ROTATED]) expect(everything).not.toContain(secret);
  });
});
