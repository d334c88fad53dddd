import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/** Reusable tool configurations: CRUD, attached to agents by reference, read at each turn, kept while used. */
describe('tool configurations', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let site: Server;
  let siteUrl = '';

  beforeAll(async () => {
    site = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url, price: 42 })));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    site?.closeAllConnections();
    await new Promise((r) => site?.close(r));
  });

  it('creates, reads, lists, updates and refuses what a reusable configuration cannot be', async () => {
    const created = await app.call('POST', '/v2/tool_configurations', { key: 'prices', name: 'Price lookup', description: 'Looks up prices', type: 'web_get', output_transform: '{price: (.content | fromjson | .price)}', metadata: { team: 'sales' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ key: 'prices', name: 'Price lookup', type: 'web_get', enabled: true, metadata: { team: 'sales' }, created_at: expect.any(String) });
    expect((await app.call('GET', '/v2/tool_configurations/prices')).body).toEqual(created.body);
    const generated = await app.call('POST', '/v2/tool_configurations', { name: 'Doc Reader', type: 'artifact_read', tool_configuration: { max_lines: 50 } });
    expect(generated.body.key).toMatch(/^doc_reader_[0-9a-f]{8}$/);
    expect((await app.call('GET', '/v2/tool_configurations?type=web_get')).body.tool_configurations.map((c: any) => c.key)).toEqual(['prices']);
    const patched = await app.call('PATCH', '/v2/tool_configurations/prices', { description: 'Prices of products', metadata: null });
    expect(patched.body).toMatchObject({ description: 'Prices of products', metadata: {} });
    for (const [body, field] of [
      [{ name: 'x', type: 'client' }, 'type'],
      [{ name: 'x', type: 'dynamic_vectara' }, 'tool_id'],
      [{ name: 'x', type: 'document_conversion' }, 'type'],
      [{ name: 'x', type: 'web_get', input_transform: '.[' }, 'input_transform'],
      [{ name: 'x', type: 'web_get', max_body_bytes: 10 }, 'max_body_bytes'],
      [{ type: 'web_get' }, 'name'],
    ] as const) {
      const res = await app.call('POST', '/v2/tool_configurations', body);
      expect(res.status).toBe(400);
      expect(res.body.field_errors).toHaveProperty([field]);
    }
    expect((await app.call('PATCH', '/v2/tool_configurations/prices', { type: 'artifact_read' })).status).toBe(400);
    expect((await app.call('POST', '/v2/tool_configurations', { key: 'prices', name: 'again', type: 'web_get' })).status).toBe(409);
  });

  it('runs a referenced configuration in a turn under the agent’s name for it, and reads changes at the next turn', async () => {
    const bad = await app.call('POST', '/v2/agents', { key: 'bad', name: 'bad', model: { name: 'm' }, tool_configurations: { lookup: { type: 'reference', tool_configuration_key: 'ghost' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.field_errors['tool_configurations.lookup.tool_configuration_key']).toMatch(/no tool configuration "ghost"/);
    const agent = await app.call('POST', '/v2/agents', { key: 'shop', name: 'shop', model: { name: 'm' }, tool_configurations: { lookup: { type: 'reference', tool_configuration_key: 'prices' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(agent.status).toBe(201);
    await app.call('POST', '/v2/agents/shop/sessions', { key: 's' });
    upstream.enqueue({ toolCalls: [{ id: 'p', name: 'lookup', arguments: JSON.stringify({ url: `${siteUrl}/widget` }) }] }, { content: '42' });
    const res = await app.call('POST', '/v2/agents/shop/sessions/s/events', { messages: [{ type: 'text', content: 'price?' }] });
    expect(res.body.events.find((e: Ev) => e.type === 'tool_output').tool_output).toEqual({ price: 42 });
    expect((upstream.chatRequests().at(-2)!.body as any).tools).toEqual([expect.objectContaining({ function: expect.objectContaining({ name: 'lookup' }) })]);
    await app.call('PATCH', '/v2/tool_configurations/prices', { output_transform: '{path: (.content | fromjson | .path)}' });
    upstream.enqueue({ toolCalls: [{ id: 'q', name: 'lookup', arguments: JSON.stringify({ url: `${siteUrl}/gadget` }) }] }, { content: 'ok' });
    const again = await app.call('POST', '/v2/agents/shop/sessions/s/events', { messages: [{ type: 'text', content: 'and this?' }] });
    expect(again.body.events.find((e: Ev) => e.type === 'tool_output').tool_output).toEqual({ path: '/gadget' });
    // A disabled configuration is not offered to the model.
    await app.call('PATCH', '/v2/tool_configurations/prices', { enabled: false });
    upstream.enqueue({ content: 'no tools' });
    await app.call('POST', '/v2/agents/shop/sessions/s/events', { messages: [{ type: 'text', content: 'hi' }] });
    expect((upstream.chatRequests().at(-1)!.body as any).tools).toBeUndefined();
  });

  it('keeps a configuration an agent refers to, and deletes it once nothing does', async () => {
    const used = await app.call('DELETE', '/v2/tool_configurations/prices');
    expect(used.status).toBe(409);
    expect(used.body.messages[0]).toMatch(/used by agent shop/);
    await app.call('PATCH', '/v2/agents/shop', { tool_configurations: { lookup: null } });
    expect((await app.call('DELETE', '/v2/tool_configurations/prices')).status).toBe(204);
    expect((await app.call('GET', '/v2/tool_configurations/prices')).status).toBe(404);
  });
});
