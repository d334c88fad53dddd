import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, RestTransportFactory } from '@a2a-js/sdk/client';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/** Issue 16, the agent-to-agent protocol (docs/a2a.md), driven by the official SDK's client against the service. */
describe('agent-to-agent protocol', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let base = '';
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-a2a-'));

  const withKey: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('x-api-key', app.key);
    return fetch(input, { ...init, headers });
  };
  const client = () => new ClientFactory({ transports: [new RestTransportFactory({ fetchImpl: withKey, legacyCompat: { enabled: true } })], cardResolver: new DefaultAgentCardResolver({ fetchImpl: withKey, legacyCompat: { enabled: true } }) }).createFromUrl(`${base}/.well-known/a2a/v1/agent-card.json`, '');
  const message = (text: string, contextId = '') => ({ tenant: '', configuration: undefined, metadata: undefined, message: { messageId: `m-${Math.random().toString(36).slice(2)}`, contextId, taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] } });
  const textOf = (parts: any[] | undefined) => (parts ?? []).map((p) => p.content?.value ?? p.text ?? '').join('');

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    // Its own data dir, kept across the restart of the last test.
    app = await startTestApp({ dataDir });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'guide', name: 'Tour guide', description: 'Answers questions about the harbour', model: { name: 'm' }, tool_configurations: { ask: { type: 'client', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    base = `${app.url}/v2/agents/guide/a2a`;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the agent card in v1 and v0.3 shapes, with the agent as a skill and the service auth schemes', async () => {
    const v1 = await app.call('GET', '/v2/agents/guide/a2a/.well-known/a2a/v1/agent-card.json');
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({ name: 'Tour guide', description: 'Answers questions about the harbour', capabilities: { streaming: true } });
    expect(JSON.stringify(v1.body.supportedInterfaces)).toContain(base);
    expect(v1.body.skills[0]).toMatchObject({ id: 'guide', name: 'Tour guide' });
    expect(JSON.stringify(v1.body.securitySchemes)).toContain('x-api-key');
    const v03 = await app.call('GET', '/v2/agents/guide/a2a/.well-known/agent-card.json');
    expect(v03.status).toBe(200);
    expect(v03.body).toMatchObject({ name: 'Tour guide', protocolVersion: expect.stringMatching(/^0\.3/) });
    expect((await fetch(`${base}/.well-known/agent-card.json`)).status).toBe(401);
    expect((await app.call('GET', '/v2/agents/nobody/a2a/.well-known/agent-card.json')).status).toBe(404);
  });

  it('sends a message and gets the agent answer as a completed task whose session holds the turn', async () => {
    const c = await client();
    upstream.enqueue({ content: 'The lighthouse opens at nine.' });
    const result: any = await c.sendMessage(message('When does the lighthouse open?'));
    const task = result.task ?? result;
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.artifacts[0].parts)).toBe('The lighthouse opens at nine.');
    const session = `a2a-${task.contextId.replace(/[^0-9a-zA-Z_-]/g, '')}`;
    const events = (await app.call('GET', `/v2/agents/guide/sessions/${session}/events`)).body.events;
    expect(events.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
    expect(events[0].external_id).toBe(`a2a:${task.id}`);
    const got: any = await c.getTask({ tenant: '', id: task.id, historyLength: undefined } as never);
    expect(got.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(got.artifacts[0].parts)).toBe('The lighthouse opens at nine.');
    // The same context continues the same session.
    upstream.enqueue({ content: 'Until six.' });
    const next: any = await c.sendMessage(message('And closes?', task.contextId));
    expect((next.task ?? next).contextId).toBe(task.contextId);
    expect((await app.call('GET', `/v2/agents/guide/sessions/${session}/events`)).body.events).toHaveLength(4);
  });

  it('streams a message: the task, working, the answer artifact, completed', async () => {
    const c = await client();
    upstream.enqueue({ content: 'Ferries leave hourly.' });
    const seen: any[] = [];
    for await (const event of c.sendMessageStream(message('How often do ferries leave?'))) seen.push(event);
    const kinds = seen.map((e) => e.payload?.$case ?? Object.keys(e)[0]);
    expect(kinds[0]).toBe('task');
    const artifact = seen.find((e) => (e.payload?.$case ?? '') === 'artifactUpdate');
    expect(textOf(artifact.payload.value.artifact.parts)).toBe('Ferries leave hourly.');
    const last = seen.at(-1).payload.value;
    expect(last.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('lists tasks, and cancels one waiting on a client tool', async () => {
    const c = await client();
    upstream.enqueue({ toolCalls: [{ id: 'c1', name: 'ask', arguments: '{"q":"name?"}' }] });
    const waiting: any = await c.sendMessage(message('Ask me something'));
    const task = waiting.task ?? waiting;
    expect(task.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const listed: any = await c.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false } as never);
    expect(listed.tasks.map((t: any) => t.id)).toContain(task.id);
    const cancelled: any = await c.cancelTask({ tenant: '', id: task.id, metadata: undefined } as never);
    expect(cancelled.status.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('answers a v0.3 peer on the v0.3 surface (its JSON shapes, under v1/)', async () => {
    upstream.enqueue({ content: 'Boats are for hire at the pier.' });
    const res = await fetch(`${base}/v1/message:send`, {
      method: 'POST',
      headers: { 'x-api-key': app.key, 'content-type': 'application/json', 'a2a-version': '0.3' },
      // v0.3's HTTP+JSON binding: the proto JSON of its SendMessageRequest (role ROLE_USER, the parts as `content`).
      body: JSON.stringify({ message: { messageId: 'legacy-1', role: 'ROLE_USER', content: [{ text: 'Can I hire a boat?' }] } }),
    });
    const body = (await res.json()) as any;
    if (res.status !== 201) throw new Error(JSON.stringify(body));
    const task = body.result ?? body.task ?? body;
    expect(JSON.stringify(task)).toContain('Boats are for hire at the pier.');
    expect(JSON.stringify(task)).toMatch(/"state":"(completed|TASK_STATE_COMPLETED)"/);
    expect((await fetch(`${base}/v1/message:send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
  });

  it('subscribes to a running task and sees it complete; cancels a running task, which interrupts its turn', async () => {
    const c = await client();
    upstream.enqueue({ content: 'Slowly: the tide turns at four.', firstByteDelayMs: 800 });
    const stream = c.sendMessageStream(message('When does the tide turn?'));
    const first: any = (await stream.next()).value;
    const taskId = first.payload.value.id;
    const resubscribed: any[] = [];
    const following = (async () => {
      for await (const e of c.resubscribeTask({ tenant: '', id: taskId } as never)) resubscribed.push(e);
    })();
    for await (const _ of stream) void _;
    await following;
    expect(resubscribed.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);

    upstream.enqueue({ content: 'This answer never arrives.', firstByteDelayMs: 3000 });
    const slow = c.sendMessageStream(message('Tell me a long story'));
    const started: any = (await slow.next()).value;
    const running = started.payload.value;
    await new Promise((r) => setTimeout(r, 300));
    const cancelled: any = await c.cancelTask({ tenant: '', id: running.id, metadata: undefined } as never);
    expect(cancelled.status.state).toBe(TaskState.TASK_STATE_CANCELED);
    for await (const _ of slow) void _;
    const session = `a2a-${running.contextId.replace(/[^0-9a-zA-Z_-]/g, '')}`;
    const events = (await app.call('GET', `/v2/agents/guide/sessions/${session}/events`)).body.events.map((e: Ev) => e.type);
    expect(events).toContain('session_interrupted');
    expect(events).not.toContain('agent_output');
  });

  it('answers tasks/{id} after a restart, from the session events', async () => {
    const c = await client();
    upstream.enqueue({ content: 'The museum is by the harbour.' });
    const sent: any = await c.sendMessage(message('Where is the museum?'));
    const task = sent.task ?? sent;
    await app.close();
    app = await startTestApp({ dataDir });
    base = `${app.url}/v2/agents/guide/a2a`;
    for (let i = 0; i < 100 && (await app.call('GET', '/v2/agents/guide')).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
    const after: any = await (await client()).getTask({ tenant: '', id: task.id, historyLength: undefined } as never);
    expect(after.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(after.artifacts[0].parts)).toBe('The museum is by the harbour.');
    expect(after.contextId).toBe(task.contextId);
  });
});
