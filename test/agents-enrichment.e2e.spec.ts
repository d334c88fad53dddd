import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/** Session enrichment: tool calls at session creation, the caller's identity, and the 422/502/504 rows. */
describe('session enrichment', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let site: Server;
  let siteUrl = '';
  const seen: string[] = [];

  beforeAll(async () => {
    site = createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url?.startsWith('/down')) return void res.writeHead(503).end('down');
      if (req.url?.startsWith('/slow')) return void setTimeout(() => res.writeHead(200).end('{}'), 3000);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tier: 'gold', path: req.url }));
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/tool_configurations', {
      key: 'crm',
      name: 'CRM lookup',
      type: 'web_get',
      enrichment_only: true,
      input_transform: `{url: ("${siteUrl}/customers/" + .session.caller.type + "/" + .session.caller.id)}`,
      output_transform: '.content | fromjson | {tier}',
    });
    const agent = (key: string, tools: object, calls: object[]) =>
      app.call('POST', '/v2/agents', { key, name: key, model: { name: 'm' }, tool_configurations: tools, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Tier ${session.metadata.crm.tier}' }] } }, session_enrichment: { tool_calls: calls } });
    expect((await agent('concierge', { crm: { type: 'reference', tool_configuration_key: 'crm' }, who: { type: 'web_get', argument_override: { url: { $ref: 'session.caller.id' } } } }, [{ tool: 'crm' }])).status).toBe(201);
    expect((await agent('broken', { t: { type: 'web_get', input_transform: 'error("bad transform")' } }, [{ tool: 't' }])).status).toBe(201);
    expect((await agent('secretless', { t: { type: 'web_get', argument_override: { url: { $ref: 'agent.secrets.missing' } } } }, [{ tool: 't' }])).status).toBe(201);
    expect((await agent('down', { t: { type: 'web_get' } }, [{ tool: 't', arguments: { url: `${siteUrl}/down` } }])).status).toBe(201);
    expect((await agent('slow', { t: { type: 'web_get' } }, [{ tool: 't', arguments: { url: `${siteUrl}/slow` }, timeout_seconds: 1 }])).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    site?.closeAllConnections();
    await new Promise((r) => site?.close(r));
  });

  it("runs the enrichment with the caller's identity, stores its output in the session's metadata, and the caller cannot be shadowed", async () => {
    const res = await app.call('POST', '/v2/agents/concierge/sessions', { key: 'c1', metadata: { caller: { type: 'user', id: 'mallory' } } });
    expect(res.status).toBe(201);
    expect(res.body.metadata).toEqual({ caller: { type: 'user', id: 'mallory' }, crm: { tier: 'gold' } });
    expect(seen.at(-1)).toBe('/customers/user/owner');
    // The enrichment-only tool is not offered to the model; instructions read what enrichment stored.
    upstream.enqueue({ content: 'hello' });
    await app.call('POST', '/v2/agents/concierge/sessions/c1/events', { messages: [{ type: 'text', content: 'hi' }] });
    const sent = upstream.chatRequests().at(-1)!.body as any;
    expect(sent.tools.map((t: any) => t.function.name)).toEqual(['who']);
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Tier gold' });
  });

  it('a $ref to the caller fails mid-conversation', async () => {
    upstream.enqueue({ toolCalls: [{ id: 'w', name: 'who', arguments: '{}' }] }, { content: 'ok' });
    const res = await app.call('POST', '/v2/agents/concierge/sessions/c1/events', { messages: [{ type: 'text', content: 'who am I' }] });
    expect(res.body.events.find((e: Ev) => e.type === 'tool_output')).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/session\.caller\.id.*does not resolve/) } });
  });

  it('answers 422, 502 and 504 naming the call and its cause, and creates nothing', async () => {
    const rows: [string, number, RegExp][] = [
      ['broken', 422, /session_enrichment\.tool_calls\[0\] \(t\): input_transform failed: .*bad transform/],
      ['secretless', 422, /session_enrichment\.tool_calls\[0\] \(t\): .*agent\.secrets\.missing.*does not resolve/],
      ['down', 502, /session_enrichment\.tool_calls\[0\] \(t\) failed/],
      ['slow', 504, /session_enrichment\.tool_calls\[0\] \(t\) did not finish within 1 s/],
    ];
    for (const [agent, status, message] of rows) {
      const res = await app.call('POST', `/v2/agents/${agent}/sessions`, { key: 'x' });
      expect(`${agent}: ${res.status}`).toBe(`${agent}: ${status}`);
      expect(res.body.messages[0]).toMatch(message);
      expect((await app.call('GET', `/v2/agents/${agent}/sessions/x`)).status).toBe(404);
      expect((await app.call('GET', `/v2/agents/${agent}/sessions`)).body.sessions).toEqual([]);
    }
  }, 20_000);

  it('refuses an enrichment that names no tool of the agent', async () => {
    const res = await app.call('POST', '/v2/agents', { key: 'odd', name: 'odd', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } }, session_enrichment: { tool_calls: [{ tool: 'nothing' }] } });
    expect(res.status).toBe(400);
    expect(res.body.field_errors['session_enrichment.tool_calls[0].tool']).toMatch(/not one of the agent's tool_configurations/);
  });
});
