import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeServiceAccountKey, ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { MCP_TOKEN, startMcpServer } from './support/mcp-fixtures';
import { describeWithReference, Mismatch, ReferenceOpenApi } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 44's walker over the agent half: every operation of the reference outside the retrieval half (agents,
 * sessions and their events, tools, tool servers, instructions, schedules, identity, secrets, connectors, aliases,
 * pipelines, analytics, glossaries), called over HTTP as a client of the reference would. Each request that succeeds
 * is itself checked against the reference's request schema (so the walk sends what a reference client can send);
 * each JSON answer (successes and the errors a client meets) against the schema for that operation and status;
 * streamed answers event by event. One `it` per area; the last `it` checks that, with the retrieval walk
 * (reference-conformance.e2e.spec.ts), all 177 operations are walked but the ones listed as pending.
 */

const RETRIEVAL_TAGS = ['Corpora', 'Upload', 'Index', 'Documents', 'Metadata Query', 'Queries', 'Query History', 'Chats', 'Large Language Models', 'LLM Chat Completions', 'Generation Presets', 'Factual Consistency Evaluation', 'Encoders', 'Rerankers', 'Table Extractors', 'Hallucination Correctors', 'Jobs', 'Users', 'API Keys', 'Application Clients', 'Authentication'];

/** Operations another change is adding: not walked here yet, each with its reason (the lead removes them on merging). */
const PENDING: Record<string, string> = {};

/**
 * Mismatches the walk knows of beyond the statuses test/support/reference-deviations.ts lets the checker accept, each with its reason: a deviation written in docs/conformance.md, or "pending: …"
 * for a defect left to the change that owns it. A mismatch matches an entry by operation, status and a piece of
 * the checker's message; an entry nothing matched fails the last test (so a fixed one is removed).
 */
interface Allowed {
  readonly operationId: string;
  readonly status: number;
  readonly error: string;
  readonly reason: string;
}
const ALLOWED: Allowed[] = [
  ...['/tool_configurations/scratch/type must be equal to one of the allowed values', '/tool_configurations/scratch must be null', '/tool_configurations/scratch must match a schema in anyOf'].map((error) => ({
    operationId: 'createAgent',
    status: 201,
    error,
    reason: 'docs/conformance.md: a dynamic_vectara tool naming a built-in (tol_builtin_<name>) is stored and shown as that built-in ({"type": "scratch_pad"}), a type the reference\'s configuration union does not list',
  })),
  { operationId: 'getMetric', status: 400, error: 'the reference gives no JSON body for 400', reason: 'docs/conformance.md (Metrics): the 400 the reference lists without a body carries the usual error body with field_errors' },
  { operationId: 'getMetric', status: 404, error: 'the reference gives no JSON body for 404', reason: 'docs/conformance.md (Metrics): the 404 the reference lists without a body carries the usual error body' },
  { operationId: 'createAgent', status: 400, error: 'tool type document_conversion is not available', reason: 'docs/conformance.md: a tool type the service does not run is refused at agent creation, naming the types that run (docs/tools.md)' },
];

