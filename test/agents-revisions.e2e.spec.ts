import { applyPatch, deepClone, type Operation } from 'fast-json-patch';
import { ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { REFERENCE_OAS_PATH, referenceErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

type Json = Record<string, any>;

/** The configuration part of an agent view (what a diff is taken over): no key, timestamps, revision, nor the shown `first_step`. */
const configOf = ({ key: _k, created_at: _c, updated_at: _u, revision: _r, created_by: _b, restored_from: _f, diff: _d, first_step: _s, ...config }: Json) => config;

/**
 * Agent revisions (issue 45, docs/agents.md "Revisions"): the list with the fields each revision changed, one revision's
 * configuration and its RFC 6902 diff from another, restore with PATCH's checks and rights, and `agent_revision` on
 * the events of each turn; against a scripted model.
 */
describe('agent revisions', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let instruction: string;
  const users: Record<string, Record<string, string>> = {};
  const base = '/v2/agents/rev/revisions';
  const say = (session: string, text: string, extra: Json = {}) => app.call('POST', `/v2/agents/rev/sessions/${session}/events`, { messages: [{ type: 'text', content: text }], ...extra });
  const revisionCount = async () => (await app.call('GET', `${base}?limit=100`)).body.revisions.length as number;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    await registerScripted(app, upstream, 'm2');
    const made = await app.call('POST', '/v2/instructions', { name: 'Tone', template: 'Be brief.' });
    instruction = made.body.id;
    await app.call('PATCH', `/v2/instructions/${instruction}`, { template: 'Be brief and kind.' });
    const created = await app.call('POST', '/v2/agents', {
      key: 'rev',
      name: 'Rev',
      model: { name: 'm' },
      tool_configurations: {},
      first_step_name: 'main',
      steps: { main: { instructions: [{ type: 'reference', id: instruction, version: 1 }] } },
    });
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    users.dev = asKey(await createUser(app, 'dev', { agent_roles: [{ agent_key: 'rev', role: 'agent_developer' }] }));
    users.viewer = asKey(await createUser(app, 'viewer', { agent_roles: [{ agent_key: 'rev', role: 'agent_viewer' }] }));
    users.user = asKey(await createUser(app, 'chatter', { agent_roles: [{ agent_key: 'rev', role: 'agent_user' }] }));
    await app.call('POST', '/v2/agents/rev/sessions', { key: 's1' });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('numbers the creation 0 and each PATCH one more, newest first, naming who made each and the fields it changed', async () => {
    upstream.enqueue({ content: 'Hello from revision 0.' });
    const first = await say('s1', 'Hi');
    expect(first.status).toBe(201);
    expect(first.body.events.map((e: Json) => [e.type, e.agent_revision])).toEqual([
      ['input_message', 0],
      ['agent_output', 0],
    ]);

    const one = await app.call('PATCH', '/v2/agents/rev', { steps: { main: { instructions: [{ type: 'inline', name: 'tone', template: 'Be thorough.' }] } } });
    expect(one.status).toBe(200);
    const two = await app.call('PATCH', '/v2/agents/rev', { model: { name: 'm2' } }, users.dev);
    expect(two.status).toBe(200);
    // A PATCH that changes nothing adds no revision.
    await app.call('PATCH', '/v2/agents/rev', { model: { name: 'm2' } });

    const listed = await app.call('GET', base);
    expect(listed.status).toBe(200);
    expect(listed.body.metadata).toEqual({});
    const [r2, r1, r0] = listed.body.revisions;
    expect(listed.body.revisions.map((r: Json) => r.revision)).toEqual([2, 1, 0]);
    expect(r2).toEqual({ revision: 2, created_at: expect.any(String), created_by: 'user:dev', changed: ['model'] });
    expect(r1).toMatchObject({ revision: 1, changed: ['steps.main.instructions'] });
    expect(r1.created_by).toMatch(/^(api_key|user):\S+$/);
    // Revision 0 is diffed against an empty configuration: the fields the creation set.
    expect(r0.changed).toEqual(expect.arrayContaining(['model', 'name', 'steps', 'first_step_name', 'tool_configurations']));
    expect(Date.parse(r0.created_at)).toBeLessThanOrEqual(Date.parse(r2.created_at));
    expect(JSON.stringify(listed.body)).not.toContain(app.key);
  });

  it('pages the list like the other agent lists, and refuses a bad limit or page key', async () => {
    const page1 = await app.call('GET', `${base}?limit=2`);
    expect(page1.body.revisions.map((r: Json) => r.revision)).toEqual([2, 1]);
    expect(page1.body.metadata.page_key).toEqual(expect.any(String));
    const page2 = await app.call('GET', `${base}?limit=2&page_key=${page1.body.metadata.page_key}`);
    expect(page2.body).toEqual({ revisions: [expect.objectContaining({ revision: 0 })], metadata: {} });
    const badKey = await app.call('GET', `${base}?page_key=not-a-key`);
    expect(badKey.status).toBe(400);
    expect(badKey.body).toEqual({ messages: [expect.any(String)], request_id: expect.any(String), field_errors: { page_key: expect.any(String) } });
    expect((await app.call('GET', `${base}?limit=0`)).body.field_errors).toHaveProperty('limit');
    expect((await app.call('GET', '/v2/agents/nobody/revisions')).status).toBe(404);
  });

  it('shows a revision as the agent view of its configuration, and the RFC 6902 diff from another', async () => {
    const old = await app.call('GET', `${base}/0`);
    expect(old.status).toBe(200);
    expect(old.body).toMatchObject({ key: 'rev', revision: 0, model: { name: 'm' }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'reference', id: instruction, version: 1 }] } } });
    expect(old.body.created_by).toMatch(/^(api_key|user):/);
    expect(old.body.diff).toBeUndefined();
    if (REFERENCE_OAS_PATH) expect(referenceErrors('getAgent', 200, old.body)).toEqual([]);
    const current = (await app.call('GET', '/v2/agents/rev')).body;
    const latest = await app.call('GET', `${base}/2`);
    expect(configOf(latest.body)).toEqual(configOf(current));
    expect(latest.body.created_by).toBe('user:dev');

    const diffed = await app.call('GET', `${base}/2?diff_from=0`);
    expect(diffed.status).toBe(200);
    const ops: Operation[] = diffed.body.diff;
    expect(ops).toEqual(expect.arrayContaining([{ op: 'replace', path: '/model/name', value: 'm2' }]));
    expect(ops.some((op) => op.path.startsWith('/steps/main/instructions/0'))).toBe(true);
    // The patch turns revision 0's configuration into revision 2's.
    expect(applyPatch(deepClone(configOf(old.body)), ops).newDocument).toEqual(configOf(latest.body));
    expect((await app.call('GET', `${base}/1?diff_from=1`)).body.diff).toEqual([]);
  });

  it('refuses a revision that does not exist (404) and one that is not an integer (400)', async () => {
    const missing = await app.call('GET', `${base}/7`);
    expect(missing.status).toBe(404);
    expect(missing.body.messages[0]).toContain('no revision 7');
    for (const bad of ['abc', '-1', '1.5', '01']) expect([bad, (await app.call('GET', `${base}/${bad}`)).status]).toEqual([bad, 400]);
    const badDiff = await app.call('GET', `${base}/1?diff_from=x`);
    expect([badDiff.status, badDiff.body.field_errors]).toEqual([400, { diff_from: 'must be a non-negative integer' }]);
    expect((await app.call('GET', `${base}/1?diff_from=9`)).body.field_errors).toEqual({ diff_from: 'no revision 9' });
  });

  it('reading revisions needs what reading the configuration needs; restoring needs what PATCH needs', async () => {
    // An agent_user may chat with the agent but not read its configuration: neither the agent nor its revisions.
    expect((await app.call('GET', '/v2/agents/rev', undefined, users.user)).status).toBe(403);
    const refused = await app.call('GET', base, undefined, users.user);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ messages: [expect.any(String)], request_id: expect.any(String) });
    expect((await app.call('GET', `${base}/0`, undefined, users.user)).status).toBe(403);
    // A viewer reads them, but cannot restore (as it cannot PATCH); nothing is written.
    expect((await app.call('GET', `${base}/0?diff_from=2`, undefined, users.viewer)).status).toBe(200);
    expect((await app.call('PATCH', '/v2/agents/rev', { description: 'x' }, users.viewer)).status).toBe(403);
    expect((await app.call('POST', `${base}/0/restore`, undefined, users.viewer)).status).toBe(403);
    expect(await revisionCount()).toBe(3);
  });

  it('restores an old revision as a new one, answered as the agent view; restoring the current one adds none', async () => {
    const restored = await app.call('POST', `${base}/1/restore`, undefined, users.dev);
    expect(restored.status).toBe(200);
    const one = (await app.call('GET', `${base}/1`)).body;
    expect(restored.body).toMatchObject({ key: 'rev', revision: 3, model: { name: 'm' } });
    expect(configOf(restored.body)).toEqual(configOf(one));
    expect(configOf((await app.call('GET', '/v2/agents/rev')).body)).toEqual(configOf(one));
    const [r3] = (await app.call('GET', base)).body.revisions;
    expect(r3).toEqual({ revision: 3, created_at: expect.any(String), created_by: 'user:dev', changed: ['model'], restored_from: 1 });

    const again = await app.call('POST', `${base}/3/restore`);
    expect([again.status, again.body.revision]).toEqual([200, 3]);
    expect((await app.call('POST', `${base}/1/restore`)).body.revision).toBe(3);
    expect(await revisionCount()).toBe(4);
    expect((await app.call('POST', `${base}/9/restore`)).status).toBe(404);
    expect((await app.call('POST', `${base}/x/restore`)).status).toBe(400);
  });

  it('shows on each turn\'s events the revision the turn ran: in the answer, the list, one event and the streams', async () => {
    upstream.enqueue({ content: 'Hello from revision 3.' });
    const streamed = await fetch(`${app.url}/v2/agents/rev/sessions/s1/events`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ type: 'text', content: 'Again' }], stream_response: true }) });
    const text = await streamed.text();
    const sent = text.split('\n\n').flatMap((block) => block.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)) as Json));
    expect(sent.filter((e) => e.type === 'input_message' || e.type === 'agent_output').map((e) => e.agent_revision)).toEqual([3]);
    // The model was called as revision 3 says (revision 1's configuration: model m, inline instructions).
    const request = upstream.chatRequests().at(-1)!.body as Json;
    expect(request.model).toBe('m-upstream');
    expect(request.messages[0].content).toContain('Be thorough.');

    const listed = (await app.call('GET', '/v2/agents/rev/sessions/s1/events?limit=100')).body.events as Json[];
    expect(listed.map((e) => [e.type, e.agent_revision])).toEqual([
      ['input_message', 0],
      ['agent_output', 0],
      ['input_message', 3],
      ['agent_output', 3],
    ]);
    if (REFERENCE_OAS_PATH) expect(referenceErrors('listAgentEvents', 200, { events: listed, metadata: {} })).toEqual([]);
    const one = await app.call('GET', `/v2/agents/rev/sessions/s1/events/${listed[1].id}`);
    expect(one.body).toMatchObject({ type: 'agent_output', agent_revision: 0 });

    const followed = await fetch(`${app.url}/v2/agents/rev/sessions/s1/stream?until=turn_end`, { headers: { 'x-api-key': app.key } });
    const frames = (await followed.text()).split('\n\n').flatMap((block) => block.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)) as Json));
    expect(frames.filter((e) => e.id).map((e) => [e.type, e.agent_revision])).toEqual([
      ['input_message', 0],
      ['agent_output', 0],
      ['input_message', 3],
      ['agent_output', 3],
    ]);
  });

  it('a turn paused on a client tool keeps its revision; the turn its output resumes runs the agent as changed since', async () => {
    await app.call('POST', '/v2/agents', { key: 'asker', name: 'Asker', model: { name: 'm' }, tool_configurations: { ask: { type: 'client', description: 'Ask the user', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'Ask first.' }] } } });
    await app.call('POST', '/v2/agents/asker/sessions', { key: 'a1' });
    upstream.enqueue({ toolCalls: [{ id: 'call_q', name: 'ask', arguments: '{"q":"Which city?"}' }] });
    const paused = await app.call('POST', '/v2/agents/asker/sessions/a1/events', { messages: [{ type: 'text', content: 'Weather?' }] });
    expect(paused.body.events.map((e: Json) => [e.type, e.agent_revision])).toEqual([
      ['input_message', 0],
      ['tool_input', 0],
      ['client_tool_pending', 0],
    ]);
    expect((await app.call('PATCH', '/v2/agents/asker', { steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'Answer in one word.' }] } } })).status).toBe(200);
    upstream.enqueue({ content: 'Sunny.' });
    const toolInput = paused.body.events[1];
    const resumed = await app.call('POST', '/v2/agents/asker/sessions/a1/events', { type: 'tool_output', tool_outputs: [{ type: 'success', event_id: toolInput.id, output: { city: 'Oslo' } }] });
    expect(resumed.body.events.map((e: Json) => [e.type, e.agent_revision])).toEqual([
      ['tool_output', 1],
      ['agent_output', 1],
    ]);
    expect((upstream.chatRequests().at(-1)!.body as Json).messages[0].content).toContain('Answer in one word.');
    const listed = (await app.call('GET', '/v2/agents/asker/sessions/a1/events?limit=100')).body.events as Json[];
    expect(listed.map((e) => [e.type, e.agent_revision])).toEqual([
      ['input_message', 0],
      ['tool_input', 0],
      ['tool_output', 1],
      ['agent_output', 1],
    ]);
  });

  it('refuses to restore a revision whose references are gone since (409 naming the field), writing nothing', async () => {
    // Revision 0 pins version 1 of the instruction; no current definition names it any more, so it can be deleted.
    expect((await app.call('DELETE', `/v2/instructions/${instruction}/versions/1`)).status).toBe(204);
    const before = await revisionCount();
    const refused = await app.call('POST', `${base}/0/restore`);
    expect(refused.status).toBe(409);
    expect(refused.body.messages[0]).toMatch(/^Revision 0 of agent "rev" cannot be restored: /);
    expect(Object.keys(refused.body.field_errors)).toEqual([expect.stringMatching(/^steps\.main\.instructions/)]);
    expect(await revisionCount()).toBe(before);
    expect((await app.call('GET', '/v2/agents/rev')).body.model).toEqual({ name: 'm' });
  });
});
