import { ScriptedOpenAIServer } from '@lib/testing';
import { asBearer, asKey, createClient, createUser, endUserTokenFor } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { REFERENCE_OAS_PATH, ReferenceOpenApi, referenceErrors, schemaErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

type Json = Record<string, any>;

const REVIEW = { description: 'Reviews code for bugs and security issues.', when_to_use: 'When the user asks to review or audit code.', content: 'REVIEW-CONTENT: look for injection first, then for off-by-one errors.' };
const TRANSLATE = { description: 'Translates text to English.', content: 'TRANSLATE-CONTENT: keep names untranslated.' };

/**
 * Agent skills (issue 44, docs/agents.md "Skills"): the reference's AgentSkill, `allowed_skills`, `invoke_skill`,
 * the `skill` input and the `skill_load` event, against a scripted model, with bodies checked against the
 * reference's schemas.
 */
describe('agent skills', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const coach = {
    key: 'coach',
    name: 'Coach',
    model: { name: 'm' },
    tool_configurations: {},
    skills: { review: REVIEW, translate: TRANSLATE },
    first_step_name: 'main',
    steps: {
      main: { instructions: [{ type: 'inline', name: 'coach', template: 'You coach programmers.' }] },
      narrow: { instructions: [{ type: 'inline', name: 'narrow', template: 'Only translate.' }], allowed_skills: ['translate'] },
      quiet: { instructions: [{ type: 'inline', name: 'quiet', template: 'No skills here.' }], allowed_skills: [] },
    },
  };
  const input = (session: string, body: Json, headers?: Record<string, string>, base = '/v2/agents/coach/sessions') => app.call('POST', `${base}/${session}/events`, body, headers);
  const say = (session: string, text: string, extra: Json = {}) => input(session, { messages: [{ type: 'text', content: text }], ...extra });
  const events = async (session: string): Promise<Json[]> => (await app.call('GET', `/v2/agents/coach/sessions/${session}/events?limit=100`)).body.events;
  const lastChat = () => upstream.chatRequests().at(-1)!.body as Json;
  const fieldErrorsOf = (res: { status: number; body: Json }) => [res.status, res.body.field_errors];

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    const created = await app.call('POST', '/v2/agents', coach);
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    for (const s of ['s1', 's2', 's3', 's4', 's5']) await app.call('POST', '/v2/agents/coach/sessions', { key: s });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('stores the skills and allowed_skills as given, in the reference Agent shape', async () => {
    const got = await app.call('GET', '/v2/agents/coach');
    expect(got.body.skills).toEqual({ review: REVIEW, translate: TRANSLATE });
    expect(got.body.steps.narrow.allowed_skills).toEqual(['translate']);
    expect(got.body.steps.quiet.allowed_skills).toEqual([]);
    expect(got.body.steps.main.allowed_skills).toBeUndefined();
    expect(referenceErrors('getAgent', 200, got.body)).toEqual([]);
  });

  it('lists the skills in the system message without their content, and loads one when the model calls invoke_skill', async () => {
    upstream.enqueue({ toolCalls: [{ id: 'call_r', name: 'invoke_skill', arguments: '{"skill_name":"review"}' }] }, { content: 'No injection found.' });
    const before = upstream.chatRequests().length;
    const res = await say('s1', 'Please review my login handler.');
    expect(res.status).toBe(201);
    expect(referenceErrors('createAgentInput', 201, res.body)).toEqual([]);
    expect(res.body.events.map((e: Json) => e.type)).toEqual(['input_message', 'tool_input', 'tool_output', 'skill_load', 'agent_output']);
    const load = res.body.events[3];
    expect(load).toMatchObject({ skill_name: 'review', content: REVIEW.content });
    expect(schemaErrors('SkillLoadEvent', load)).toEqual([]);

    const [first, second] = upstream.chatRequests().slice(before).map((r) => r.body as Json);
    const system = first.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain('You coach programmers.');
    expect(system.content).toContain(`- review: ${REVIEW.description} When to use: ${REVIEW.when_to_use}`);
    expect(system.content).toContain(`- translate: ${TRANSLATE.description}`);
    expect(JSON.stringify(first.messages)).not.toContain('REVIEW-CONTENT');
    expect(JSON.stringify(first.messages)).not.toContain('TRANSLATE-CONTENT');
    const tool = first.tools.find((t: Json) => t.function.name === 'invoke_skill');
    expect(tool.function.parameters.properties.skill_name.enum).toEqual(['review', 'translate']);
    // The next call holds the skill's content as a user message, after the tool's output.
    expect(second.messages.slice(-2).map((m: Json) => m.role)).toEqual(['tool', 'user']);
    expect(second.messages.at(-1).content).toBe(REVIEW.content);

    const stored = await events('s1');
    expect(stored.map((e) => e.type)).toEqual(['input_message', 'tool_input', 'tool_output', 'skill_load', 'agent_output']);
    expect(referenceErrors('listAgentEvents', 200, { events: stored, metadata: {} })).toEqual([]);
    const one = await app.call('GET', `/v2/agents/coach/sessions/s1/events/${stored[3].id}`);
    expect(one.body).toMatchObject({ type: 'skill_load', skill_name: 'review', content: REVIEW.content });
    expect(referenceErrors('getAgentEvent', 200, one.body)).toEqual([]);
    // Later turns still read the loaded skill.
    upstream.enqueue({ content: 'Sure.' });
    await say('s1', 'And the logout handler?');
    expect(JSON.stringify(lastChat().messages)).toContain('REVIEW-CONTENT');
  });

  it('streams the skill_load event in the reference shape, and the session stream shows it', async () => {
    upstream.enqueue({ toolCalls: [{ id: 'call_t', name: 'invoke_skill', arguments: '{"skill_name":"translate"}' }] }, { content: 'Hello.' });
    const res = await fetch(`${app.url}/v2/agents/coach/sessions/s2/events`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ type: 'text', content: 'Hola' }], stream_response: true }) });
    const text = await res.text();
    expect(res.status).toBe(201);
    const sent = text.split('\n\n').flatMap((block) => block.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)) as Json));
    const load = sent.find((e) => e.type === 'skill_load');
    expect(load).toMatchObject({ skill_name: 'translate', content: TRANSLATE.content });
    if (REFERENCE_OAS_PATH) expect(new ReferenceOpenApi().checkStream('createAgentInput', 201, text)).toEqual([]);
    const followed = await fetch(`${app.url}/v2/agents/coach/sessions/s2/stream?until=turn_end`, { headers: { 'x-api-key': app.key } });
    expect(await followed.text()).toContain('"type":"skill_load"');
  });

  it('an unknown skill or one the step does not allow is a tool error the model reads, and the turn goes on', async () => {
    upstream.enqueue({ toolCalls: [{ id: 'call_x', name: 'invoke_skill', arguments: '{"skill_name":"cook"}' }] }, { content: 'I cannot cook.' });
    const unknown = await say('s3', 'Cook something');
    expect(unknown.body.events.map((e: Json) => e.type)).toEqual(['input_message', 'tool_input', 'tool_output', 'agent_output']);
    expect(unknown.body.events[2]).toMatchObject({ error: true, tool_output: { error: 'there is no skill named cook (the skills are review, translate)' } });
    // The narrow step allows translate only: the prompt lists it alone, and review is refused.
    upstream.enqueue({ toolCalls: [{ id: 'call_n', name: 'invoke_skill', arguments: '{"skill_name":"review"}' }] }, { content: 'Only translations here.' });
    const before = upstream.chatRequests().length;
    const narrow = await say('s3', 'Review this', { entry_step: 'narrow' });
    expect(narrow.body.events[2]).toMatchObject({ error: true, tool_output: { error: 'skill review is not allowed in step narrow' } });
    expect(narrow.body.events.at(-1)).toMatchObject({ type: 'agent_output', content: 'Only translations here.' });
    const first = upstream.chatRequests()[before].body as Json;
    expect(first.messages[0].content).toContain('- translate:');
    expect(first.messages[0].content).not.toContain('- review:');
    expect(first.tools.find((t: Json) => t.function.name === 'invoke_skill').function.parameters.properties.skill_name.enum).toEqual(['translate']);
  });

  it('takes skill parts in a multipart upload\'s messages, and refuses a misplaced field there', async () => {
    const upload = (messages: unknown) => {
      const form = new FormData();
      form.append('files', new Blob([Buffer.from('def f(): pass')], { type: 'text/x-python' }), 'f.py');
      form.append('messages', JSON.stringify(messages));
      return fetch(`${app.url}/v2/agents/coach/sessions/s4/events`, { method: 'POST', headers: { 'x-api-key': app.key }, body: form }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }));
    };
    upstream.enqueue({ content: 'Reviewed the file.' });
    const res = await upload([{ type: 'text', content: 'Review this file' }, { type: 'skill', skill_name: 'review' }]);
    expect(res.status).toBe(201);
    expect(res.body.events.map((e: Json) => e.type)).toEqual(['artifact_upload', 'input_message', 'skill_load', 'agent_output']);
    expect(lastChat().messages.at(-1)).toEqual({ role: 'user', content: REVIEW.content });
    const refused = await upload([{ type: 'text', content: 'x', skill_name: 'review' }]);
    expect(fieldErrorsOf(refused)).toEqual([400, { 'messages.0.skill_name': 'a text input has no skill_name (use type skill)' }]);
  });

  it('shows the invoke_skill call in its turn\'s trace as an execute_tool span (the reference has no skill_load span)', async () => {
    let spans: Json[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && !spans.length; await new Promise((r) => setTimeout(r, 50))) {
      const traces = (await app.call('GET', '/v2/agent_analytics/traces?agent_key=coach&limit=100')).body.traces as Json[];
      for (const t of traces ?? []) {
        const found = ((await app.call('GET', `/v2/agent_analytics/traces/${t.trace_id}/spans`)).body.spans as Json[]).filter((sp) => sp.operation === 'execute_tool' && sp.attributes?.tool_key === 'invoke_skill' && sp.status === 'ok');
        spans.push(...found);
      }
    }
    expect(spans.length).toBeGreaterThan(0);
    expect(spans[0].attributes).toMatchObject({ tool_key: 'invoke_skill', tool_type: 'invoke_skill' });
    expect(referenceErrors('getTraceSpan', 200, spans[0])).toEqual([]);
  });

  it('a step with allowed_skills [] gets neither the list nor the invoke_skill tool', async () => {
    upstream.enqueue({ content: 'Plain answer.' });
    await say('s4', 'Hello', { entry_step: 'quiet' });
    const request = lastChat();
    expect(request.messages[0].content).toBe('No skills here.');
    expect((request.tools ?? []).map((t: Json) => t.function.name)).not.toContain('invoke_skill');
  });

  it('a skill input loads the skill for the model at once; an unknown or not allowed skill, or a malformed part, is a 400 that stores nothing', async () => {
    upstream.enqueue({ content: 'Translated.' });
    const res = await input('s5', { messages: [{ type: 'skill', skill_name: 'translate' }, { type: 'text', content: 'Bonjour' }] });
    expect(res.status).toBe(201);
    expect(referenceErrors('createAgentInput', 201, res.body)).toEqual([]);
    expect(res.body.events.map((e: Json) => e.type)).toEqual(['input_message', 'skill_load', 'agent_output']);
    expect(res.body.events[0].messages).toEqual([{ type: 'skill', skill_name: 'translate' }, { type: 'text', content: 'Bonjour' }]);
    expect(res.body.events[1]).toMatchObject({ skill_name: 'translate', content: TRANSLATE.content });
    expect(lastChat().messages.slice(-2)).toEqual([{ role: 'user', content: 'Bonjour' }, { role: 'user', content: TRANSLATE.content }]);

    const stored = (await events('s5')).length;
    const refusals: [Json, Record<string, string>][] = [
      [{ messages: [{ type: 'skill', skill_name: 'cook' }] }, { 'messages[0].skill_name': 'there is no skill named cook (the skills are review, translate)' }],
      [{ messages: [{ type: 'text', content: 'x' }, { type: 'skill', skill_name: 'review' }], entry_step: 'narrow' }, { 'messages[1].skill_name': 'skill review is not allowed in step narrow' }],
      [{ messages: [{ type: 'skill', skill_name: 'review', content: 'extra' }] }, { 'messages.0.content': 'a skill input has no content (the skill is loaded by its skill_name)' }],
      [{ messages: [{ type: 'skill' }] }, { 'messages.0.skill_name': 'messages.0.skill_name is required' }],
      [{ messages: [{ type: 'recipe', content: 'x' }] }, { 'messages.0.type': 'type must be text or skill' }],
    ];
    for (const [body, fields] of refusals) {
      const refused = await input('s5', body);
      expect(fieldErrorsOf(refused)).toEqual([400, fields]);
      expect(referenceErrors('createAgentInput', 400, refused.body)).toEqual([]);
    }
    expect((await events('s5')).length).toBe(stored);
  });

  it('refuses a wrong configuration with a 400 naming the field, on create, PATCH and PUT, and changes nothing', async () => {
    const bad = async (method: string, path: string, body: Json, fields: Record<string, string>) => {
      const res = await app.call(method, path, body);
      expect(fieldErrorsOf(res)).toEqual([400, fields]);
    };
    const create = (extra: Json) => ({ ...coach, key: 'bad', ...extra });
    await bad('POST', '/v2/agents', create({ skills: { review: { ...REVIEW, description: 'x'.repeat(501) }, translate: TRANSLATE } }), { 'skills.review.description': 'must be at most 500 characters' });
    await bad('POST', '/v2/agents', create({ skills: { review: { ...REVIEW, when_to_use: 'x'.repeat(501) }, translate: TRANSLATE } }), { 'skills.review.when_to_use': 'must be at most 500 characters' });
    await bad('POST', '/v2/agents', create({ skills: { review: { ...REVIEW, content: 'x'.repeat(50_001) }, translate: TRANSLATE } }), { 'skills.review.content': 'must be at most 50000 characters' });
    await bad('POST', '/v2/agents', create({ skills: { review: { description: 'd' } }, steps: { main: coach.steps.main } }), { 'skills.review.content': 'is required' });
    await bad('POST', '/v2/agents', create({ skills: { 'no spaces': REVIEW }, steps: { main: coach.steps.main } }), { 'skills.no spaces': 'a skill name is 1 to 64 letters, digits, underscores or hyphens' });
    await bad('POST', '/v2/agents', create({ skills: { review: REVIEW } }), { 'steps.narrow.allowed_skills': "translate is not one of the agent's skills (review)" });
    await bad('POST', '/v2/agents', create({ tool_configurations: { invoke_skill: { type: 'client', description: 'x', parameters: { type: 'object' } } } }), { 'tool_configurations.invoke_skill': 'invoke_skill is the built-in tool that loads skills: name this tool configuration otherwise' });
    await bad('POST', '/v2/agents', create({ skills: 'review' }), { skills: 'skills must be an object' });
    expect((await app.call('GET', '/v2/agents/bad')).status).toBe(404);
    await bad('PATCH', '/v2/agents/coach', { skills: { translate: null } }, { 'steps.narrow.allowed_skills': "translate is not one of the agent's skills (review)" });
    await bad('PATCH', '/v2/agents/coach', { steps: { main: { allowed_skills: ['cook'] } } }, { 'steps.main.allowed_skills': "cook is not one of the agent's skills (review, translate)" });
    await bad('PATCH', '/v2/agents/coach', { skills: { review: { content: 'only content' } } }, { 'skills.review.description': 'is required' });
    await bad('PUT', '/v2/agents/coach', { ...coach, key: undefined, skills: {} }, { 'steps.narrow.allowed_skills': "translate is not one of the agent's skills (the agent has none)" });
    const refused = await app.call('PATCH', '/v2/agents/coach', { skills: { translate: null } });
    expect(referenceErrors('updateAgent', 400, refused.body)).toEqual([]);
    expect((await app.call('GET', '/v2/agents/coach')).body.skills).toEqual({ review: REVIEW, translate: TRANSLATE });
  });

  it('PATCH merges by skill: a value replaces that skill, null deletes it, skills: null clears them; loaded skills keep their content', async () => {
    await app.call('POST', '/v2/agents', { ...coach, key: 'editor' });
    await app.call('POST', '/v2/agents/editor/sessions', { key: 'e1' });
    upstream.enqueue({ content: 'ok' });
    await input('e1', { messages: [{ type: 'skill', skill_name: 'review' }] }, undefined, '/v2/agents/editor/sessions');
    const changed = { ...REVIEW, content: 'REVIEW-V2' };
    const patched = await app.call('PATCH', '/v2/agents/editor', { skills: { review: changed, translate: null }, steps: { narrow: { allowed_skills: null } } });
    expect(patched.status).toBe(200);
    expect(referenceErrors('updateAgent', 200, patched.body)).toEqual([]);
    expect(patched.body.skills).toEqual({ review: changed });
    expect(patched.body.steps.narrow.allowed_skills).toBeUndefined();
    // The earlier skill_load keeps the content loaded then; the next load gets the new one.
    upstream.enqueue({ content: 'ok' });
    const again = await input('e1', { messages: [{ type: 'skill', skill_name: 'review' }] }, undefined, '/v2/agents/editor/sessions');
    expect(again.body.events[1].content).toBe('REVIEW-V2');
    const loads = (await app.call('GET', '/v2/agents/editor/sessions/e1/events')).body.events.filter((e: Json) => e.type === 'skill_load');
    expect(loads.map((e: Json) => e.content)).toEqual([REVIEW.content, 'REVIEW-V2']);
    // skills: null clears them all (once no step names one): no list, no tool.
    const cleared = await app.call('PATCH', '/v2/agents/editor', { skills: null, steps: { quiet: { allowed_skills: null } } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.skills).toBeUndefined();
    upstream.enqueue({ content: 'plain' });
    await app.call('POST', '/v2/agents/editor/sessions/e1/events', { messages: [{ type: 'text', content: 'hi' }] });
    expect(lastChat().messages[0].content).toBe('You coach programmers.');
    expect((lastChat().tools ?? []).map((t: Json) => t.function.name)).not.toContain('invoke_skill');
    // PUT replaces the whole configuration, skills included.
    const replaced = await app.call('PUT', '/v2/agents/editor', { ...coach, key: undefined, skills: { review: REVIEW, translate: TRANSLATE } });
    expect(replaced.status).toBe(200);
    expect(referenceErrors('replaceAgent', 200, replaced.body)).toEqual([]);
    expect(Object.keys(replaced.body.skills)).toEqual(['review', 'translate']);
  });

  it('through an alias as through the agent; an end user loads a skill but never sees its content; an agent user cannot change skills', async () => {
    await app.call('POST', '/v2/agent_aliases', { key: 'desk', name: 'Desk', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'coach' } }] } });
    await app.call('POST', '/v2/agent_aliases/desk/sessions', { key: 'via-alias' });
    upstream.enqueue({ content: 'Reviewed via alias.' });
    const aliased = await input('via-alias', { messages: [{ type: 'skill', skill_name: 'review' }, { type: 'text', content: 'check this' }] }, undefined, '/v2/agent_aliases/desk/sessions');
    expect(aliased.status).toBe(201);
    expect(aliased.body.events.map((e: Json) => e.type)).toEqual(['input_message', 'skill_load', 'agent_output']);
    const unknown = await input('via-alias', { messages: [{ type: 'skill', skill_name: 'cook' }] }, undefined, '/v2/agent_aliases/desk/sessions');
    expect(unknown.status).toBe(400);

    const client = await createClient(app, 'shop', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'coach', role: 'agent_user' }] });
    const enduser = asBearer(await endUserTokenFor(app, client, 'ada'));
    await app.call('POST', '/v2/agent_aliases/desk/end_user_sessions', { key: 'eu' }, enduser);
    upstream.enqueue({ content: 'Done for you.' });
    const mine = await input('eu', { messages: [{ type: 'skill', skill_name: 'translate' }, { type: 'text', content: 'Hallo' }] }, enduser, '/v2/agent_aliases/desk/end_user_sessions');
    expect(mine.status).toBe(201);
    expect(mine.body.events.map((e: Json) => e.type)).toEqual(['input_message', 'agent_output']);
    expect(JSON.stringify(mine.body)).not.toContain('TRANSLATE-CONTENT');
    expect(JSON.stringify((await app.call('GET', '/v2/agent_aliases/desk/end_user_sessions/eu/events', undefined, enduser)).body)).not.toContain('TRANSLATE-CONTENT');
    expect(lastChat().messages.at(-1)).toEqual({ role: 'user', content: TRANSLATE.content });
    const badPart = await input('eu', { messages: [{ type: 'skill', skill_name: 'cook' }] }, enduser, '/v2/agent_aliases/desk/end_user_sessions');
    expect(badPart.status).toBe(400);

    const user = asKey(await createUser(app, 'learner', { agent_roles: [{ agent_key: 'coach', role: 'agent_user' }] }));
    expect((await app.call('PATCH', '/v2/agents/coach', { skills: { review: null } }, user)).status).toBe(403);
    await app.call('POST', '/v2/agents/coach/sessions', { key: 'learner-1' }, user);
    upstream.enqueue({ content: 'ok' });
    expect((await input('learner-1', { messages: [{ type: 'skill', skill_name: 'review' }] }, user)).status).toBe(201);
    expect((await app.call('GET', '/v2/agents/coach')).body.skills).toEqual({ review: REVIEW, translate: TRANSLATE });
  });
});
