import { ScriptedOpenAIServer } from '@lib/testing';
import { createUser } from './support/auth-fixtures';
import { MCP_TOKEN, startMcpServer } from './support/mcp-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';
import { canonicalEvents } from '@lib/agents';

const SECRET = 'jira-token-5f1c9e-never-exported';
const QUAD = 'def process(x: int) -> dict:\n    """Quadruples x with the doubler.\n\n    Args:\n        x: the number to quadruple.\n    """\n    return {"y": tool.double(x=x)["y"] * 2}\n';
const CODE = 'def process(x: int) -> dict:\n    """Doubles x.\n\n    Args:\n        x: the number to double.\n    """\n    return {"y": x * 2}\n';

/** What a user compares: the agent as GET shows it, less what each service stamps itself. */
const comparable = (agent: Record<string, unknown>) => {
  const { created_at: _c, updated_at: _u, ...rest } = agent;
  return rest;
};

/** Export and import (issue 45, docs/agent-bundles.md): a round trip into a fresh service, dry runs, conflicts, rights. */
describe('agent export and import', () => {
  let source: TestApp;
  let target: TestApp;
  let upstream: ScriptedOpenAIServer;
  let bundle: Record<string, any>;
  let instructionId = '';

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    source = await startTestApp();
    target = await startTestApp();
    await registerScripted(source, upstream, 'm');
    await registerScripted(target, upstream, 'm');
    const ok = async (method: string, path: string, body?: unknown) => {
      const res = await source.call(method, path, body);
      if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    await ok('POST', '/v2/glossaries', { key: 'acme', name: 'ACME terms', description: 'House jargon' });
    await ok('POST', '/v2/glossaries/acme/entries', { entries: { SLA: 'service level agreement', PTO: 'paid time off' } });
    instructionId = (await ok('POST', '/v2/instructions', { name: 'voice', template: 'You answer for $agent.name, briefly.' })).id;
    await ok('PATCH', `/v2/instructions/${instructionId}`, { template: 'You answer for $agent.name, briefly and politely.' });
    await ok('POST', '/v2/tool_configurations', { key: 'fetcher', name: 'Fetcher', type: 'web_get', description: 'Fetches a page', max_body_bytes: 4096 });
    await ok('POST', '/v2/tools', { type: 'lambda', name: 'doubler', description: 'Doubles a number', code: CODE });
    // A lambda calling a lambda: the bundle lists the caller first, the import must create the callee first.
    await ok('POST', '/v2/tools', { type: 'lambda', name: 'quad', description: 'Quadruples a number', code: QUAD, tool_configurations: { double: { type: 'lambda', tool_id: 'tol_doubler' } } });
    await ok('POST', '/v2/agents', {
      key: 'helper',
      name: 'Helper',
      model: { name: 'm', parameters: { temperature: 0 } },
      tool_configurations: {
        fetch: { type: 'reference', tool_configuration_key: 'fetcher' },
        quad: { type: 'lambda', tool_id: 'tol_quad' },
        double: { type: 'lambda', tool_id: 'tol_doubler' },
        ticket: { type: 'client', description: 'Files a ticket', parameters: { type: 'object', properties: { title: { type: 'string' } } }, argument_override: { token: { $ref: 'agent.secrets.jira' } } },
        learn: { type: 'glossary_put_entries', argument_override: { glossary_key: 'acme' } },
      },
      skills: { triage: { description: 'Sorts tickets by urgency.', content: 'Urgent first, then the rest by age.' } },
      first_step_name: 'main',
      steps: {
        main: {
          instructions: [{ type: 'reference', id: instructionId, version: 1 }, { type: 'inline', template: 'Today is a good day.', template_type: 'text' }],
          reminders: [{ type: 'glossary_expansion', glossary_key: 'acme' }],
          next_steps: [{ step_name: 'polite', condition: "get('$.session.metadata.polite') == true" }],
        },
        polite: { instructions: [{ type: 'reference', id: instructionId }] },
      },
    });
    await ok('PUT', '/v2/agents/helper/secrets', { secrets: { jira: SECRET } });
  }, 180_000);

  afterAll(async () => {
    await source?.close();
    await target?.close();
    await upstream?.close();
  });

  it('exports one versioned bundle with everything the agent names, secrets by name only; a viewer may not', async () => {
    const res = await source.call('GET', '/v2/agents/helper/export');
    expect(res.status).toBe(200);
    bundle = res.body;
    expect(JSON.stringify(bundle)).not.toContain(SECRET);
    expect(bundle).toMatchObject({ format: 'agent-bundle', version: 1, agent: { key: 'helper', config: { name: 'Helper' } }, secrets: { agent: ['jira'] } });
    expect(bundle.instructions.map((i: any) => [i.id, i.version, i.template])).toEqual([
      [instructionId, 1, 'You answer for $agent.name, briefly.'],
      [instructionId, 2, 'You answer for $agent.name, briefly and politely.'],
    ]);
    expect(bundle.tool_configurations).toEqual([{ key: 'fetcher', config: expect.objectContaining({ name: 'Fetcher', type: 'web_get', max_body_bytes: 4096 }) }]);
    expect(bundle.tools).toEqual([expect.objectContaining({ id: 'tol_quad', code: QUAD, tool_configurations: { double: { type: 'lambda', tool_id: 'tol_doubler' } } }), expect.objectContaining({ id: 'tol_doubler', type: 'lambda', code: CODE })]);
    expect(bundle.glossaries).toEqual([{ key: 'acme', name: 'ACME terms', description: 'House jargon', entries: { PTO: 'paid time off', SLA: 'service level agreement' } }]);
    expect(Object.keys(bundle.agent.config.skills)).toEqual(['triage']);

    const viewer = await createUser(source, 'viewer', { agent_roles: [{ agent_key: 'helper', role: 'agent_viewer' }] });
    expect((await source.call('GET', '/v2/agents/helper', undefined, { 'x-api-key': viewer })).status).toBe(200);
    expect((await source.call('GET', '/v2/agents/helper/export', undefined, { 'x-api-key': viewer })).status).toBe(403);
  });

  it('refuses bad bundles with a 400 naming the field, and a caller without the rights, creating nothing', async () => {
    const bad = async (body: unknown, field: string, status = 400, key?: string) => {
      const res = await target.call('POST', '/v2/agents/import', body, key ? { 'x-api-key': key } : {});
      expect(res.status).toBe(status);
      if (field) expect(Object.keys(res.body.field_errors)).toContain(field);
      expect(res.body.request_id).toBeDefined();
    };
    await bad({ bundle: { ...bundle, format: 'zip' } }, 'bundle.format');
    await bad({ bundle: { ...bundle, version: 2 } }, 'bundle.version');
    const { template: _t, ...noTemplate } = bundle.instructions[0];
    await bad({ bundle: { ...bundle, instructions: [noTemplate, bundle.instructions[1]] } }, 'bundle.instructions[0].template');
    await bad({ bundle: { ...bundle, instructions: [{ ...bundle.instructions[0], template: '#if(' }, bundle.instructions[1]] } }, 'bundle.instructions[0].template');
    await bad({ bundle: { ...bundle, tool_configurations: [{ key: 'fetcher', config: { ...bundle.tool_configurations[0].config, type: 'client' } }] } }, 'bundle.tool_configurations[0].config.type');
    await bad({ bundle: { ...bundle, agent: { key: 'helper', config: { ...bundle.agent.config, model: { name: 'nope' } } } } }, 'bundle.agent.config.model.name');
    await bad({ bundle: { ...bundle, tools: [] } }, 'bundle.agent.config.tool_configurations.double.tool_id');
    await bad({ bundle, key: 'bad key!' }, 'key');
    // 1,001 instructions: refused before any is checked (a longer list held the process for a second).
    await bad({ bundle: { ...bundle, instructions: Array.from({ length: 1001 }, () => bundle.instructions[0]) } }, 'bundle.instructions');
    await bad({ bundle: { ...bundle, agent: { key: 'helper', config: { ...bundle.agent.config, steps: { ...bundle.agent.config.steps, main: 'x' } } } } }, 'bundle.agent.config.steps.main');
    await bad({ bundle: { ...bundle, secrets: { agent: 'jira' } } }, 'bundle.secrets.agent');
    await bad({ bundle: { ...bundle, tools: [...bundle.tools, { id: 'tol_form', type: 'client', name: 'form', description: 'A form', input_schema: { type: 'nonsense' } }] } }, 'bundle.tools[2].input_schema');
    await bad({ bundle: { ...bundle, tools: bundle.tools.map((t: any) => (t.id === 'tol_doubler' ? { ...t, code: 'def process(options: dict):\n    return options\n' } : t)) } }, 'bundle.tools[1].code');
    // The weakest credential that reaches the route (agent.create: an agent developer) may not create the glossary.
    await bad({ bundle }, 'bundle.glossaries[0]', 403, await createUser(target, 'dev', { api_roles: ['agent_developer'] }));
    await bad({ bundle }, '', 403, await createUser(target, 'reader', { api_roles: ['agent_viewer'] }));
    expect((await target.call('GET', '/v2/agents/helper')).status).toBe(404);
    expect((await target.call('GET', '/v2/tool_configurations/fetcher')).status).toBe(404);
    expect((await target.call('GET', '/v2/tools/tol_doubler')).status).toBe(404);
    expect((await target.call('GET', '/v2/glossaries/acme')).status).toBe(404);
    expect((await target.call('GET', `/v2/instructions/${instructionId}`)).status).toBe(404);
  });

  it('a dry run says what would be created and creates nothing', async () => {
    const res = await target.call('POST', '/v2/agents/import', { bundle, dry_run: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent_key: 'helper', dry_run: true, reused: [], conflicts: [], missing_secrets: ['jira'] });
    expect(res.body.created).toEqual([
      { kind: 'tool', id: 'tol_doubler' },
      { kind: 'tool', id: 'tol_quad' },
      { kind: 'tool_configuration', id: 'fetcher' },
      { kind: 'instruction', id: instructionId, versions: [1, 2] },
      { kind: 'glossary', id: 'acme' },
      { kind: 'agent', id: 'helper' },
    ]);
    expect((await target.call('GET', '/v2/agents/helper')).status).toBe(404);
    expect((await target.call('GET', '/v2/tools/tol_doubler')).status).toBe(404);
  });

  it('imports into a fresh service: the same configuration, and a turn sends the same model request', async () => {
    const res = await target.call('POST', '/v2/agents/import', { bundle });
    expect(res.status).toBe(201);
    expect(res.body.created).toHaveLength(6);
    expect(res.body.missing_secrets).toEqual(['jira']);
    const [a, b] = await Promise.all([source.call('GET', '/v2/agents/helper'), target.call('GET', '/v2/agents/helper')]);
    expect(comparable(b.body)).toEqual(comparable(a.body));
    expect((await target.call('GET', `/v2/instructions/${instructionId}?version=1`)).body.template).toBe('You answer for $agent.name, briefly.');
    expect((await target.call('GET', `/v2/instructions/${instructionId}`)).body.version).toBe(2);
    expect((await target.call('GET', '/v2/glossaries/acme/entries')).body.entries).toHaveLength(2);
    expect((await target.call('GET', '/v2/agents/helper/secrets')).body).toEqual({ secrets: {} });

    const turn = async (app: TestApp) => {
      await app.call('POST', '/v2/agents/helper/sessions', { key: 's1' });
      upstream.enqueue({ content: 'Noted.' });
      const sent = await app.call('POST', '/v2/agents/helper/sessions/s1/events', { messages: [{ type: 'text', content: 'Is the SLA met?' }] });
      expect(sent.status).toBe(201);
      const { messages, tools, model, temperature } = upstream.chatRequests().at(-1)!.body as any;
      return { messages, tools, model, temperature };
    };
    const there = await turn(source);
    const here = await turn(target);
    expect(here).toEqual(there);
    expect(JSON.stringify(here.messages)).toContain('SLA (service level agreement)');
    expect(here.tools.map((t: any) => t.function.name).sort()).toEqual(['double', 'fetch', 'invoke_skill', 'learn', 'quad', 'ticket']);
  });

  it('a conversation recorded on the source, re-run on the imported agent with the recorded answers, gives the same events (the replay canonical form)', async () => {
    const streamOf = async (app: TestApp, key: string) => {
      const all = (await app.call('GET', '/v2/events?category=session&limit=1000')).body.events as { stream_id: string; type: string; data: unknown; position: number; revision: number }[];
      return all.filter((e) => e.stream_id.endsWith(`.${key}`)).map((e) => ({ ...e, streamId: e.stream_id })) as unknown as Parameters<typeof canonicalEvents>[0];
    };
    const inputs = ['Is the SLA met?', 'And the PTO policy?'];
    // The source records a conversation that moves to the polite step after its first answer.
    await source.call('POST', '/v2/agents/helper/sessions', { key: 'recorded', metadata: { polite: true } });
    upstream.enqueue({ content: 'Yes, the SLA is met.' }, { content: 'PTO accrues monthly.' });
    for (const text of inputs) expect((await source.call('POST', '/v2/agents/helper/sessions/recorded/events', { messages: [{ type: 'text', content: text }] })).status).toBe(201);
    const recorded = await streamOf(source, 'recorded');
    expect(recorded.map((e) => e.type)).toContain('SessionStepTransitioned');
    // The imported agent, given the same inputs and the model's recorded answers, records the same events.
    const answers = recorded.filter((e) => e.type === 'SessionAgentOutput').map((e) => ({ content: (e.data as { content: string }).content }));
    upstream.enqueue(...answers);
    await target.call('POST', '/v2/agents/helper/sessions', { key: 'recorded', metadata: { polite: true } });
    for (const text of inputs) expect((await target.call('POST', '/v2/agents/helper/sessions/recorded/events', { messages: [{ type: 'text', content: text }] })).status).toBe(201);
    expect(canonicalEvents(await streamOf(target, 'recorded'))).toEqual(canonicalEvents(recorded));
    // And a recorded replay on the target of what it ran reproduces it, without a model call.
    const calls = upstream.chatRequests().length;
    const replay = await target.call('POST', '/v2/agents/helper/sessions/recorded/replay', {});
    expect(replay.status).toBe(201);
    expect(replay.body.diff.totals).toMatchObject({ turns: 2, replayed: 2, same_events: 2, diverged: 0 });
    expect(upstream.chatRequests().length).toBe(calls);
  });

  it('a second import reuses what is identical; a new key imports the agent alone; a differing object is a conflict', async () => {
    const again = await target.call('POST', '/v2/agents/import', { bundle });
    expect(again.status).toBe(201);
    expect(again.body.created).toEqual([]);
    expect(again.body.reused.map((o: any) => o.kind)).toEqual(['tool', 'tool', 'tool_configuration', 'instruction', 'glossary', 'agent']);

    const copy = await target.call('POST', '/v2/agents/import', { bundle, key: 'helper-copy' });
    expect(copy.status).toBe(201);
    expect(copy.body.created).toEqual([{ kind: 'agent', id: 'helper-copy' }]);
    expect(comparable((await target.call('GET', '/v2/agents/helper-copy')).body)).toEqual({ ...comparable((await target.call('GET', '/v2/agents/helper')).body), key: 'helper-copy' });

    expect((await target.call('PATCH', '/v2/tool_configurations/fetcher', { description: 'Fetches pages, changed here' })).status).toBe(200);
    const dry = await target.call('POST', '/v2/agents/import', { bundle, key: 'third', dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body.conflicts).toEqual([{ kind: 'tool_configuration', id: 'fetcher', reason: expect.stringContaining('differs') }]);
    const refused = await target.call('POST', '/v2/agents/import', { bundle, key: 'third' });
    expect(refused.status).toBe(409);
    expect(refused.body.field_errors).toEqual({ 'bundle.tool_configurations[0]': expect.stringContaining('fetcher') });
    expect((await target.call('GET', '/v2/agents/third')).status).toBe(404);
  });

  it('bundles an MCP server by address and credential name only; an import finds its tools on the same server here, else names the tool', async () => {
    const mcp = await startMcpServer();
    try {
      const server = await source.call('POST', '/v2/tool_servers', { name: 'Orders', type: 'mcp', uri: `${mcp.url}?tenant=t-private-77`, transport: 'streamable-http', headers: { 'x-tenant': 'tenant-value-private' }, auth: { type: 'bearer', token: MCP_TOKEN } });
      expect(server.status).toBe(201);
      expect((await source.call('POST', `/v2/tool_servers/${server.body.id}/sync`)).status).toBe(204);
      const lookup = (await source.call('GET', '/v2/tools?type=mcp')).body.tools.find((t: any) => t.name === 'lookup_order').id;
      const agent = await source.call('POST', '/v2/agents', { key: 'orders', name: 'Orders', model: { name: 'm' }, tool_configurations: { lookup: { type: 'mcp', tool_id: lookup } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
      expect(agent.status).toBe(201);
      const exported = await source.call('GET', '/v2/agents/orders/export');
      expect(exported.status).toBe(200);
      const text = JSON.stringify(exported.body);
      for (const secret of [MCP_TOKEN, 'tenant-value-private', 't-private-77']) expect(text).not.toContain(secret);
      expect(exported.body.tool_servers).toEqual([{ id: server.body.id, name: 'Orders', uri: mcp.url.split('?')[0], transport: 'streamable-http', header_names: ['x-tenant'], auth: { type: 'bearer' }, tool_ids: [lookup] }]);
      expect(exported.body.secrets.tool_servers).toEqual([{ tool_server_id: server.body.id, credential: 'bearer token' }]);
      const refused = await target.call('POST', '/v2/agents/import', { bundle: exported.body, dry_run: true });
      expect(refused.status).toBe(400);
      expect(refused.body.field_errors).toEqual({ 'bundle.agent.config.tool_configurations.lookup.tool_id': expect.stringContaining(lookup) });
      expect((await target.call('GET', '/v2/agents/orders')).status).toBe(404);

      // The same server registered and synced here (its own id, so its tools' ids differ): the import finds the tool
      // by the server's address and the tool's name, and the agent names the tool as it is here.
      const here = await target.call('POST', '/v2/tool_servers', { name: 'Orders here', type: 'mcp', uri: mcp.url, transport: 'streamable-http', auth: { type: 'bearer', token: MCP_TOKEN } });
      expect((await target.call('POST', `/v2/tool_servers/${here.body.id}/sync`)).status).toBe(204);
      const lookupHere = (await target.call('GET', '/v2/tools?type=mcp')).body.tools.find((t: any) => t.name === 'lookup_order').id;
      expect(lookupHere).not.toBe(lookup);
      const imported = await target.call('POST', '/v2/agents/import', { bundle: exported.body });
      expect(imported.status).toBe(201);
      expect(imported.body).toMatchObject({ created: [{ kind: 'agent', id: 'orders' }], mcp_tool_ids: { [lookup]: lookupHere } });
      expect((await target.call('GET', '/v2/agents/orders')).body.tool_configurations).toEqual({ lookup: { type: 'mcp', tool_id: lookupHere } });
    } finally {
      mcp.server.closeAllConnections?.();
      await new Promise((r) => mcp.server.close(r));
    }
  });
});
