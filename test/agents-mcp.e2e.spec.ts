import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { MCP_TOKEN as TOKEN, startMcpServer } from './support/mcp-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

describe('MCP tool servers', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let mcp: Awaited<ReturnType<typeof startMcpServer>>;

  beforeAll(async () => {
    mcp = await startMcpServer();
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { LOG_LEVEL: 'debug' } });
    await registerScripted(app, upstream, 'm');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    mcp?.server.closeAllConnections();
    await new Promise((r) => mcp?.server.close(r));
  });

  it('registers a server with a masked token, syncs its tools, and an agent calls one in a turn', async () => {
    const created = await app.call('POST', '/v2/tool_servers', { name: 'Orders', type: 'mcp', uri: mcp.url, transport: 'streamable-http', auth: { type: 'bearer', token: TOKEN } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^tsr_/), name: 'Orders', auth: { type: 'bearer', token: '****' } });
    const id = created.body.id;
    expect((await app.call('POST', `/v2/tool_servers/${id}/sync`)).status).toBe(204);
    const tools = (await app.call('GET', '/v2/tools?type=mcp')).body.tools;
    expect(tools.map((t: any) => t.name).sort()).toEqual(['lookup_order', 'ping']);
    const lookup = tools.find((t: any) => t.name === 'lookup_order');
    expect(lookup).toMatchObject({ id: expect.stringMatching(/^tol_/), type: 'mcp', server_id: id, description: 'Looks up an order by id', input_schema: { type: 'object', properties: { order_id: { type: 'string' } } } });

    const agent = await app.call('POST', '/v2/agents', { key: 'support', name: 'support', model: { name: 'm' }, tool_configurations: { orders: { type: 'mcp', tool_id: lookup.id } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(agent.status).toBe(201);
    await app.call('POST', '/v2/agents/support/sessions', { key: 's' });
    upstream.enqueue({ toolCalls: [{ id: 'a', name: 'orders', arguments: '{"order_id":"A-17"}' }, { id: 'b', name: 'orders', arguments: '{"order_id":"missing"}' }] }, { content: 'It shipped.' });
    const res = await app.call('POST', '/v2/agents/support/sessions/s/events', { messages: [{ type: 'text', content: 'where is A-17?' }] });
    const outputs = Object.fromEntries(res.body.events.filter((e: Ev) => e.type === 'tool_output').map((e: Ev) => [e.tool_call_id, e]));
    expect(outputs.a).toMatchObject({ error: false, tool_output: { content: [{ type: 'text', text: 'Order A-17: shipped on 2026-11-20' }] } });
    expect(outputs.b).toMatchObject({ error: true, tool_output: { content: [{ type: 'text', text: 'no order missing' }] } });
    expect(mcp.calls).toEqual([{ name: 'lookup_order', args: { order_id: 'A-17' } }, { name: 'lookup_order', args: { order_id: 'missing' } }]);
    const sent = upstream.chatRequests().at(-2)!.body as any;
    expect(sent.tools[0].function).toMatchObject({ name: 'orders', description: 'Looks up an order by id', parameters: { properties: { order_id: { type: 'string' } } } });
  });

  it('refuses what is wrong, keeps a server whose tools are used, and shows no token anywhere', async () => {
    expect((await app.call('POST', '/v2/tool_servers', { name: 'x', type: 'mcp', uri: 'ftp://example.com' })).status).toBe(400);
    expect((await app.call('POST', '/v2/tool_servers', { name: 'x', type: 'mcp', uri: 'http://169.254.169.254/mcp' })).status).toBe(400);
    const wrong = await app.call('POST', '/v2/tool_servers', { name: 'no token', type: 'mcp', uri: mcp.url, transport: 'streamable-http' });
    const failed = await app.call('POST', `/v2/tool_servers/${wrong.body.id}/sync`);
    expect(failed.status).toBe(502);
    expect(failed.body.messages[0]).toMatch(/could not be synced/);
    const bad = await app.call('POST', '/v2/agents', { key: 'bad', name: 'bad', model: { name: 'm' }, tool_configurations: { t: { type: 'mcp', tool_id: 'tol_nope' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(bad.status).toBe(400);
    const servers = (await app.call('GET', '/v2/tool_servers')).body.tool_servers;
    const orders = servers.find((s: any) => s.name === 'Orders');
    expect((await app.call('DELETE', `/v2/tool_servers/${orders.id}`)).status).toBe(409);
    expect((await app.call('DELETE', `/v2/tool_servers/${wrong.body.id}`)).status).toBe(204);
    const everything = JSON.stringify([servers, (await app.call('GET', '/v2/events?limit=1000')).body, app.logLines]);
    expect(everything).not.toContain(TOKEN);
  });

  it('lists the built-in tools with their metadata beside the synced ones', async () => {
    const all = (await app.call('GET', '/v2/tools?limit=100')).body.tools as any[];
    const web = all.find((t) => t.id === 'tol_builtin_web_get');
    expect(web).toMatchObject({ type: 'web_get', name: 'web_get', category: 'web', lineage: 'web_get', version: '1', tool_groups: ['web'], input_schema: { required: ['url'] } });
    expect(all.filter((t) => t.type === 'mcp').length).toBeGreaterThan(0);
    expect((await app.call('GET', '/v2/tools?type=artifact_grep')).body.tools.map((t: any) => t.id)).toEqual(['tol_builtin_artifact_grep']);
    expect((await app.call('GET', '/v2/tools/tol_builtin_sub_agent')).body).toMatchObject({ category: 'agents', input_schema: { required: ['message'] } });
    // Every listed type is one of the reference's Tool types (issue 44): a built-in tool it has no type for is listed as
    // dynamic_vectara, named by the type a configuration gives; either finds it.
    const referenceTypes = ['dynamic_vectara', 'mcp', 'corpora_search', 'web_search', 'web_get', 'lambda', 'sub_agent', 'artifact_create', 'artifact_read', 'artifact_grep', 'image_read', 'document_conversion', 'get_document_text', 'client'];
    expect(all.filter((t) => !referenceTypes.includes(t.type))).toEqual([]);
    expect(all.find((t) => t.id === 'tol_builtin_scratch_pad')).toMatchObject({ type: 'dynamic_vectara', name: 'scratch_pad' });
    expect((await app.call('GET', '/v2/tools?type=scratch_pad')).body.tools.map((t: any) => t.id)).toEqual(['tol_builtin_scratch_pad']);
    expect((await app.call('GET', '/v2/tools?type=dynamic_vectara')).body.tools.map((t: any) => t.name)).toEqual(expect.arrayContaining(['scratch_pad', 'document_index', 'corpora_search_20260608']));
    expect((await app.call('GET', '/v2/tools/tol_nothing')).status).toBe(404);
  });
  it('lists one server\'s tools by tool_server_id, and enables or disables an MCP tool with the reference\'s UpdateMcpToolRequest', async () => {
    const orders = (await app.call('GET', '/v2/tool_servers')).body.tool_servers.find((s: any) => s.name === 'Orders').id;
    const other = (await app.call('POST', '/v2/tool_servers', { name: 'Other', type: 'mcp', uri: mcp.url, transport: 'streamable-http', auth: { type: 'bearer', token: TOKEN } })).body.id;
    expect((await app.call('POST', `/v2/tool_servers/${other}/sync`)).status).toBe(204);
    const ofServer = async (query: string) => (await app.call('GET', `/v2/tools?${query}`)).body.tools.map((t: any) => `${t.server_id}/${t.name}`).sort();
    expect(await ofServer(`tool_server_id=${orders}`)).toEqual([`${orders}/lookup_order`, `${orders}/ping`]);
    expect(await ofServer(`tool_server_id=${other}&type=mcp`)).toEqual([`${other}/lookup_order`, `${other}/ping`]);
    expect(await ofServer('tool_server_id=tsr_none')).toEqual([]);
    expect((await app.call('GET', '/v2/tools?tool_server_id=orders')).status).toBe(400);

    const lookup = (await app.call('GET', `/v2/tools?tool_server_id=${orders}`)).body.tools.find((t: any) => t.name === 'lookup_order');
    const off = await app.call('PATCH', `/v2/tools/${lookup.id}`, { type: 'mcp', enabled: false });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: lookup.id, type: 'mcp', server_id: orders, enabled: false });
    expect((await app.call('GET', `/v2/tools/${lookup.id}`)).body.enabled).toBe(false);
    expect(await ofServer('type=mcp&enabled=false')).toEqual([`${orders}/lookup_order`]);
    // The other server's tool of the same name, and the server, are unchanged; a sync keeps the tool disabled.
    expect(await ofServer(`tool_server_id=${other}&enabled=true`)).toEqual([`${other}/lookup_order`, `${other}/ping`]);
    expect((await app.call('POST', `/v2/tool_servers/${orders}/sync`)).status).toBe(204);
    expect((await app.call('GET', `/v2/tools/${lookup.id}`)).body.enabled).toBe(false);
    // A disabled tool is not offered: the agent using it talks to its model without it.
    await app.call('POST', '/v2/agents/support/sessions', { key: 'without-orders' });
    upstream.enqueue({ content: 'I cannot look orders up now.' });
    expect((await app.call('POST', '/v2/agents/support/sessions/without-orders/events', { messages: [{ type: 'text', content: 'where is A-17?' }] })).status).toBe(201);
    expect(((upstream.chatRequests().at(-1)!.body as any).tools ?? []).map((t: any) => t.function.name)).not.toContain('orders');

    expect((await app.call('PATCH', `/v2/tools/${lookup.id}`, { type: 'mcp', enabled: true })).body.enabled).toBe(true);
    // Mismatched types and fields the reference's UpdateMcpToolRequest has not are refused, naming the field.
    const asLambda = await app.call('PATCH', `/v2/tools/${lookup.id}`, { type: 'lambda', enabled: false });
    expect([asLambda.status, asLambda.body.field_errors]).toEqual([400, { type: 'must be mcp' }]);
    const titled = await app.call('PATCH', `/v2/tools/${lookup.id}`, { type: 'mcp', title: 'Orders' });
    expect([titled.status, Object.keys(titled.body.field_errors)]).toEqual([400, ['title']]);
    const client = (await app.call('POST', '/v2/tools', { type: 'client', name: 'sign', description: 'Collects a signature' })).body.id;
    const clientAsMcp = await app.call('PATCH', `/v2/tools/${client}`, { type: 'mcp', enabled: false });
    expect([clientAsMcp.status, clientAsMcp.body.field_errors]).toEqual([400, { type: 'must be client' }]);
    expect((await app.call('GET', `/v2/tools/${client}`)).body.enabled).toBe(true);
    expect((await app.call('PATCH', '/v2/tools/tol_nothing', { type: 'mcp', enabled: false })).status).toBe(404);
    expect((await app.call('GET', `/v2/tools/${lookup.id}`)).body.enabled).toBe(true);
  });
});
