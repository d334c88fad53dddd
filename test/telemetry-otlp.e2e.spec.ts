import { randomBytes } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScriptedOpenAIServer } from '@lib/testing';
import { MCP_TOKEN, startMcpServer } from './support/mcp-fixtures';
import { OtlpReceiver, ReceivedSpan } from './support/otlp-receiver';
import { scratchDir } from './support/scratch-dir';
import { spawnService } from './support/service-process';
import { startTestApp, TEST_KEY } from './support/test-app';
import { until } from './support/wait';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * Issue 44: OpenTelemetry (docs/telemetry.md). Off, nothing of the SDK is loaded and no call leaving the service
 * carries a `traceparent`; on (OTEL_EXPORTER_OTLP_ENDPOINT at an OTLP/HTTP receiver on 127.0.0.1), a request's
 * incoming trace is continued through its server span, the agent turn's spans, the store's appends, the model and
 * tool calls and the webhook delivery its turn's end causes. "Off" runs in this process (its module registry shows
 * what was loaded); "on" runs the service as a process of its own, as deployed: the OTLP exporter loads `http` with
 * a dynamic import, which jest's module system refuses, and its SIGTERM is the shutdown path that flushes the spans.
 */
type Call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any }>;

describe('OpenTelemetry export and traceparent propagation', () => {
  let upstream: ScriptedOpenAIServer;
  let hooks: WebhookReceiver;
  let mcp: Awaited<ReturnType<typeof startMcpServer>>;
  let site: Server;
  let siteUrl = '';
  const siteHeaders: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    site = createServer((req, res) => {
      siteHeaders.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('the weather is fine');
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    upstream = await ScriptedOpenAIServer.start();
    hooks = await WebhookReceiver.start();
    mcp = await startMcpServer();
  });
  afterAll(async () => {
    await upstream?.close();
    await hooks?.close();
    mcp?.server.closeAllConnections();
    await new Promise((r) => mcp?.server.close(r));
    site?.closeAllConnections();
    await new Promise((r) => site?.close(r));
  });

  const traceId = () => randomBytes(16).toString('hex');
  const spanId = () => randomBytes(8).toString('hex');

  /** An agent with a web_get, an MCP and a sub-agent tool, a webhook on its turns, and one turn calling all three, sent with `traceparent`. */
  async function turnWithToolAndWebhook(call: Call, traceparent: string, path: string) {
    expect((await call('POST', '/v2/llms', { type: 'openai-compatible', name: 'm', model: 'm-upstream', uri: `${upstream.baseURL}/chat/completions` })).status).toBe(201);
    const server = await call('POST', '/v2/tool_servers', { name: 'Orders', type: 'mcp', uri: mcp.url, transport: 'streamable-http', auth: { type: 'bearer', token: MCP_TOKEN } });
    expect(server.status).toBe(201);
    expect((await call('POST', `/v2/tool_servers/${server.body.id}/sync`)).status).toBe(204);
    const lookup = (await call('GET', '/v2/tools?type=mcp')).body.tools.find((t: { name: string }) => t.name === 'lookup_order');
    expect((await call('POST', '/v2/agents', { key: 'expert', name: 'Expert', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
    const tools = { weather: { type: 'web_get' }, orders: { type: 'mcp', tool_id: lookup.id }, ask: { type: 'sub_agent', sub_agent_configuration: { agent_key: 'expert' } } };
    const agent = await call('POST', '/v2/agents', { key: 'desk', name: 'Desk', model: { name: 'm' }, tool_configurations: tools, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(agent.status).toBe(201);
    expect((await call('POST', '/v2/webhooks', { url: `${hooks.url}${path}`, event_types: ['session.turn_completed'], agent_keys: ['desk'] })).status).toBe(201);
    expect((await call('POST', '/v2/agents/desk/sessions', { key: 'sess-1' })).status).toBe(201);
    const toolCalls = [
      { id: 'call_w', name: 'weather', arguments: JSON.stringify({ url: `${siteUrl}/today` }) },
      { id: 'call_o', name: 'orders', arguments: JSON.stringify({ order_id: 'A-17' }) },
      { id: 'call_s', name: 'ask', arguments: JSON.stringify({ message: 'Is it warm?' }) },
    ];
    // The sub-agent's model call is the only one made while the tools run: it takes the second reply.
    upstream.enqueue({ toolCalls, usage: { prompt_tokens: 31, completion_tokens: 7 } }, { content: 'Warm.', usage: { prompt_tokens: 5, completion_tokens: 1 } }, { content: 'Fine weather.', usage: { prompt_tokens: 45, completion_tokens: 3 } });
    const mcpBefore = mcp.headers.length;
    const chatsBefore = upstream.chatRequests().length;
    const sitesBefore = siteHeaders.length;
    const sent = await call('POST', '/v2/agents/desk/sessions/sess-1/events', { messages: [{ type: 'text', content: 'weather?' }] }, { traceparent });
    expect(sent.status).toBe(201);
    expect(sent.body.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['tool_input', 'tool_output', 'agent_output']));
    const delivered = await until('the webhook delivery', () => hooks.at(path)[0]);
    return { chats: upstream.chatRequests().slice(chatsBefore), sites: siteHeaders.slice(sitesBefore), mcps: mcp.headers.slice(mcpBefore), delivered };
  }

  it('off by default: no SDK module is loaded, no span is made and nothing leaving the service carries a traceparent, even when the request brought one', async () => {
    const app = await startTestApp({ env: { WORKER_POLL_MS: '200' } });
    try {
      const { chats, sites, mcps, delivered } = await turnWithToolAndWebhook(app.call, `00-${traceId()}-${spanId()}-01`, '/off');
      expect(chats.length).toBe(3);
      for (const chat of chats) expect(chat.headers.traceparent).toBeUndefined();
      expect(sites.length).toBe(1);
      expect(sites[0].traceparent).toBeUndefined();
      expect(delivered.headers.traceparent).toBeUndefined();
      expect(mcps.length).toBeGreaterThan(0);
      expect(mcps.map((h) => h.traceparent)).toEqual(mcps.map(() => undefined));
      const events = await app.started.infra.events.readAll({});
      expect(events.filter((e) => e.metadata.traceparent !== undefined)).toEqual([]);
      // The probe sees this file's modules (the API, which is a no-op without the SDK, is loaded), not an empty cache.
      expect(Object.keys(require.cache).some((m) => /@opentelemetry[\\/]api[\\/]/.test(m))).toBe(true);
      const loaded = Object.keys(require.cache).filter((m) => /@opentelemetry[\\/](sdk-|exporter-|otlp-|resources|context-async-hooks)/.test(m));
      expect(loaded).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('on: spans arrive over OTLP in the caller\'s trace (server span by route, invoke_agent > chat > execute_tool with tokens, a sub-agent turn under its tool call, store appends, the webhook delivery), and the model, the web and MCP tools and the webhook receiver got that trace\'s traceparent', async () => {
    const otlp = await OtlpReceiver.start();
    const service = await spawnService({ DATA_DIR: scratchDir('ars-otel-'), ADMIN_API_KEY: TEST_KEY, SQLITE_SYNCHRONOUS: 'NORMAL', WORKER_POLL_MS: '200', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'ars-under-test' }, 120_000);
    const call: Call = async (method, path, body, headers = {}) => {
      const res = await fetch(`${service.url}${path}`, { method, headers: { 'x-api-key': TEST_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    const trace = traceId();
    const callerSpan = spanId();
    let result: Awaited<ReturnType<typeof turnWithToolAndWebhook>>;
    try {
      await until('the owner key', async () => ((await call('GET', '/v2/agents')).status === 200 ? true : undefined));
      result = await turnWithToolAndWebhook(call, `00-${trace}-${callerSpan}-01`, '/on');
      const events = (await call('GET', '/v2/events?category=session&type=SessionTurnEnded&limit=10')).body.events as { metadata: { traceparent?: string } }[];
      // The sub-agent's turn ends in the same trace.
      expect(events.map((e) => e.metadata.traceparent?.split('-')[1])).toEqual([trace, trace]);
    } finally {
      // The batched spans are exported by the service's shutdown path (SIGTERM: requests drained, stores closed, flushed).
      service.child.kill('SIGTERM');
    }
    expect(await service.exited).toBe(0);
    const spans = otlp.inTrace(trace);
    await otlp.close();
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const one = (name: string): ReceivedSpan => {
      const found = byName(name);
      if (found.length !== 1) throw new Error(`${found.length} spans named ${name} in ${spans.map((s) => s.name).join(', ')}`);
      return found[0];
    };

    expect(spans.every((s) => s.resource['service.name'] === 'ars-under-test')).toBe(true);
    const server = one('POST /v2/agents/:agent_key/sessions/:session_key/events');
    expect(server.parentSpanId).toBe(callerSpan);
    expect(server.kind).toBe(2); // SERVER
    expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/v2/agents/:agent_key/sessions/:session_key/events', 'http.response.status_code': 201 });
    // Nothing of the request beyond its route: no URL, no key, no header.
    expect(JSON.stringify(server.attributes)).not.toMatch(/sess-1|desk|zut_/);

    const invoke = one('invoke_agent Desk');
    expect(invoke.parentSpanId).toBe(server.spanId);
    expect(invoke.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'desk', 'gen_ai.conversation.id': 'sess-1', 'gen_ai.usage.input_tokens': 76, 'gen_ai.usage.output_tokens': 10, 'agent.turn.outcome': 'answered' });
    const chats = byName('chat m');
    expect(chats).toHaveLength(3);
    const own = chats.filter((c) => c.parentSpanId === invoke.spanId);
    expect(own.map((c) => [c.attributes['gen_ai.usage.input_tokens'], c.attributes['gen_ai.usage.output_tokens']]).sort()).toEqual([[31, 7], [45, 3]]);
    const asking = own.find((c) => c.attributes['agent.tool_calls'] !== 0)!;
    expect(asking.attributes['agent.tool_calls']).toBe(3);
    const tool = one('execute_tool weather');
    expect(tool.parentSpanId).toBe(asking.spanId);
    expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'weather', 'gen_ai.tool.type': 'web_get', 'gen_ai.tool.call.id': 'call_w' });
    const mcpTool = one('execute_tool orders');
    expect(mcpTool.parentSpanId).toBe(asking.spanId);
    expect(mcpTool.attributes).toMatchObject({ 'gen_ai.tool.type': 'mcp', 'gen_ai.tool.call.id': 'call_o' });
    // The sub-agent's turn nests under the tool call that ran it, its model call under its turn.
    const subTool = one('execute_tool ask');
    expect([subTool.parentSpanId, subTool.attributes['gen_ai.tool.type']]).toEqual([asking.spanId, 'sub_agent']);
    const sub = one('invoke_agent Expert');
    expect(sub.parentSpanId).toBe(subTool.spanId);
    expect(sub.attributes).toMatchObject({ 'gen_ai.agent.id': 'expert', 'gen_ai.usage.input_tokens': 5, 'gen_ai.usage.output_tokens': 1 });
    expect(chats.filter((c) => c.parentSpanId === sub.spanId)).toHaveLength(1);

    const appends = byName('event_store append');
    expect(appends.map((a) => a.attributes['event_store.event_types']).flat()).toEqual(expect.arrayContaining(['SessionInputReceived', 'SessionToolCalled', 'SessionToolReturned', 'SessionTurnEnded']));
    const delivery = one('webhook deliver');
    const endAppend = appends.find((a) => (a.attributes['event_store.event_types'] as string[]).includes('SessionTurnEnded') && a.parentSpanId === invoke.spanId)!;
    expect(delivery.parentSpanId).toBe(endAppend.spanId);
    expect(delivery.attributes).toMatchObject({ 'webhook.event_type': 'session.turn_completed', 'http.response.status_code': 200 });

    // What left the service carried the span it was made in: each model call its chat span, the tool call its
    // execute_tool span, the webhook its delivery span, all in the caller's trace.
    const { chats: calls, sites, mcps, delivered } = result!;
    expect(calls.map((c) => c.headers.traceparent).sort()).toEqual(chats.map((c) => `00-${trace}-${c.spanId}-01`).sort());
    expect(sites.map((h) => h.traceparent)).toEqual([`00-${trace}-${tool.spanId}-01`]);
    // The MCP client's requests of that call (the tool call, and whatever the transport sends with it).
    expect(mcps.length).toBeGreaterThan(0);
    expect(new Set(mcps.map((h) => h.traceparent))).toEqual(new Set([`00-${trace}-${mcpTool.spanId}-01`]));
    expect(delivered.headers.traceparent).toBe(`00-${trace}-${delivery.spanId}-01`);
    expect(service.output.join('\n')).toContain('OpenTelemetry tracing on');
  }, 180_000);

  it('exports protobuf by default, to the traces endpoint as given', async () => {
    const otlp = await OtlpReceiver.start();
    const service = await spawnService({ DATA_DIR: scratchDir('ars-otel-'), ADMIN_API_KEY: TEST_KEY, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/collector/traces` }, 120_000);
    const trace = traceId();
    try {
      const res = await fetch(`${service.url}/v2/agents`, { headers: { 'x-api-key': TEST_KEY, traceparent: `00-${trace}-${spanId()}-01` } });
      expect(res.status).toBe(200);
    } finally {
      service.child.kill('SIGTERM');
    }
    expect(await service.exited).toBe(0);
    await otlp.close();
    expect(otlp.requests.map((r) => [r.path, r.contentType])).toContainEqual(['/collector/traces', 'application/x-protobuf']);
    // The trace id travels as its 16 raw bytes in the protobuf encoding, the route pattern as text.
    const sent = Buffer.concat(otlp.requests.map((r) => r.body));
    expect(sent.includes(Buffer.from(trace, 'hex'))).toBe(true);
    expect(sent.includes(Buffer.from('GET /v2/agents'))).toBe(true);
  }, 180_000);

  it('refuses a protocol it cannot export with (grpc) at start, naming the setting', async () => {
    await expect(startTestApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' } })).rejects.toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/);
  });
});
