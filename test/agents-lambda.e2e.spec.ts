import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

const SCORE = `from typing import Literal

def process(order_count: int, total_revenue: float, tier: Literal["basic", "gold"] = "basic") -> dict:
    """Calculate a customer score.

    Args:
        order_count: The number of orders placed by the customer.
        total_revenue: Total revenue in USD from the customer.
    """
    score = order_count * 10 + total_revenue * 0.1
    status = tool.status()
    doubled = tool.double(value=score)
    return {"score": round(score, 2), "doubled": doubled["result"], "status": status["content"].strip(), "tier": tier}
`;

/** Lambda tools (issue 15): /v2/tools, tests with and without creation, and lambdas in agent turns. */
describe('lambda tools', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let site: Server;
  let siteUrl = '';
  const hits: { url: string; auth?: string }[] = [];

  beforeAll(async () => {
    site = createServer((req, res) => {
      hits.push({ url: req.url ?? '', auth: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('all systems go\n');
    });
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

  it('tests code without creating it: validation, discovered schemas, the run and its schema check; invalid code is not run', async () => {
    const ok = await app.call('POST', '/v2/tools/test', { code: 'def process(x: int, y: int = 2) -> int:\n    return x * y\n', test_input: { x: 21 } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      validation: { status: 'valid', errors: [] },
      input_schema: { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'integer', default: 2 } }, required: ['x'] },
      output_schema: { type: 'integer' },
      execution: { success: true, output: { result: 42 }, validation_results: { input_valid: true, output_valid: true, validation_errors: [] } },
    });
    const bad = await app.call('POST', '/v2/tools/test', { code: 'def process(options: dict):\n    return options\n', test_input: {} });
    expect(bad.status).toBe(200);
    expect(bad.body.validation.status).toBe('invalid');
    expect(bad.body.validation.errors[0]).toMatch(/TypedDict/);
    expect(bad.body.execution).toBeUndefined();
    const raised = await app.call('POST', '/v2/tools/test', { code: 'def process(x: int) -> int:\n    raise ValueError("Input must be positive")\n', test_input: { x: 1 } });
    expect(raised.body.execution).toMatchObject({ success: false, error: { message: 'ValueError: Input must be positive', traceback: expect.stringContaining('line 2, in process') } });
    expect((await app.call('POST', '/v2/tools/test', { code: 'x', test_input: {}, timeout_seconds: 301 })).status).toBe(400);
  });

  it('creates lambdas (schemas discovered, composed tools checked), lists and gets them, refuses duplicates and bad code', async () => {
    const double = await app.call('POST', '/v2/tools', { type: 'lambda', name: 'double', description: 'Doubles a value', code: 'def process(value: float) -> float:\n    return value * 2\n' });
    expect(double.status).toBe(201);
    expect(double.body).toMatchObject({ id: 'tol_double', type: 'lambda', name: 'double', language: 'python', enabled: true, input_schema: { properties: { value: { type: 'number' } }, required: ['value'] }, output_schema: { type: 'number' } });
    const score = await app.call('POST', '/v2/tools', {
      type: 'lambda',
      name: 'customer_score',
      title: 'Customer score',
      description: 'Scores a customer from orders and revenue',
      code: SCORE,
      tool_configurations: {
        status: { type: 'web_get', argument_override: { url: { $ref: 'agent.metadata.status_url' }, headers: { authorization: { $ref: 'agent.secrets.status_token' } } } },
        double: { type: 'lambda', tool_id: 'tol_double' },
      },
    });
    expect(score.status).toBe(201);
    expect(score.body.input_schema).toEqual({
      type: 'object',
      properties: {
        order_count: { type: 'integer', description: 'The number of orders placed by the customer.' },
        total_revenue: { type: 'number', description: 'Total revenue in USD from the customer.' },
        tier: { enum: ['basic', 'gold'], type: 'string', default: 'basic' },
      },
      required: ['order_count', 'total_revenue'],
    });
    expect((await app.call('POST', '/v2/tools', { type: 'lambda', name: 'double', description: 'again', code: 'def process():\n    return 1\n' })).status).toBe(409);
    const invalid = await app.call('POST', '/v2/tools', { type: 'lambda', name: 'broken', description: 'broken', code: 'def process(:\n' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.messages[0]).toMatch(/^Invalid code: Line 1: /);
    const badComposed = await app.call('POST', '/v2/tools', { type: 'lambda', name: 'nested', description: 'n', code: 'def process():\n    return 1\n', tool_configurations: { 'bad-name': { type: 'web_get' }, other: { type: 'lambda', tool_id: 'tol_nope' } } });
    expect(badComposed.status).toBe(400);
    expect(badComposed.body.field_errors ?? badComposed.body).toBeTruthy();
    expect(JSON.stringify(badComposed.body)).toMatch(/tool_configurations\.bad-name/);
    expect((await app.call('GET', '/v2/tools/tol_broken')).status).toBe(404);
    for (const missing of ['code', 'description', 'name']) {
      const body: Record<string, unknown> = { type: 'lambda', name: 'incomplete', description: 'd', code: 'def process():\n    return 1\n' };
      delete body[missing];
      const res = await app.call('POST', '/v2/tools', body);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.field_errors)).toContain(missing);
    }
    expect((await app.call('POST', '/v2/tools', { type: 'client', name: 'no_description' })).status).toBe(400);
    const listed = await app.call('GET', '/v2/tools?type=lambda');
    expect(listed.body.tools.map((t: any) => t.id).sort()).toEqual(['tol_customer_score', 'tol_double']);
    expect((await app.call('GET', '/v2/tools/tol_customer_score')).body).toMatchObject({ title: 'Customer score', function_definition: { language: 'python', code: SCORE }, tool_configurations: { double: { type: 'lambda', tool_id: 'tol_double' } } });
  });

  it('runs a lambda in an agent turn: composed tools with $refs to the agent, no session events of their own', async () => {
    const created = await app.call('POST', '/v2/agents', { key: 'scorer', name: 'scorer', model: { name: 'm' }, metadata: { status_url: `${siteUrl}/status` }, tool_configurations: { score: { type: 'lambda', tool_id: 'tol_customer_score' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(created.status).toBe(201);
    expect((await app.call('PUT', '/v2/agents/scorer/secrets', { secrets: { status_token: 'Bearer tok-SECRET-991' } })).status).toBe(200);
    await app.call('POST', '/v2/agents/scorer/sessions', { key: 's' });
    upstream.enqueue({ toolCalls: [{ id: 'c1', name: 'score', arguments: JSON.stringify({ order_count: 3, total_revenue: 500, tier: 'gold' }) }] }, { content: 'Score 80.' });
    const res = await app.call('POST', '/v2/agents/scorer/sessions/s/events', { messages: [{ type: 'text', content: 'score me' }] });
    expect(res.status).toBe(201);
    expect(res.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'tool_input', 'tool_output', 'agent_output']);
    expect(res.body.events[2]).toMatchObject({ error: false, tool_output: { score: 80, doubled: 160, status: 'all systems go', tier: 'gold' } });
    expect(hits.at(-1)).toEqual({ url: '/status', auth: 'Bearer tok-SECRET-991' });
    // The model was offered the lambda with its discovered schema.
    const offered = (upstream.chatRequests().at(-2)!.body as any).tools.find((t: any) => t.function.name === 'score');
    expect(offered.function).toMatchObject({ description: 'Scores a customer from orders and revenue', parameters: { required: ['order_count', 'total_revenue'] } });
    const log = JSON.stringify((await app.call('GET', '/v2/events?category=session&limit=1000')).body);
    expect(log).not.toContain('tok-SECRET-991');
  });

  it('gives a lambda in a session the session artifacts through artifacts.download', async () => {
    await app.call('POST', '/v2/tools', { type: 'lambda', name: 'word_count', description: 'Counts the words of an artifact', code: 'def process(artifact_id: str) -> dict:\n    path = artifacts.download(artifact_id)\n    return {"path": path, "words": len(open(path).read().split())}\n' });
    await app.call('POST', '/v2/agents', { key: 'counter', name: 'counter', model: { name: 'm' }, tool_configurations: { count: { type: 'lambda', tool_id: 'tol_word_count' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/agents/counter/sessions', { key: 's' });
    const form = new FormData();
    form.append('files', new Blob([Buffer.from('one two three four')], { type: 'text/plain' }), 'notes.txt');
    const up = (await (await fetch(`${app.url}/v2/agents/counter/sessions/s/events`, { method: 'POST', headers: { 'x-api-key': app.key }, body: form })).json()) as any;
    const artifactId = up.events[0].artifacts[0].artifact_id;
    upstream.enqueue({ toolCalls: [{ id: 'c1', name: 'count', arguments: JSON.stringify({ artifact_id: artifactId }) }, { id: 'c2', name: 'count', arguments: JSON.stringify({ artifact_id: 'art_nope' }) }] }, { content: 'Four words.' });
    const res = await app.call('POST', '/v2/agents/counter/sessions/s/events', { messages: [{ type: 'text', content: 'count' }] });
    const outs = res.body.events.filter((e: Ev) => e.type === 'tool_output').sort((a: Ev, b: Ev) => a.tool_call_id.localeCompare(b.tool_call_id));
    expect(outs[0]).toMatchObject({ error: false, tool_output: { path: '/scratch/notes.txt', words: 4 } });
    expect(outs[1]).toMatchObject({ error: true, tool_output: { error: expect.stringContaining('ArtifactError: no artifact "art_nope" in this session') } });
  });

  it('stops a hostile lambda (endless loop, /etc/passwd) as a tool error, and the service keeps answering', async () => {
    await app.call('POST', '/v2/tools', { type: 'lambda', name: 'spin', description: 'Never ends', code: 'def process() -> int:\n    while True:\n        pass\n' });
    await app.call('POST', '/v2/tools', { type: 'lambda', name: 'peek', description: 'Reads a host file', code: 'def process() -> str:\n    return open("/etc/passwd").read()\n' });
    await app.call('POST', '/v2/agents', { key: 'hostile', name: 'hostile', model: { name: 'm' }, tool_configurations: { spin: { type: 'lambda', tool_id: 'tol_spin', max_execution_time_seconds: 2 }, peek: { type: 'lambda', tool_id: 'tol_peek' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/agents/hostile/sessions', { key: 's' });
    upstream.enqueue({ toolCalls: [{ id: 'c1', name: 'spin', arguments: '{}' }, { id: 'c2', name: 'peek', arguments: '{}' }] }, { content: 'Both failed.' });
    const pending = app.call('POST', '/v2/agents/hostile/sessions/s/events', { messages: [{ type: 'text', content: 'go' }] });
    // While the loop spins in its sandbox, the service answers.
    const t0 = Date.now();
    expect((await app.call('GET', '/v2/tools/tol_spin')).status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(1500);
    const res = await pending;
    const outs = res.body.events.filter((e: Ev) => e.type === 'tool_output').sort((a: Ev, b: Ev) => a.tool_call_id.localeCompare(b.tool_call_id));
    expect(outs[0]).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/stopped after 2 s|did not finish|2 s/) } });
    expect(outs[1]).toMatchObject({ error: true, tool_output: { error: expect.stringContaining('FileNotFoundError') } });
  });

  it('tests a stored lambda with a stand-in context, updates its code (schemas discovered again), and refuses deleting a tool in use', async () => {
    const tested = await app.call('POST', '/v2/tools/tol_customer_score/test', { input: { order_count: 1, total_revenue: 100 }, test_context: { agent: { metadata: { status_url: `${siteUrl}/test-status` }, secrets: { status_token: 'Bearer test-token' } } } });
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ type: 'success', output: { score: 20, doubled: 40, status: 'all systems go', tier: 'basic' }, validation_results: { input_valid: true, output_valid: true } });
    expect(hits.at(-1)).toEqual({ url: '/test-status', auth: 'Bearer test-token' });
    const failing = await app.call('POST', '/v2/tools/tol_customer_score/test', { input: { order_count: 1, total_revenue: 100 } });
    expect(failing.body).toMatchObject({ type: 'error', error: { message: expect.stringMatching(/ToolError: .*agent\.metadata\.status_url/) } });
    expect((await app.call('POST', '/v2/tools/tol_nope/test', { input: {} })).status).toBe(404);

    const updated = await app.call('PATCH', '/v2/tools/tol_double', { type: 'lambda', code: 'def process(value: float, times: int = 2) -> float:\n    return value * times\n', enabled: true });
    expect(updated.status).toBe(200);
    expect(updated.body.input_schema.properties).toEqual({ value: { type: 'number' }, times: { type: 'integer', default: 2 } });
    expect((await app.call('PATCH', '/v2/tools/tol_double', { type: 'lambda', code: 'def nope():\n    pass\n' })).status).toBe(400);
    expect((await app.call('GET', '/v2/tools/tol_double')).body.input_schema.properties.times).toBeDefined();

    const inUse = await app.call('DELETE', '/v2/tools/tol_double');
    expect(inUse.status).toBe(409);
    expect(inUse.body.messages[0]).toMatch(/called by the lambda tol_customer_score/);
    expect((await app.call('DELETE', '/v2/tools/tol_customer_score')).status).toBe(409);
    expect((await app.call('DELETE', '/v2/agents/scorer')).status).toBe(204);
    expect((await app.call('DELETE', '/v2/tools/tol_customer_score')).status).toBe(204);
    expect((await app.call('DELETE', '/v2/tools/tol_double')).status).toBe(204);
    expect((await app.call('GET', '/v2/tools/tol_double')).status).toBe(404);
    expect((await app.call('POST', '/v2/agents', { key: 'late', name: 'late', model: { name: 'm' }, tool_configurations: { d: { type: 'lambda', tool_id: 'tol_double' } }, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(400);
  });
  it('registers client tools: the model sees their schema, outputs are checked against output_schema, in use they cannot be deleted', async () => {
    const created = await app.call('POST', '/v2/tools', {
      type: 'client',
      name: 'collect_signature',
      title: 'Collect signature',
      description: 'Asks the user to e-sign a document; returns the signed document URL.',
      input_schema: { type: 'object', properties: { document_url: { type: 'string' } }, required: ['document_url'] },
      output_schema: { type: 'object', properties: { signed_document_url: { type: 'string' } }, required: ['signed_document_url'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: 'tol_collect_signature', type: 'client', enabled: true, output_schema: { required: ['signed_document_url'] } });
    expect((await app.call('POST', '/v2/tools', { type: 'client', name: 'broken_schema', description: 'x', input_schema: { type: 'nonsense' } })).status).toBe(400);
    expect((await app.call('GET', '/v2/tools?type=client')).body.tools.map((t: any) => t.id)).toEqual(['tol_collect_signature']);
    expect((await app.call('POST', '/v2/tools/tol_collect_signature/test', { input: {} })).status).toBe(404);

    await app.call('POST', '/v2/agents', { key: 'signer', name: 'signer', model: { name: 'm' }, tool_configurations: { sign: { type: 'client', tool_id: 'tol_collect_signature' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/agents/signer/sessions', { key: 's' });
    upstream.enqueue({ toolCalls: [{ id: 'c1', name: 'sign', arguments: JSON.stringify({ document_url: 'https://docs.example.com/nda.pdf' }) }] });
    const asked = await app.call('POST', '/v2/agents/signer/sessions/s/events', { messages: [{ type: 'text', content: 'sign my NDA' }] });
    const offered = (upstream.chatRequests().at(-1)!.body as any).tools.find((t: any) => t.function.name === 'sign');
    expect(offered.function).toEqual({ name: 'sign', description: 'Asks the user to e-sign a document; returns the signed document URL.', parameters: { type: 'object', properties: { document_url: { type: 'string' } }, required: ['document_url'] } });
    const toolInput = asked.body.events.find((e: Ev) => e.type === 'tool_input');
    const wrong = await app.call('POST', '/v2/agents/signer/sessions/s/events', { type: 'tool_output', tool_outputs: [{ type: 'success', event_id: toolInput.id, output: { url: 'x' } }] });
    expect(wrong.status).toBe(400);
    expect(wrong.body.messages[0]).toMatch(/does not match the output_schema of tol_collect_signature: .*signed_document_url/);
    expect((await app.call('GET', '/v2/agents/signer/sessions/s/outstanding_client_tool_calls')).body.client_tool_calls).toHaveLength(1);
    upstream.enqueue({ content: 'Signed.' });
    const done = await app.call('POST', '/v2/agents/signer/sessions/s/events', { type: 'tool_output', tool_outputs: [{ type: 'success', event_id: toolInput.id, output: { signed_document_url: 'https://docs.example.com/nda-signed.pdf' } }] });
    expect(done.status).toBe(201);
    expect(done.body.events.map((e: Ev) => e.type)).toEqual(['tool_output', 'agent_output']);

    expect((await app.call('DELETE', '/v2/tools/tol_collect_signature')).status).toBe(409);
    const cleared = await app.call('PATCH', '/v2/tools/tol_collect_signature', { type: 'client', output_schema: {} });
    expect(cleared.status).toBe(200);
    expect(cleared.body.output_schema).toBeUndefined();
    expect((await app.call('PATCH', '/v2/tools/tol_collect_signature', { type: 'lambda', enabled: false })).status).toBe(400);
  });
});