describeWithReference('the agent half answers with the reference API shapes (walker over every operation)', () => {
  const reference = new ReferenceOpenApi();
  const walked = new Map<string, Set<number>>();
  const used = new Set<Allowed>();
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let mcp: Awaited<ReturnType<typeof startMcpServer>>;
  /**
   * The weakest credentials that reach these routes meet the reference's 403: a user without any role, and a viewer
   * of `walker` (on an agent's own routes a caller without any role on it gets 404, as for an agent that does not
   * exist: docs/security.md).
   */
  let nobody: Record<string, string>;
  let viewer: Record<string, string>;
  /** A site whose answers wait until released: a pipeline run reading it stays running while the walk calls on it. */
  let site: Server;
  let siteUrl = '';
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));

  const found: Mismatch[] = [];
  let lastOperation = '';
  const note = (operationId: string, status: number) => {
    lastOperation = operationId;
    (walked.get(operationId) ?? walked.set(operationId, new Set()).get(operationId)!).add(status);
  };
  const record = <T extends { status: number; body: any }>(operationId: string, res: T, request?: unknown): T => {
    note(operationId, res.status);
    const errors = reference.check(operationId, res.status, res.body);
    // A request the service took must be one the reference describes (refusals are sent on purpose).
    if (res.status < 300 && request !== undefined) errors.push(...reference.requestErrors(operationId, request).map((e) => `request ${e}`));
    if (errors.length) found.push({ operationId, status: res.status, errors });
    return res;
  };
  /** Calls an operation with a JSON body (or none); the answer, its mismatches recorded. */
  const op = async (operationId: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => record(operationId, await app.call(method, path, body, headers), body);
  /** A status other than the one a reference client expects is recorded (not thrown) so one run shows them all. */
  const expectStatus = (res: { status: number; body: unknown }, status: number) => {
    if (res.status !== status) found.push({ operationId: lastOperation, status: res.status, errors: [`expected ${status}: ${JSON.stringify(res.body ?? null).slice(0, 300)}`] });
  };
  /** The mismatches recorded since the last call, less the allowed ones (each `it` asserts its own). */
  const mismatches = () =>
    found
      .splice(0)
      .map((m) => {
        const errors = m.errors.filter((e) => {
          const entry = ALLOWED.find((a) => a.operationId === m.operationId && a.status === m.status && e.includes(a.error));
          if (entry) used.add(entry);
          return !entry;
        });
        return { ...m, errors };
      })
      .filter((m) => m.errors.length);

  /** Calls a streaming operation and checks each event against the reference's event-stream schema. */
  const stream = async (operationId: string, path: string, body: unknown) => {
    const res = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) });
    const text = await res.text();
    note(operationId, res.status);
    const errors = res.headers.get('content-type')?.startsWith('text/event-stream') ? reference.checkStream(operationId, res.status, text) : [`not an event stream: ${res.status} ${text.slice(0, 200)}`];
    errors.push(...reference.requestErrors(operationId, body).map((e) => `request ${e}`));
    if (errors.length) found.push({ operationId, status: res.status, errors });
    return { status: res.status, body: text };
  };
  /** A multipart input with files (the reference's MultipartInputEvent): artifacts come from it. */
  const upload = async (operationId: string, path: string, files: [string, string, string][], fields: Record<string, string>) => {
    const form = new FormData();
    for (const [name, text, type] of files) form.append('files', new Blob([text], { type }), name);
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const res = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'x-api-key': app.key }, body: form });
    return record(operationId, { status: res.status, body: (await res.json()) as any });
  };
  const text = (content: string) => ({ type: 'input_message', messages: [{ type: 'text', content }] });
  const eventsOf = (res: { body: any }) => (res.body?.events ?? []) as { id: string; type: string; [k: string]: any }[];

  // Agents of the walk: `walker` answers from the scripted model and has a client tool (the reference's client tool
  // configuration names a client tool created first); `routed` is an alias's target.
  let clientToolId = '';
  const agent = (key: string, extra: Record<string, unknown> = {}) => ({
    key,
    name: `Agent ${key}`,
    description: 'walks the reference',
    model: { name: 'walker-llm', parameters: { temperature: 0.1 } },
    tool_configurations: { lookup: { type: 'client', tool_id: clientToolId } },
    first_step_name: 'main',
    steps: { main: { instructions: [{ type: 'inline', name: 'Brevity', template: 'Be brief.' }], output_parser: { type: 'default' } } },
    metadata: { team: 'walk' },
    ...extra,
  });

  beforeAll(async () => {
    mcp = await startMcpServer();
    site = createServer((_req, res) => void held.then(() => res.writeHead(404).end()));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { LOG_LEVEL: 'warn', WORKER_POLL_MS: '100' } });
    await registerScripted(app, upstream, 'walker-llm');
    nobody = asKey(await createUser(app, 'walk-nobody', {}));
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    mcp?.server.closeAllConnections();
    await new Promise((r) => mcp?.server.close(r));
    release();
    site?.closeAllConnections();
    await new Promise((r) => site?.close(r));
  });

  it('agents, identity and secrets', async () => {
    const client = await op('createTool', 'POST', '/v2/tools', { type: 'client', name: 'lookup_customer', description: 'Looks a customer up', input_schema: { type: 'object', properties: { email: { type: 'string' } } } });
    expectStatus(client, 201);
    clientToolId = client.body.id;
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('walker')), 201);
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('walker')), 400);
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('broken', { model: { name: 'nope' } })), 400);
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('routed')), 201);
    viewer = asKey(await createUser(app, 'walk-viewer', { agent_roles: [{ agent_key: 'walker', role: 'agent_viewer' }] }));
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('doomed')), 201);
    expectStatus(await op('listAgents', 'GET', '/v2/agents?limit=1'), 200);
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('unwanted'), nobody), 403);
    expectStatus(await op('updateAgentSecrets', 'PATCH', '/v2/agents/walker/secrets', { secrets: { stolen: 'x' } }, viewer), 403);
    expectStatus(await op('getAgent', 'GET', '/v2/agents/walker'), 200);
    expectStatus(await op('getAgent', 'GET', '/v2/agents/ghost'), 404);
    expectStatus(await op('updateAgent', 'PATCH', '/v2/agents/walker', { description: 'walked', metadata: { team: 'walkers' } }), 200);
    expectStatus(await op('updateAgent', 'PATCH', '/v2/agents/walker', { first_step_name: 'missing' }), 400);
    expectStatus(await op('updateAgent', 'PATCH', '/v2/agents/ghost', { description: 'x' }), 404);
    const { key: _key, ...replacement } = agent('doomed', { name: 'Doomed v2' });
    expectStatus(await op('replaceAgent', 'PUT', '/v2/agents/doomed', replacement), 200);
    expectStatus(await op('replaceAgent', 'PUT', '/v2/agents/ghost', replacement), 404);
    expectStatus(await op('deleteAgent', 'DELETE', '/v2/agents/doomed'), 204);
    expectStatus(await op('deleteAgent', 'DELETE', '/v2/agents/doomed'), 404);

    // Steps of every kind the reference has, from its examples: reminders (templated, glossary expansion), a next
    // step on a condition, a structured output parser.
    const glossary = reference.exampleOf('GlossaryExpansionReminder');
    expectStatus(await op('createGlossary', 'POST', '/v2/glossaries', { key: glossary.glossary_key, name: 'Engineering acronyms' }), 201);
    const steps = {
      main: {
        instructions: [{ type: 'inline', name: 'Triage', template: 'Triage the request.' }],
        output_parser: { type: 'default' },
        reminders: [reference.exampleOf('TemplatedReminder'), glossary],
        next_steps: [{ condition: "get('$.output.text') == 'answer'", step_name: 'answer' }],
      },
      answer: { instructions: [{ type: 'inline', name: 'Answer', template_type: 'text', template: 'Answer as JSON.' }], output_parser: { type: 'structured', json_schema: { name: 'answer', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } } } },
    };
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('stepper', { steps })), 201);
    expectStatus(await op('getAgent', 'GET', '/v2/agents/stepper'), 200);
    expectStatus(await op('deleteAgent', 'DELETE', '/v2/agents/stepper'), 204);

    expectStatus(await op('getAgentIdentity', 'GET', '/v2/agents/walker/identity'), 200);
    expectStatus(await op('getAgentIdentity', 'GET', '/v2/agents/ghost/identity'), 404);
    expectStatus(await op('updateAgentIdentity', 'PATCH', '/v2/agents/walker/identity', { mode: 'manual', agent_roles: [{ agent_key: 'routed', role: 'agent_user' }] }), 200);
    expectStatus(await op('updateAgentIdentity', 'PATCH', '/v2/agents/walker/identity', { mode: 'auto' }), 200);
    expectStatus(await op('updateAgentIdentity', 'PATCH', '/v2/agents/walker/identity', { mode: 'sideways' }), 400);

    expectStatus(await op('replaceAgentSecrets', 'PUT', '/v2/agents/walker/secrets', { secrets: { slack_bot_token: 'xoxb-walker-SECRET' } }), 200);
    expectStatus(await op('updateAgentSecrets', 'PATCH', '/v2/agents/walker/secrets', { secrets: { crm_token: 'crm-walker-SECRET' } }), 200);
    expectStatus(await op('updateAgentSecrets', 'PATCH', '/v2/agents/walker/secrets', { secrets: 'all of them' }), 400);
    const secrets = await op('getAgentSecrets', 'GET', '/v2/agents/walker/secrets');
    expectStatus(secrets, 200);
    expect(JSON.stringify(secrets.body)).not.toContain('SECRET');
    expectStatus(await op('getAgentSecrets', 'GET', '/v2/agents/ghost/secrets'), 404);
    expect(mismatches()).toEqual([]);
  });

  it('sessions, inputs, events and artifacts', async () => {
    expectStatus(await op('createAgentSession', 'POST', '/v2/agents/walker/sessions', { key: 'walk', name: 'Walk', metadata: { tier: 'gold' } }), 201);
    expectStatus(await op('createAgentSession', 'POST', '/v2/agents/walker/sessions', { key: 'walk' }), 400);
    expectStatus(await op('createAgentSession', 'POST', '/v2/agents/ghost/sessions', { key: 'walk' }), 404);
    expectStatus(await op('createAgentSession', 'POST', '/v2/agents/walker/sessions', { key: 'doomed' }), 201);
    expectStatus(await op('listAgentSessions', 'GET', '/v2/agents/walker/sessions?limit=1'), 200);
    expectStatus(await op('createAgentSession', 'POST', '/v2/agents/walker/sessions', { key: 'intruder' }, viewer), 403);
    expectStatus(await op('listAgentSessions', 'GET', '/v2/agents/ghost/sessions'), 404);
    expectStatus(await op('getAgentSession', 'GET', '/v2/agents/walker/sessions/walk'), 200);
    expectStatus(await op('getAgentSession', 'GET', '/v2/agents/walker/sessions/ghost'), 404);
    expectStatus(await op('updateAgentSession', 'PATCH', '/v2/agents/walker/sessions/walk', { description: 'walked', metadata: { tier: 'silver' } }), 200);
    expectStatus(await op('updateAgentSession', 'PATCH', '/v2/agents/walker/sessions/walk', { key: 'bad key!' }), 400);
    expectStatus(await op('updateAgentSession', 'PATCH', '/v2/agents/walker/sessions/ghost', { description: 'x' }), 404);

    upstream.enqueue({ content: 'Hello, walker.' });
    const said = await op('createAgentInput', 'POST', '/v2/agents/walker/sessions/walk/events', text('hi'));
    expectStatus(said, 201);
    upstream.enqueue({ content: 'Streaming hello.' });
    expectStatus(await stream('createAgentInput', '/v2/agents/walker/sessions/walk/events', { ...text('stream it'), stream_response: true }), 201);
    expectStatus(await op('createAgentInput', 'POST', '/v2/agents/walker/sessions/walk/events', { type: 'input_message', messages: 'hi' }), 400);
    expectStatus(await op('createAgentInput', 'POST', '/v2/agents/walker/sessions/ghost/events', text('hi')), 404);
    // The model asks for the client tool: the call waits for the client, listed as outstanding, then is answered.
    upstream.enqueue({ toolCalls: [{ id: 'call_walk', name: 'lookup', arguments: '{"email":"ada@example.com"}' }] });
    // (Streamed: the tool call's events are checked against the reference's stream schema too.)
    expectStatus(await stream('createAgentInput', '/v2/agents/walker/sessions/walk/events', { ...text('who am I?'), stream_response: true }), 201);
    const outstanding = await op('listOutstandingClientToolCalls', 'GET', '/v2/agents/walker/sessions/walk/outstanding_client_tool_calls');
    expectStatus(outstanding, 200);
    expectStatus(await op('listOutstandingClientToolCalls', 'GET', '/v2/agents/walker/sessions/ghost/outstanding_client_tool_calls'), 404);
    upstream.enqueue({ content: 'You are Ada.' });
    const answered = { type: 'tool_output', tool_outputs: [{ type: 'success', event_id: outstanding.body.client_tool_calls?.[0]?.event_id, output: { name: 'Ada' } }] };
    expectStatus(await op('createAgentInput', 'POST', '/v2/agents/walker/sessions/walk/events', answered), 201);

    // An interrupt with no turn running is a conflict; a compaction of an idle session is taken; a model that fails
    // ends the turn with its error in the 201 (the reference's 502 is for a session's pod it cannot reach).
    expectStatus(await op('createAgentInput', 'POST', '/v2/agents/walker/sessions/walk/events', { type: 'interrupt' }), 409);
    upstream.enqueue({ content: 'Summary of the walk so far.' });
    expectStatus(await op('createAgentInput', 'POST', '/v2/agents/walker/sessions/walk/events', { type: 'compact', compaction_message: 'Keep names.' }), 201);
    upstream.enqueue({ error: { status: 500, message: 'the model is down' } });
    expectStatus(await op('createAgentInput', 'POST', '/v2/agents/walker/sessions/walk/events', text('are you there?')), 201);
    upstream.enqueue({ content: 'I see your notes.' });
    expectStatus(await upload('createAgentInput', '/v2/agents/walker/sessions/walk/events', [['notes.txt', 'walker notes', 'text/plain']], { metadata: JSON.stringify({ kind: 'note' }), messages: JSON.stringify([{ type: 'text', content: 'Read my notes.' }]) }), 201);
    const artifacts = await op('listSessionArtifacts', 'GET', '/v2/agents/walker/sessions/walk/artifacts?limit=10');
    expectStatus(artifacts, 200);
    expectStatus(await op('listSessionArtifacts', 'GET', '/v2/agents/walker/sessions/ghost/artifacts'), 404);
    expectStatus(await op('getSessionArtifact', 'GET', `/v2/agents/walker/sessions/walk/artifacts/${artifacts.body.artifacts?.[0]?.artifact_id}`), 200);
    expectStatus(await op('getSessionArtifact', 'GET', '/v2/agents/walker/sessions/walk/artifacts/art_nope'), 404);

    const events = await op('listAgentEvents', 'GET', '/v2/agents/walker/sessions/walk/events?limit=100');
    expectStatus(events, 200);
    expectStatus(await op('listAgentEvents', 'GET', '/v2/agents/walker/sessions/ghost/events'), 404);
    const first = eventsOf(said)[0]?.id;
    expectStatus(await op('getAgentEvent', 'GET', `/v2/agents/walker/sessions/walk/events/${first}`), 200);
    expectStatus(await op('getAgentEvent', 'GET', '/v2/agents/walker/sessions/walk/events/aev_nope'), 404);
    expectStatus(await op('hideAgentEvent', 'POST', `/v2/agents/walker/sessions/walk/events/${first}/hide`), 200);
    expectStatus(await op('hideAgentEvent', 'POST', '/v2/agents/walker/sessions/walk/events/aev_nope/hide'), 404);
    expectStatus(await op('unhideAgentEvent', 'POST', `/v2/agents/walker/sessions/walk/events/${first}/unhide`), 200);
    expectStatus(await op('unhideAgentEvent', 'POST', '/v2/agents/walker/sessions/walk/events/aev_nope/unhide'), 404);
    const last = eventsOf(said).at(-1)?.id;
    expectStatus(await op('deleteAgentEvent', 'DELETE', `/v2/agents/walker/sessions/walk/events/${last}`), 204);
    expectStatus(await op('deleteAgentEvent', 'DELETE', `/v2/agents/walker/sessions/walk/events/${last}`), 404);

    // A turn whose step parses the answer as structured JSON ends with the reference's structured output event.
    const structured = { instructions: [{ type: 'inline', name: 'Answer', template: 'Answer as JSON.' }], output_parser: { type: 'structured', json_schema: { name: 'answer', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } } } };
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('shaper', { steps: { main: structured } })), 201);
    expectStatus(await op('createAgentSession', 'POST', '/v2/agents/shaper/sessions', { key: 'shaped' }), 201);
    upstream.enqueue({ content: '{"answer": "yes"}' });
    const shaped = await op('createAgentInput', 'POST', '/v2/agents/shaper/sessions/shaped/events', text('Is it JSON?'));
    expectStatus(shaped, 201);
    expect(eventsOf(shaped).map((e) => e.type)).toContain('structured_output');
    upstream.enqueue({ content: '{"answer": "still"}' });
    expectStatus(await stream('createAgentInput', '/v2/agents/shaper/sessions/shaped/events', { ...text('And streamed?'), stream_response: true }), 201);

    expectStatus(await op('deleteAgentSession', 'DELETE', '/v2/agents/walker/sessions/doomed'), 204);
    expectStatus(await op('deleteAgentSession', 'DELETE', '/v2/agents/walker/sessions/doomed'), 404);
    expect(mismatches()).toEqual([]);
  });

  it('tools and tool servers', async () => {
    const server = await op('createToolServer', 'POST', '/v2/tool_servers', { name: 'Orders', description: 'the order desk', type: 'mcp', uri: mcp.url, transport: 'streamable-http', auth: { type: 'bearer', token: MCP_TOKEN } });
    expectStatus(server, 201);
    expect(JSON.stringify(server.body)).not.toContain(MCP_TOKEN);
    expectStatus(await op('createToolServer', 'POST', '/v2/tool_servers', { name: 'Bad', type: 'mcp', uri: 'ftp://example.com' }), 400);
    expectStatus(await op('listToolServers', 'GET', '/v2/tool_servers'), 200);
    expectStatus(await op('createToolServer', 'POST', '/v2/tool_servers', { name: 'Mine', type: 'mcp', uri: mcp.url }, nobody), 403);
    expectStatus(await op('getToolServer', 'GET', `/v2/tool_servers/${server.body.id}`), 200);
    expectStatus(await op('getToolServer', 'GET', '/v2/tool_servers/tsr_nope'), 404);
    expectStatus(await op('updateToolServer', 'PATCH', `/v2/tool_servers/${server.body.id}`, { description: 'walked' }), 200);
    expectStatus(await op('updateToolServer', 'PATCH', `/v2/tool_servers/${server.body.id}`, { uri: 'ftp://example.com' }), 400);
    expectStatus(await op('updateToolServer', 'PATCH', '/v2/tool_servers/tsr_nope', { description: 'x' }), 404);
    expectStatus(await op('syncToolServer', 'POST', `/v2/tool_servers/${server.body.id}/sync`), 204);
    expectStatus(await op('syncToolServer', 'POST', '/v2/tool_servers/tsr_nope/sync'), 404);

    const tools = await op('listTools', 'GET', '/v2/tools?limit=100');
    expectStatus(tools, 200);
    const lookup = (tools.body.tools ?? []).find((t: { name: string; type: string }) => t.type === 'mcp' && t.name === 'lookup_order');
    expectStatus(await op('getTool', 'GET', `/v2/tools/${lookup?.id}`), 200);
    expectStatus(await op('getTool', 'GET', '/v2/tools/tol_builtin_web_get'), 200);
    expectStatus(await op('getTool', 'GET', '/v2/tools/tol_nope'), 404);
    expectStatus(await op('updateTool', 'PATCH', `/v2/tools/${lookup?.id}`, { type: 'mcp', enabled: false }), 200);
    expectStatus(await op('updateTool', 'PATCH', `/v2/tools/${lookup?.id}`, { type: 'lambda', enabled: false }), 400);
    expectStatus(await op('updateTool', 'PATCH', '/v2/tools/tol_nope', { type: 'mcp', enabled: true }), 404);

    const code = 'def process(value: float) -> dict:\n    """Doubles a value."""\n    return {"doubled": value * 2}\n';
    expectStatus(await op('testLambdaToolWithoutCreation', 'POST', '/v2/tools/test', { code, test_input: { value: 21 } }), 200);
    expectStatus(await op('testLambdaToolWithoutCreation', 'POST', '/v2/tools/test', { code, test_input: {}, timeout_seconds: 301 }), 400);
    // A lambda whose return is not an object (the reference discovers such output schemas too).
    expectStatus(await op('testLambdaToolWithoutCreation', 'POST', '/v2/tools/test', { code: 'def process(x: int) -> int:\n    return x * 2\n', test_input: { x: 21 } }), 200);
    const lambda = await op('createTool', 'POST', '/v2/tools', { type: 'lambda', name: 'double', title: 'Double', description: 'Doubles a value', code });
    expectStatus(lambda, 201);
    expectStatus(await op('createTool', 'POST', '/v2/tools', { type: 'lambda', name: 'double', description: 'Doubles a value', code }), 409);
    expectStatus(await op('createTool', 'POST', '/v2/tools', { type: 'lambda', name: 'broken', description: 'Not Python', code: 'def process(' }), 400);
    expectStatus(await op('testTool', 'POST', `/v2/tools/${lambda.body.id}/test`, { input: { value: 4 } }), 200);
    expectStatus(await op('testTool', 'POST', '/v2/tools/tol_nope/test', { input: { value: 4 } }), 404);
    expectStatus(await op('testTool', 'POST', `/v2/tools/${lambda.body.id}/test`, { input: 'four' }), 400);
    expectStatus(await op('updateTool', 'PATCH', `/v2/tools/${lambda.body.id}`, { type: 'lambda', description: 'Doubles any number' }), 200);

    // An agent with a tool configuration of each of the reference's types: each is read back in its own shape.
    await app.call('POST', '/v2/corpora', { key: 'kb', name: 'Knowledge base' });
    const shared = await app.call('POST', '/v2/tool_configurations', { key: 'fetcher', name: 'Fetcher', description: 'Fetches a page', type: 'web_get' });
    expect(shared.status).toBe(201);
    const toolbox = {
      docs: { type: 'corpora_search', description_template: 'Searches the knowledge base', query_configuration: { search: { corpora: [{ corpus_key: 'kb' }], limit: 3 } } },
      search: { type: 'web_search' },
      fetch: { type: 'web_get' },
      fetcher: { type: 'reference', tool_configuration_key: 'fetcher' },
      double: { type: 'lambda', tool_id: lambda.body.id },
      orders: { type: 'mcp', tool_id: lookup?.id },
      ask: { type: 'client', tool_id: clientToolId },
      delegate: { type: 'sub_agent', sub_agent_configuration: { agent_key: 'routed' } },
      read: { type: 'artifact_read', artifact_read_configuration: { max_lines: 50 } },
      grep: { type: 'artifact_grep' },
      look: { type: 'image_read' },
      text: { type: 'get_document_text' },
    };
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('toolbox', { tool_configurations: toolbox })), 201);
    expectStatus(await op('getAgent', 'GET', '/v2/agents/toolbox'), 200);
    expectStatus(await op('deleteAgent', 'DELETE', '/v2/agents/toolbox'), 204);
    // A built-in tool the list shows as dynamic_vectara, configured by its tool_id (stored and run as that built-in),
    // and one of the reference's types the service does not run (refused naming the types that do).
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('scratcher', { tool_configurations: { scratch: { type: 'dynamic_vectara', tool_id: 'tol_builtin_scratch_pad' } } })), 201);
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('converter', { tool_configurations: { convert: { type: 'document_conversion' } } })), 201);
    expectStatus(await op('deleteTool', 'DELETE', `/v2/tools/${lambda.body.id}`), 204);
    expectStatus(await op('deleteTool', 'DELETE', `/v2/tools/${lambda.body.id}`), 404);

    // A server that cannot be synced (no token) and one whose tool an agent uses.
    const tokenless = await op('createToolServer', 'POST', '/v2/tool_servers', { name: 'Tokenless', type: 'mcp', uri: mcp.url, transport: 'streamable-http' });
    expectStatus(tokenless, 201);
    expectStatus(await op('syncToolServer', 'POST', `/v2/tool_servers/${tokenless.body.id}/sync`), 502);
    expectStatus(await op('deleteToolServer', 'DELETE', `/v2/tool_servers/${tokenless.body.id}`), 204);
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('orders', { tool_configurations: { orders: { type: 'mcp', tool_id: lookup?.id } } })), 201);
    expectStatus(await op('deleteToolServer', 'DELETE', `/v2/tool_servers/${server.body.id}`), 409);
    expectStatus(await op('deleteTool', 'DELETE', `/v2/tools/${clientToolId}`), 409);
    expectStatus(await op('deleteAgent', 'DELETE', '/v2/agents/orders'), 204);
    expectStatus(await op('deleteToolServer', 'DELETE', `/v2/tool_servers/${server.body.id}`), 204);
    expectStatus(await op('deleteToolServer', 'DELETE', `/v2/tool_servers/${server.body.id}`), 404);
    expect(mismatches()).toEqual([]);
  }, 120_000);

  it('instructions', async () => {
    const created = await op('createInstruction', 'POST', '/v2/instructions', { type: 'initial', name: 'Tone', description: 'how to speak', template: 'Speak to ${session.metadata.tier} customers.' });
    expectStatus(created, 201);
    expectStatus(await op('createInstruction', 'POST', '/v2/instructions', { type: 'initial', name: 'Broken', template: 'Hello #if( unclosed' }), 400);
    const id = created.body.id;
    expectStatus(await op('listInstructions', 'GET', '/v2/instructions?limit=1'), 200);
    expectStatus(await op('createInstruction', 'POST', '/v2/instructions', { type: 'initial', name: 'Mine', template: 'x' }, nobody), 403);
    expectStatus(await op('getInstruction', 'GET', `/v2/instructions/${id}`), 200);
    expectStatus(await op('getInstruction', 'GET', '/v2/instructions/ins_nope'), 404);
    expectStatus(await op('updateInstruction', 'PATCH', `/v2/instructions/${id}`, { type: 'initial', template: 'Speak kindly to ${session.metadata.tier} customers.' }), 200);
    expectStatus(await op('updateInstruction', 'PATCH', `/v2/instructions/${id}`, { type: 'initial', template: '#foreach(' }), 400);
    expectStatus(await op('updateInstruction', 'PATCH', '/v2/instructions/ins_nope', { type: 'initial', template: 'x' }), 404);
    expectStatus(await op('testInstruction', 'POST', `/v2/instructions/${id}/test`, { context: { tier: 'gold' } }), 200);
    expectStatus(await op('testInstruction', 'POST', '/v2/instructions/ins_nope/test', {}), 404);
    expectStatus(await op('testInstruction', 'POST', `/v2/instructions/${id}/test`, { context: 'gold' }), 400);
    expectStatus(await op('createAgent', 'POST', '/v2/agents', agent('toned', { steps: { main: { instructions: [{ type: 'reference', id, version: 2 }], output_parser: { type: 'default' } } } })), 201);
    expectStatus(await op('deleteInstruction', 'DELETE', `/v2/instructions/${id}`), 409);
    expectStatus(await op('deleteAgent', 'DELETE', '/v2/agents/toned'), 204);
    expectStatus(await op('deleteInstructionVersion', 'DELETE', `/v2/instructions/${id}/versions/1`), 204);
    expectStatus(await op('deleteInstructionVersion', 'DELETE', `/v2/instructions/${id}/versions/1`), 404);
    expectStatus(await op('deleteInstructionVersion', 'DELETE', `/v2/instructions/${id}/versions/2`), 409);
    expectStatus(await op('deleteInstruction', 'DELETE', `/v2/instructions/${id}`), 204);
    expectStatus(await op('deleteInstruction', 'DELETE', `/v2/instructions/${id}`), 404);
    expect(mismatches()).toEqual([]);
  });

  it('schedules', async () => {
    const schedule = { key: 'pulse', name: 'Pulse', description: 'a daily report', message: [{ type: 'text', content: 'Report.' }], schedule: { type: 'interval', interval: 'PT24H' }, session_metadata: { report: 'daily' } };
    expectStatus(await op('createAgentSchedule', 'POST', '/v2/agents/walker/schedules', schedule), 201);
    expectStatus(await op('createAgentSchedule', 'POST', '/v2/agents/walker/schedules', schedule), 409);
    expectStatus(await op('createAgentSchedule', 'POST', '/v2/agents/walker/schedules', { ...schedule, key: 'bad', schedule: { type: 'interval', interval: 'soon' } }), 400);
    expectStatus(await op('createAgentSchedule', 'POST', '/v2/agents/ghost/schedules', schedule), 404);
    expectStatus(await op('listAgentSchedules', 'GET', '/v2/agents/walker/schedules'), 200);
    expectStatus(await op('createAgentSchedule', 'POST', '/v2/agents/walker/schedules', { ...schedule, key: 'mine' }, viewer), 403);
    expectStatus(await op('listAgentSchedules', 'GET', '/v2/agents/ghost/schedules'), 404);
    expectStatus(await op('getAgentSchedule', 'GET', '/v2/agents/walker/schedules/pulse'), 200);
    expectStatus(await op('getAgentSchedule', 'GET', '/v2/agents/walker/schedules/ghost'), 404);
    expectStatus(await op('updateAgentSchedule', 'PATCH', '/v2/agents/walker/schedules/pulse', { enabled: false }), 200);
    expectStatus(await op('updateAgentSchedule', 'PATCH', '/v2/agents/walker/schedules/pulse', { schedule: { type: 'interval', interval: 'soon' } }), 400);
    expectStatus(await op('updateAgentSchedule', 'PATCH', '/v2/agents/walker/schedules/ghost', { enabled: false }), 404);
    expectStatus(await op('listAgentScheduleExecutions', 'GET', '/v2/agents/walker/schedules/pulse/executions'), 200);
    const cron = await op('createAgentSchedule', 'POST', '/v2/agents/walker/schedules', { ...schedule, key: 'cron', schedule: reference.exampleOf('CronScheduleConfiguration'), enabled: false });
    expectStatus(cron, 201);
    expectStatus(await op('deleteAgentSchedule', 'DELETE', '/v2/agents/walker/schedules/cron'), 204);
    expectStatus(await op('deleteAgentSchedule', 'DELETE', '/v2/agents/walker/schedules/pulse'), 204);
    expectStatus(await op('deleteAgentSchedule', 'DELETE', '/v2/agents/walker/schedules/pulse'), 404);
    expect(mismatches()).toEqual([]);
  });

  it('connectors', async () => {
    const slack = { name: 'Support', description: 'the support channel', configuration: { type: 'slack', bot_token: 'xoxb-walker-SECRET', signing_secret: 'slack-signing-SECRET-0123', api_app_id: 'A1' } };
    const created = await op('createAgentConnector', 'POST', '/v2/agents/walker/connectors', slack);
    expectStatus(created, 201);
    expect(JSON.stringify(created.body)).not.toContain('SECRET');
    expectStatus(await op('createAgentConnector', 'POST', '/v2/agents/walker/connectors', { name: 'Bad', configuration: { type: 'slack', bot_token: 'xoxb-walker', api_app_id: 'A1' } }), 400);
    expectStatus(await op('createAgentConnector', 'POST', '/v2/agents/ghost/connectors', slack), 404);
    expectStatus(await op('listAgentConnectors', 'GET', '/v2/agents/walker/connectors'), 200);
    expectStatus(await op('createAgentConnector', 'POST', '/v2/agents/walker/connectors', { ...slack, name: 'Mine' }, viewer), 403);
    expectStatus(await op('listAgentConnectors', 'GET', '/v2/agents/ghost/connectors'), 404);
    expectStatus(await op('getAgentConnector', 'GET', `/v2/agents/walker/connectors/${created.body.id}`), 200);
    expectStatus(await op('getAgentConnector', 'GET', '/v2/agents/walker/connectors/con_nope'), 404);
    expectStatus(await op('updateAgentConnector', 'PATCH', `/v2/agents/walker/connectors/${created.body.id}`, { enabled: false }), 200);
    expectStatus(await op('updateAgentConnector', 'PATCH', `/v2/agents/walker/connectors/${created.body.id}`, { configuration: { type: 'zoom', callback_url: 'ftp://x' } }), 400);
    expectStatus(await op('updateAgentConnector', 'PATCH', '/v2/agents/walker/connectors/con_nope', { enabled: false }), 404);
    const zoom = await op('createAgentConnector', 'POST', '/v2/agents/walker/connectors', { name: 'Zoom', configuration: reference.exampleOf('CreateZoomConnectorConfiguration') });
    expectStatus(zoom, 201);
    expectStatus(await op('deleteAgentConnector', 'DELETE', `/v2/agents/walker/connectors/${zoom.body.id}`), 204);
    expectStatus(await op('deleteAgentConnector', 'DELETE', `/v2/agents/walker/connectors/${created.body.id}`), 204);
    expectStatus(await op('deleteAgentConnector', 'DELETE', `/v2/agents/walker/connectors/${created.body.id}`), 404);
    expect(mismatches()).toEqual([]);
  });

  it('aliases and their routed sessions', async () => {
    const policy = { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'routed' } }] };
    expectStatus(await op('createAgentAlias', 'POST', '/v2/agent_aliases', { key: 'front', name: 'Front door', description: 'routes to routed', policy, metadata: { region: 'eu' } }), 201);
    expectStatus(await op('createAgentAlias', 'POST', '/v2/agent_aliases', { key: 'front', name: 'Again', policy }), 409);
    expectStatus(await op('createAgentAlias', 'POST', '/v2/agent_aliases', { key: 'bad', name: 'Bad', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'nobody' } }] } }), 400);
    expectStatus(await op('createAgentAlias', 'POST', '/v2/agent_aliases', { key: 'doomed', name: 'Doomed', policy }), 201);
    expectStatus(await op('listAgentAliases', 'GET', '/v2/agent_aliases?limit=1'), 200);
    expectStatus(await op('createAgentAlias', 'POST', '/v2/agent_aliases', { key: 'mine', name: 'Mine', policy }, nobody), 403);
    expectStatus(await op('getAgentAlias', 'GET', '/v2/agent_aliases/front'), 200);
    expectStatus(await op('getAgentAlias', 'GET', '/v2/agent_aliases/ghost'), 404);
    expectStatus(await op('updateAgentAlias', 'PATCH', '/v2/agent_aliases/front', { description: 'the front door' }), 200);
    expectStatus(await op('updateAgentAlias', 'PATCH', '/v2/agent_aliases/ghost', { description: 'x' }), 404);
    expectStatus(await op('replaceAgentAliasPolicy', 'PUT', '/v2/agent_aliases/front/policy', { policy }), 200);
    expectStatus(await op('replaceAgentAliasPolicy', 'PUT', '/v2/agent_aliases/front/policy', { policy: { type: 'routed', rules: [] } }), 400);
    expectStatus(await op('replaceAgentAliasPolicy', 'PUT', '/v2/agent_aliases/ghost/policy', { policy }), 404);

    const base = '/v2/agent_aliases/front/sessions';
    expectStatus(await op('createAliasRoutedSession', 'POST', base, { key: 'chat', name: 'Chat', metadata: { tier: 'gold' } }), 201);
    expectStatus(await op('createAliasRoutedSession', 'POST', base, { key: 'bad key!' }), 400);
    expectStatus(await op('createAliasRoutedSession', 'POST', '/v2/agent_aliases/ghost/sessions', { key: 'chat' }), 404);
    expectStatus(await op('createAliasRoutedSession', 'POST', base, { key: 'doomed' }), 201);
    expectStatus(await op('listAliasRoutedSessions', 'GET', `${base}?limit=1`), 200);
    expectStatus(await op('listAliasRoutedSessions', 'GET', '/v2/agent_aliases/ghost/sessions'), 404);
    expectStatus(await op('getAliasRoutedSession', 'GET', `${base}/chat`), 200);
    expectStatus(await op('getAliasRoutedSession', 'GET', `${base}/ghost`), 404);
    expectStatus(await op('updateAliasRoutedSession', 'PATCH', `${base}/chat`, { name: 'Renamed' }), 200);
    expectStatus(await op('updateAliasRoutedSession', 'PATCH', `${base}/chat`, { key: 'bad key!' }), 400);
    expectStatus(await op('updateAliasRoutedSession', 'PATCH', `${base}/ghost`, { name: 'x' }), 404);

    upstream.enqueue({ content: 'Routed hello.' });
    const said = await op('createAliasRoutedInput', 'POST', `${base}/chat/events`, text('hi'));
    expectStatus(said, 201);
    upstream.enqueue({ content: 'Routed stream.' });
    expectStatus(await stream('createAliasRoutedInput', `${base}/chat/events`, { ...text('stream it'), stream_response: true }), 201);
    expectStatus(await op('createAliasRoutedInput', 'POST', `${base}/chat/events`, { type: 'input_message', messages: 'hi' }), 400);
    expectStatus(await op('createAliasRoutedInput', 'POST', `${base}/ghost/events`, text('hi')), 404);
    upstream.enqueue({ content: 'Noted.' });
    expectStatus(await upload('createAliasRoutedInput', `${base}/chat/events`, [['memo.txt', 'a memo', 'text/plain']], { messages: JSON.stringify([{ type: 'text', content: 'Keep this.' }]) }), 201);
    expectStatus(await op('listAliasRoutedOutstandingClientToolCalls', 'GET', `${base}/chat/outstanding_client_tool_calls`), 200);
    expectStatus(await op('listAliasRoutedOutstandingClientToolCalls', 'GET', `${base}/ghost/outstanding_client_tool_calls`), 404);
    const artifacts = await op('listAliasRoutedSessionArtifacts', 'GET', `${base}/chat/artifacts`);
    expectStatus(artifacts, 200);
    expectStatus(await op('listAliasRoutedSessionArtifacts', 'GET', `${base}/ghost/artifacts`), 404);
    expectStatus(await op('getAliasRoutedSessionArtifact', 'GET', `${base}/chat/artifacts/${artifacts.body.artifacts?.[0]?.artifact_id}`), 200);
    expectStatus(await op('getAliasRoutedSessionArtifact', 'GET', `${base}/chat/artifacts/art_nope`), 404);
    expectStatus(await op('listAliasRoutedEvents', 'GET', `${base}/chat/events?limit=100`), 200);
    expectStatus(await op('listAliasRoutedEvents', 'GET', `${base}/ghost/events`), 404);
    const first = eventsOf(said)[0]?.id;
    expectStatus(await op('getAliasRoutedEvent', 'GET', `${base}/chat/events/${first}`), 200);
    expectStatus(await op('getAliasRoutedEvent', 'GET', `${base}/chat/events/aev_nope`), 404);
    expectStatus(await op('hideAliasRoutedEvent', 'POST', `${base}/chat/events/${first}/hide`), 200);
    expectStatus(await op('hideAliasRoutedEvent', 'POST', `${base}/chat/events/aev_nope/hide`), 404);
    expectStatus(await op('unhideAliasRoutedEvent', 'POST', `${base}/chat/events/${first}/unhide`), 200);
    expectStatus(await op('unhideAliasRoutedEvent', 'POST', `${base}/chat/events/aev_nope/unhide`), 404);
    const last = eventsOf(said).at(-1)?.id;
    expectStatus(await op('deleteAliasRoutedEvent', 'DELETE', `${base}/chat/events/${last}`), 204);
    expectStatus(await op('deleteAliasRoutedEvent', 'DELETE', `${base}/chat/events/${last}`), 404);
    expectStatus(await op('deleteAliasRoutedSession', 'DELETE', `${base}/doomed`), 204);
    expectStatus(await op('deleteAliasRoutedSession', 'DELETE', `${base}/doomed`), 404);

    expectStatus(await op('createAliasRoutedInput', 'POST', `${base}/chat/events`, { type: 'interrupt' }), 409);
    // A canary: a match rule, then a weighted split (the reference's example partition).
    const canary = { type: 'routed', rules: [{ match: "get('$.session.metadata.tenant') == 'eu'", targets: { type: 'single', agent_key: 'walker' } }, { targets: { ...reference.exampleOf('WeightedRuleTargets'), options: [{ agent_key: 'walker', weight: 90 }, { agent_key: 'routed', weight: 10 }] } }] };
    expectStatus(await op('replaceAgentAliasPolicy', 'PUT', '/v2/agent_aliases/doomed/policy', { policy: canary }), 200);
    expectStatus(await op('getAgentAlias', 'GET', '/v2/agent_aliases/doomed'), 200);
    expectStatus(await op('deleteAgentAlias', 'DELETE', '/v2/agent_aliases/doomed'), 204);
    expectStatus(await op('deleteAgentAlias', 'DELETE', '/v2/agent_aliases/doomed'), 404);
    expect(mismatches()).toEqual([]);
  });

  it('pipelines, their runs and dead letters', async () => {
    // The source is a site the outbound policy refuses (only 127.0.0.1 is allowed here): a run starts and fails.
    const pipeline = { key: 'docs', name: 'Docs', description: 'the docs site', source: { type: 'web', pages_source: { type: 'sitemap', sitemap_urls: ['https://docs.example.com/sitemap.xml'] } }, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'walker' }, metadata: { team: 'walk' } };
    expectStatus(await op('createPipeline', 'POST', '/v2/pipelines', pipeline), 201);
    expectStatus(await op('createPipeline', 'POST', '/v2/pipelines', pipeline), 409);
    expectStatus(await op('createPipeline', 'POST', '/v2/pipelines', { ...pipeline, key: 'bad', source: { type: 'dropbox' } }), 400);
    expectStatus(await op('createPipeline', 'POST', '/v2/pipelines', { ...pipeline, key: 'doomed' }), 201);
    expectStatus(await op('listPipelines', 'GET', '/v2/pipelines?limit=1'), 200);
    expectStatus(await op('createPipeline', 'POST', '/v2/pipelines', { ...pipeline, key: 'mine' }, nobody), 403);
    expectStatus(await op('getPipeline', 'GET', '/v2/pipelines/docs'), 200);
    expectStatus(await op('getPipeline', 'GET', '/v2/pipelines/ghost'), 404);
    expectStatus(await op('updatePipeline', 'PATCH', '/v2/pipelines/docs', { description: 'walked' }), 200);
    expectStatus(await op('updatePipeline', 'PATCH', '/v2/pipelines/docs', { trigger: { type: 'sometimes' } }), 400);
    expectStatus(await op('updatePipeline', 'PATCH', '/v2/pipelines/ghost', { description: 'x' }), 404);
    const { key: _key, ...replacement } = pipeline;
    expectStatus(await op('replacePipeline', 'PUT', '/v2/pipelines/docs', { ...replacement, name: 'Docs v2' }), 200);
    expectStatus(await op('replacePipeline', 'PUT', '/v2/pipelines/docs', { ...replacement, source: { type: 'dropbox' } }), 400);
    expectStatus(await op('replacePipeline', 'PUT', '/v2/pipelines/ghost', replacement), 404);

    const run = await op('triggerPipeline', 'POST', '/v2/pipelines/docs/trigger');
    expectStatus(run, 201);
    expectStatus(await op('triggerPipeline', 'POST', '/v2/pipelines/ghost/trigger'), 404);
    const runPath = `/v2/pipelines/docs/runs/${run.body.id}`;
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      if (!['pending', 'running'].includes((await app.call('GET', runPath)).body.status)) break;
    }
    expectStatus(await op('listPipelineRuns', 'GET', '/v2/pipelines/docs/runs'), 200);
    expectStatus(await op('listPipelineRuns', 'GET', '/v2/pipelines/ghost/runs'), 404);
    expectStatus(await op('getPipelineRun', 'GET', runPath), 200);
    expectStatus(await op('getPipelineRun', 'GET', '/v2/pipelines/docs/runs/run_nope'), 404);
    expectStatus(await op('listPipelineRunEvents', 'GET', `${runPath}/events?limit=100`), 200);
    expectStatus(await op('listPipelineRunEvents', 'GET', '/v2/pipelines/docs/runs/run_nope/events'), 404);
    expectStatus(await op('cancelPipelineRun', 'POST', `${runPath}/cancel`), 409);
    expectStatus(await op('cancelPipelineRun', 'POST', '/v2/pipelines/docs/runs/run_nope/cancel'), 404);

    const letter = await op('createPipelineDeadLetterEntry', 'POST', '/v2/pipelines/docs/dead_letters', { source_record_id: 'https://docs.example.com/page', error_message: 'misfiled' });
    expectStatus(letter, 201);
    expectStatus(await op('createPipelineDeadLetterEntry', 'POST', '/v2/pipelines/docs/dead_letters', { error_message: 'no record' }), 400);
    expectStatus(await op('createPipelineDeadLetterEntry', 'POST', '/v2/pipelines/ghost/dead_letters', { source_record_id: 'https://docs.example.com/page' }), 404);
    expectStatus(await op('listPipelineDeadLetterEntries', 'GET', '/v2/pipelines/docs/dead_letters'), 200);
    expectStatus(await op('listPipelineDeadLetterEntries', 'GET', '/v2/pipelines/ghost/dead_letters'), 404);
    expectStatus(await op('getPipelineDeadLetterEntry', 'GET', `/v2/pipelines/docs/dead_letters/${letter.body.id}`), 200);
    expectStatus(await op('getPipelineDeadLetterEntry', 'GET', '/v2/pipelines/docs/dead_letters/dlq_nope'), 404);
    expectStatus(await op('deletePipelineDeadLetterEntry', 'DELETE', `/v2/pipelines/docs/dead_letters/${letter.body.id}`), 204);
    expectStatus(await op('deletePipelineDeadLetterEntry', 'DELETE', `/v2/pipelines/docs/dead_letters/${letter.body.id}`), 404);
    expectStatus(await op('createPipelineDeadLetterEntry', 'POST', '/v2/pipelines/docs/dead_letters', { source_record_id: 'https://docs.example.com/again' }), 201);
    const processed = await op('processPipelineDeadLetterEntries', 'POST', '/v2/pipelines/docs/dead_letters/process', {});
    expectStatus(processed, 201);
    expectStatus(await op('processPipelineDeadLetterEntries', 'POST', '/v2/pipelines/ghost/dead_letters/process', {}), 404);
    // A run that is going on is cancelled (the reprocessing run started just above, if it still runs).
    const cancel = await op('cancelPipelineRun', 'POST', `/v2/pipelines/docs/runs/${processed.body.id}/cancel`);
    expect([204, 409]).toContain(cancel.status);

    // A run that is going on (its site holds the sitemap): a second trigger and a reprocessing are conflicts; it is
    // cancelled once, and a second cancel is a conflict.
    expectStatus(await op('createPipeline', 'POST', '/v2/pipelines', { ...pipeline, key: 'held', source: { type: 'web', pages_source: { type: 'sitemap', sitemap_urls: [`${siteUrl}/sitemap.xml`] } } }), 201);
    expectStatus(await op('createPipelineDeadLetterEntry', 'POST', '/v2/pipelines/held/dead_letters', { source_record_id: `${siteUrl}/page` }), 201);
    const going = await op('triggerPipeline', 'POST', '/v2/pipelines/held/trigger');
    expectStatus(going, 201);
    expectStatus(await op('triggerPipeline', 'POST', '/v2/pipelines/held/trigger'), 409);
    expectStatus(await op('processPipelineDeadLetterEntries', 'POST', '/v2/pipelines/held/dead_letters/process', {}), 409);
    expectStatus(await op('cancelPipelineRun', 'POST', `/v2/pipelines/held/runs/${going.body.id}/cancel`), 204);
    expectStatus(await op('cancelPipelineRun', 'POST', `/v2/pipelines/held/runs/${going.body.id}/cancel`), 409);
    release();

    // A pipeline of each of the reference's source types, and each trigger type, built from the reference's own
    // examples; the secrets it gives no example for are added, and never shown back.
    const key = makeServiceAccountKey({ tokenUri: 'https://oauth2.googleapis.com/token' });
    const example = (name: string) => reference.exampleOf(name);
    const sources: [string, Record<string, unknown>][] = [
      ['SharepointSourceConfiguration', { client_secret: 'sp-SECRET-1' }],
      ['S3SourceConfiguration', { access_key_id: 'AKIA-SECRET-2', secret_access_key: 's3-SECRET-3' }],
      ['GoogleDriveSourceConfiguration', { scopes: [example('SharedGoogleDriveScope')], private_key: key.privateKeyPem }],
      ['BoxSourceConfiguration', { auth: { ...(example('BoxSourceConfiguration').auth as object), client_secret: 'box-SECRET-4' } }],
      ['WolkenKbSourceConfiguration', { auth_code: 'wk-SECRET-5', refresh_token: 'wk-SECRET-6' }],
      ['ConfluenceSourceConfiguration', {}],
      ['WebSourceConfiguration', { pages_source: { type: 'crawl', urls: ['https://docs.example.com/'] } }],
    ];
    const triggers = ['CronTriggerConfiguration', 'IntervalTriggerConfiguration', 'ManualTriggerConfiguration'];
    for (const [i, [schema, extra]] of sources.entries()) {
      const source = { ...example(schema), ...extra };
      const made = await op('createPipeline', 'POST', '/v2/pipelines', { key: `source-${i}`, name: schema, source, trigger: example(triggers[i % 3]), transform: { type: 'agent', agent_key: 'walker' } });
      expectStatus(made, 201);
      expect(JSON.stringify(made.body)).not.toMatch(/SECRET|PRIVATE KEY/);
      expectStatus(await op('getPipeline', 'GET', `/v2/pipelines/source-${i}`), 200);
      expectStatus(await op('deletePipeline', 'DELETE', `/v2/pipelines/source-${i}`), 204);
    }

    expectStatus(await op('deletePipeline', 'DELETE', '/v2/pipelines/doomed'), 204);
    expectStatus(await op('deletePipeline', 'DELETE', '/v2/pipelines/doomed'), 404);
    expect(mismatches()).toEqual([]);
  });

  it('agent analytics: traces and spans of the turns above', async () => {
    let traces = await op('listTraces', 'GET', '/v2/agent_analytics/traces?limit=100');
    // The projection follows the log: the turns of the walk are there once it has caught up.
    for (const deadline = Date.now() + 10_000; !traces.body.traces?.length && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) traces = await op('listTraces', 'GET', '/v2/agent_analytics/traces?limit=100');
    expectStatus(traces, 200);
    expectStatus(await op('listTraces', 'GET', '/v2/agent_analytics/traces?limit=0'), 400);
    expectStatus(await op('listTraces', 'GET', '/v2/agent_analytics/traces', undefined, nobody), 403);
    const traceId = traces.body.traces?.[0]?.trace_id;
    expectStatus(await op('getTrace', 'GET', `/v2/agent_analytics/traces/${traceId}`), 200);
    expectStatus(await op('getTrace', 'GET', '/v2/agent_analytics/traces/0123456789abcdef0123456789abcdef'), 404);
    const spans = await op('listTraceSpans', 'GET', `/v2/agent_analytics/traces/${traceId}/spans`);
    expectStatus(spans, 200);
    expectStatus(await op('listTraceSpans', 'GET', '/v2/agent_analytics/traces/0123456789abcdef0123456789abcdef/spans'), 404);
    expectStatus(await op('getTraceSpan', 'GET', `/v2/agent_analytics/traces/${traceId}/spans/${spans.body.spans?.[0]?.span_id}`), 200);
    expectStatus(await op('getTraceSpan', 'GET', `/v2/agent_analytics/traces/${traceId}/spans/0123456789abcdef`), 404);
    expect(mismatches()).toEqual([]);
  });

  it('metrics: the catalogue and a series of the turns above', async () => {
    const end = new Date(Math.ceil((Date.now() + 5 * 60_000) / 60_000) * 60_000);
    const window = `start=${new Date(end.getTime() - 30 * 60_000).toISOString()}&end=${end.toISOString()}`;
    expectStatus(await op('listMetrics', 'GET', '/v2/metrics'), 200);
    expectStatus(await op('listMetrics', 'GET', '/v2/metrics?category=agent'), 200);
    expectStatus(await op('listMetrics', 'GET', '/v2/metrics', undefined, nobody), 403);
    const turns = await op('getMetric', 'GET', `/v2/metrics/agent.turn.count?${window}&max_bins=10`);
    expectStatus(turns, 200);
    expectStatus(await op('getMetric', 'GET', `/v2/metrics/agent.turn.count?${window}&max_bins=0`), 400);
    expectStatus(await op('getMetric', 'GET', `/v2/metrics/agent.turn.count?start=${end.toISOString()}&end=${end.toISOString()}`), 400);
    expectStatus(await op('getMetric', 'GET', `/v2/metrics/agent.turn.nope?${window}`), 404);
    expect(mismatches()).toEqual([]);
  });

  it('glossaries', async () => {
    expectStatus(await op('createGlossary', 'POST', '/v2/glossaries', { key: 'acme', name: 'ACME terms', description: 'house jargon' }), 201);
    expectStatus(await op('createGlossary', 'POST', '/v2/glossaries', { key: 'acme', name: 'Again' }), 400);
    expectStatus(await op('listGlossaries', 'GET', '/v2/glossaries?limit=1'), 200);
    expectStatus(await op('createGlossary', 'POST', '/v2/glossaries', { key: 'mine', name: 'Mine' }, nobody), 403);
    expectStatus(await op('getGlossary', 'GET', '/v2/glossaries/acme'), 200);
    expectStatus(await op('getGlossary', 'GET', '/v2/glossaries/ghost'), 404);
    expectStatus(await op('updateGlossary', 'PATCH', '/v2/glossaries/acme', { description: 'our jargon' }), 200);
    expectStatus(await op('updateGlossary', 'PATCH', '/v2/glossaries/acme', { name: 42 }), 400);
    expectStatus(await op('updateGlossary', 'PATCH', '/v2/glossaries/ghost', { description: 'x' }), 404);
    expectStatus(await op('upsertGlossaryEntries', 'POST', '/v2/glossaries/acme/entries', { entries: { SLA: 'service level agreement', PTO: 'paid time off' } }), 204);
    expectStatus(await op('upsertGlossaryEntries', 'POST', '/v2/glossaries/acme/entries', { entries: { '': 'x' } }), 400);
    expectStatus(await op('upsertGlossaryEntries', 'POST', '/v2/glossaries/ghost/entries', { entries: { a: 'b' } }), 404);
    expectStatus(await op('listGlossaryEntries', 'GET', '/v2/glossaries/acme/entries'), 200);
    expectStatus(await op('listGlossaryEntries', 'GET', '/v2/glossaries/ghost/entries'), 404);
    expectStatus(await op('deleteGlossaryEntries', 'DELETE', '/v2/glossaries/acme/entries', { terms: ['PTO'] }), 204);
    expectStatus(await op('deleteGlossaryEntries', 'DELETE', '/v2/glossaries/ghost/entries', { terms: ['PTO'] }), 404);
    expectStatus(await op('deleteGlossary', 'DELETE', '/v2/glossaries/acme'), 204);
    expectStatus(await op('deleteGlossary', 'DELETE', '/v2/glossaries/acme'), 404);
    expect(mismatches()).toEqual([]);
  });

  it('leaves no operation of the reference unwalked (with the retrieval walk), and no allowed mismatch unmet', () => {
    const all = reference.operations();
    expect(all).toHaveLength(177);
    const agentHalf = all.filter((o) => !RETRIEVAL_TAGS.includes(reference.tagOf(o.operationId)));
    expect(agentHalf).toHaveLength(106);
    for (const id of Object.keys(PENDING)) expect(agentHalf.map((o) => o.operationId)).toContain(id);
    const unwalked = agentHalf.map((o) => o.operationId).filter((id) => !walked.has(id) && !(id in PENDING));
    expect(unwalked).toEqual([]);
    expect(ALLOWED.filter((a) => !used.has(a))).toEqual([]);
  });
});
