import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, RestTransportFactory } from '@a2a-js/sdk/client';
import { A2aServer } from '../apps/api/src/a2a/a2a-server';
import { ScriptedOpenAIServer } from '@lib/testing';
import { createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 41, finding 12: A2A tasks are their caller's (another caller lists none of them and gets 404 for each),
 * and what the service keeps of them in memory, and what a list answers, stays bounded whatever the messages weigh.
 */
describe('A2A tasks scoped to their caller and bounded', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let base = '';
  let alice = '';
  let bob = '';
  const PER_CALLER = 3;

  const client = (key: string) => {
    const withKey: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('x-api-key', key);
      return fetch(input, { ...init, headers });
    };
    return new ClientFactory({ transports: [new RestTransportFactory({ fetchImpl: withKey })], cardResolver: new DefaultAgentCardResolver({ fetchImpl: withKey }) }).createFromUrl(`${base}/.well-known/a2a/v1/agent-card.json`, '');
  };
  const message = (text: string, contextId = '') => ({ tenant: '', configuration: undefined, metadata: undefined, message: { messageId: `m-${Math.random().toString(36).slice(2)}`, contextId, taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] } });
  const get = (key: string, path: string) => fetch(`${base}${path}`, { headers: { 'x-api-key': key } });

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { A2A_TASKS_PER_CALLER: String(PER_CALLER) } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'guide', name: 'Tour guide', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
    base = `${app.url}/v2/agents/guide/a2a`;
    alice = await createUser(app, 'alice', { agent_roles: [{ agent_key: 'guide', role: 'agent_user' }] });
    bob = await createUser(app, 'bob', { agent_roles: [{ agent_key: 'guide', role: 'agent_user' }] });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it("lists and gets only the caller's own tasks: another user's are 404 as unknown ones, and cannot be canceled", async () => {
    upstream.enqueue({ content: 'Your salary review is on Friday.' });
    const sent: any = await (await client(alice)).sendMessage(message('When is my salary review?'));
    const task = sent.task ?? sent;
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);

    const own = await get(alice, `/tasks/${task.id}`);
    expect(own.status).toBe(200);
    expect(JSON.stringify(await own.json())).toContain('salary review is on Friday');
    expect(JSON.stringify(await (await get(alice, '/tasks')).json())).toContain(task.id);

    const listed = await get(bob, '/tasks');
    expect(listed.status).toBe(200);
    const body = await listed.text();
    expect(body).not.toContain(task.id);
    expect(body).not.toContain('salary');
    const theirs = await get(bob, `/tasks/${task.id}`);
    const unknown = await get(bob, '/tasks/no-such-task');
    expect(theirs.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(await theirs.text()).not.toContain('salary');
    const cancel = await fetch(`${base}/tasks/${task.id}:cancel`, { method: 'POST', headers: { 'x-api-key': bob, 'content-type': 'application/json' }, body: '{}' });
    expect(cancel.status).toBe(404);
    // Nor can another caller continue the conversation by naming its context: the task is rejected, the session unchanged.
    const session = `/v2/agents/guide/sessions/a2a-${task.contextId.replace(/[^0-9a-zA-Z_-]/g, '')}/events`;
    const before = (await app.call('GET', session)).body.events.length;
    const intruding: any = await (await client(bob)).sendMessage(message('What did I ask before?', task.contextId));
    expect((intruding.task ?? intruding).status.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(JSON.stringify(intruding)).not.toContain('salary');
    expect((await app.call('GET', session)).body.events).toHaveLength(before);
    // The owner still sees the task as it was.
    const after: any = await (await get(alice, `/tasks/${task.id}`)).json();
    expect(JSON.stringify(after)).toMatch(/COMPLETED|completed/);
  });

  it('keeps a bounded number of tasks per caller, holds no message of a finished task whole, and lists without history', async () => {
    const big = 'x'.repeat(1_000_000);
    const c = await client(bob);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      upstream.enqueue({ content: `answer ${i} ${big}` });
      const sent: any = await c.sendMessage(message(`${i} ${big}`));
      ids.push((sent.task ?? sent).id);
    }
    const held = app.started.app.get(A2aServer, { strict: false }).heldTasks();
    // Alice's one task and Bob's last three: nothing running, and of the 12 MB of messages, only cut status texts.
    expect(held.tasks).toBe(1 + PER_CALLER);
    expect(held.live).toBe(0);
    expect(held.bytes).toBeLessThan(64 * 1024);

    const list = await get(bob, '/tasks?pageSize=100');
    const text = await list.text();
    expect(list.status).toBe(200);
    expect(text.length).toBeLessThan(64 * 1024);
    const listed = JSON.parse(text);
    expect(listed.tasks.map((t: any) => t.id).sort()).toEqual(ids.slice(-PER_CALLER).sort());
    expect(listed.tasks.every((t: any) => !t.history?.length)).toBe(true);

    // A task no longer kept in memory still answers from the session's events, whole, to its caller only.
    const oldest = await get(bob, `/tasks/${ids[0]}`);
    expect(oldest.status).toBe(200);
    expect((await oldest.text()).length).toBeGreaterThan(1_000_000);
    expect((await get(alice, `/tasks/${ids[0]}`)).status).toBe(404);
  });
});
