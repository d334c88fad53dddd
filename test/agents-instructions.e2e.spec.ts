import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/** Instructions: versions that never change, what agents may refer to, and what an agent's use keeps. */
describe('instructions', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'agent-model');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const create = async (body: Record<string, unknown>) => {
    const res = await app.call('POST', '/v2/instructions', body);
    if (res.status !== 201) throw new Error(`create instruction → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; version: number };
  };
  const agentUsing = (key: string, ref: Record<string, unknown>) =>
    app.call('POST', '/v2/agents', { key, name: key, model: { name: 'agent-model' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'reference', ...ref }] } } });

  it('creates version 1 with the reference defaults and reads it back', async () => {
    const res = await app.call('POST', '/v2/instructions', { type: 'initial', name: 'Tone', template: 'You serve ${session.metadata.tier} customers.' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^ins_[0-9a-zA-Z_-]+$/),
      type: 'initial',
      name: 'Tone',
      description: '',
      template_type: 'velocity',
      template: 'You serve ${session.metadata.tier} customers.',
      version: 1,
      metadata: {},
      enabled: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await app.call('GET', `/v2/instructions/${res.body.id}`)).body).toEqual(res.body);
    expect((await app.call('GET', '/v2/instructions/ins_nothing')).status).toBe(404);
  });

  it('an update is version 2; version 1 is still readable and unchanged', async () => {
    const { id } = await create({ name: 'Greeting', description: 'says hi', template: 'Hi', metadata: { owner: 'cs' } });
    const v2 = await app.call('PATCH', `/v2/instructions/${id}`, { type: 'initial', template: 'Hello' });
    expect(v2.status).toBe(200);
    expect(v2.body).toMatchObject({ id, version: 2, name: 'Greeting', description: 'says hi', template: 'Hello', metadata: { owner: 'cs' } });
    expect((await app.call('GET', `/v2/instructions/${id}`)).body).toMatchObject({ version: 2, template: 'Hello' });
    const v1 = await app.call('GET', `/v2/instructions/${id}?version=1`);
    expect(v1.body).toMatchObject({ version: 1, template: 'Hi', created_at: v2.body.created_at });
    expect((await app.call('GET', `/v2/instructions/${id}?version=3`)).status).toBe(404);
    expect((await app.call('GET', `/v2/instructions/${id}?version=zero`)).status).toBe(400);
    // The same change again makes no version 3.
    expect((await app.call('PATCH', `/v2/instructions/${id}`, { template: 'Hello' })).body.version).toBe(2);
  });

  it('lists the latest version of each instruction, in pages, filtered by name, description and enabled', async () => {
    for (const name of ['Listed A', 'Listed B', 'Listed C']) await create({ name, template: 't', description: 'listing test' });
    const { id } = await create({ name: 'Listed D', template: 't', enabled: false });
    await app.call('PATCH', `/v2/instructions/${id}`, { template: 't2' });
    const names = (body: { instructions: { name: string }[] }) => body.instructions.map((i) => i.name);
    const first = await app.call('GET', '/v2/instructions?filter=^Listed&limit=2');
    expect(first.status).toBe(200);
    expect(first.body.instructions).toHaveLength(2);
    const second = await app.call('GET', `/v2/instructions?filter=^Listed&limit=2&page_key=${first.body.metadata.page_key}`);
    const all: { name: string; version: number }[] = [...first.body.instructions, ...second.body.instructions];
    expect(all.map((i) => i.name).sort()).toEqual(['Listed A', 'Listed B', 'Listed C', 'Listed D']);
    expect(all.find((i) => i.name === 'Listed D')?.version).toBe(2);
    expect(names((await app.call('GET', '/v2/instructions?filter=listing%20test&limit=100')).body).sort()).toEqual(['Listed A', 'Listed B', 'Listed C']);
    expect(names((await app.call('GET', '/v2/instructions?enabled=false&type=initial')).body)).toEqual(['Listed D']);
    expect((await app.call('GET', '/v2/instructions?type=other')).status).toBe(400);
    expect((await app.call('GET', '/v2/instructions?filter=(')).status).toBe(400);
  });

  it('test renders a velocity template with the context as session metadata and the tools, and text verbatim', async () => {
    const velocity = await create({ name: 'Rendered', template: 'Tier ${session.metadata.tier}; tools: #foreach($t in $tools)${t.name}#if($foreach.hasNext), #end#end' });
    const res = await app.call('POST', `/v2/instructions/${velocity.id}/test`, { context: { tier: 'gold' }, tools: [{ name: 'search', description: 's' }, { name: 'mail', description: 'm' }] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ rendered_instruction: 'Tier gold; tools: search, mail' });
    await app.call('PATCH', `/v2/instructions/${velocity.id}`, { template: 'Now ${session.metadata.tier}' });
    expect((await app.call('POST', `/v2/instructions/${velocity.id}/test?version=1`, { context: { tier: 'gold' } })).body.rendered_instruction).toBe('Tier gold; tools: ');
    expect((await app.call('POST', `/v2/instructions/${velocity.id}/test`, {})).body.rendered_instruction).toBe('Now ${session.metadata.tier}');
    const text = await create({ name: 'Verbatim', template_type: 'text', template: 'Keep ${session.metadata.tier} #if as written' });
    expect((await app.call('POST', `/v2/instructions/${text.id}/test`, { context: { tier: 'gold' } })).body.rendered_instruction).toBe('Keep ${session.metadata.tier} #if as written');
    expect((await app.call('POST', '/v2/instructions/ins_nothing/test', {})).status).toBe(404);
  });

  it('refuses a velocity template that does not compile, on create and on update, naming template', async () => {
    const bad = await app.call('POST', '/v2/instructions', { name: 'Broken', template: 'Hello #if( unclosed' });
    expect(bad.status).toBe(400);
    expect(bad.body.field_errors).toHaveProperty(['template']);
    expect(bad.body.messages[0]).toContain('template');
    expect((await app.call('POST', '/v2/instructions', { name: 'x'.repeat(51), template: 't' })).body.field_errors).toHaveProperty(['name']);
    expect((await app.call('POST', '/v2/instructions', { name: 'n', template: 't', template_type: 'jinja' })).status).toBe(400);
    // Text is taken as written; making it velocity checks it then.
    const text = await create({ name: 'Was text', template_type: 'text', template: '#set($a = ) as written' });
    const switched = await app.call('PATCH', `/v2/instructions/${text.id}`, { template_type: 'velocity' });
    expect(switched.status).toBe(400);
    expect(switched.body.field_errors).toHaveProperty(['template']);
    expect((await app.call('GET', `/v2/instructions/${text.id}`)).body).toMatchObject({ version: 1, template_type: 'text' });
  });

  it('keeps a version an agent uses and an instruction an agent refers to (409), changing nothing', async () => {
    const { id } = await create({ name: 'Pinned', template: 'one' });
    await app.call('PATCH', `/v2/instructions/${id}`, { template: 'two' });
    expect((await agentUsing('pins_v1', { id, version: 1 })).status).toBe(201);
    const refused = await app.call('DELETE', `/v2/instructions/${id}/versions/1`);
    expect(refused.status).toBe(409);
    expect(refused.body.messages[0]).toContain('pins_v1');
    expect((await app.call('GET', `/v2/instructions/${id}?version=1`)).body.template).toBe('one');
    expect((await app.call('DELETE', `/v2/instructions/${id}`)).status).toBe(409);
    expect((await app.call('GET', `/v2/instructions/${id}`)).status).toBe(200);
    // An agent without a version follows the latest: the latest is kept, an older one may go.
    await app.call('PATCH', `/v2/instructions/${id}`, { template: 'three' });
    expect((await agentUsing('follows_latest', { id })).status).toBe(201);
    expect((await app.call('DELETE', `/v2/instructions/${id}/versions/3`)).status).toBe(409);
    expect((await app.call('DELETE', `/v2/instructions/${id}/versions/2`)).status).toBe(204);
    expect((await app.call('GET', `/v2/instructions/${id}?version=2`)).status).toBe(404);
    expect((await app.call('GET', `/v2/instructions/${id}`)).body).toMatchObject({ version: 3, template: 'three' });
    // Once no agent uses it, it can go.
    await app.call('DELETE', '/v2/agents/pins_v1');
    await app.call('DELETE', '/v2/agents/follows_latest');
    expect((await app.call('DELETE', `/v2/instructions/${id}`)).status).toBe(204);
  });

  it('refuses an agent that refers to a missing instruction or version, naming the field', async () => {
    const { id } = await create({ name: 'Referred', template: 'x' });
    const missing = await agentUsing('dangling', { id: 'ins_missing' });
    expect(missing.status).toBe(400);
    expect(missing.body.field_errors).toHaveProperty(['steps.main.instructions[0].id']);
    const noVersion = await agentUsing('dangling', { id, version: 5 });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.field_errors).toEqual({ 'steps.main.instructions[0].version': expect.stringContaining('no version 5') });
    expect((await app.call('GET', '/v2/agents/dangling')).status).toBe(404);
    expect((await agentUsing('dangling', { id, version: 1 })).status).toBe(201);
    await app.call('DELETE', '/v2/agents/dangling');
  });

  it('deletes an unused version, the only version is kept; deletes an unused instruction: 204, then 404', async () => {
    const { id } = await create({ name: 'Doomed', template: 'a' });
    expect((await app.call('DELETE', `/v2/instructions/${id}/versions/1`)).status).toBe(409);
    await app.call('PATCH', `/v2/instructions/${id}`, { template: 'b' });
    expect((await app.call('DELETE', `/v2/instructions/${id}/versions/2`)).status).toBe(204);
    expect((await app.call('GET', `/v2/instructions/${id}`)).body).toMatchObject({ version: 1, template: 'a' });
    expect((await app.call('PATCH', `/v2/instructions/${id}`, { template: 'c' })).body.version).toBe(3);
    expect((await app.call('DELETE', `/v2/instructions/${id}`)).status).toBe(204);
    expect((await app.call('GET', `/v2/instructions/${id}`)).status).toBe(404);
    expect((await app.call('GET', `/v2/instructions/${id}?version=1`)).status).toBe(404);
    expect((await app.call('DELETE', `/v2/instructions/${id}`)).status).toBe(404);
    expect((await app.call('PATCH', `/v2/instructions/${id}`, { template: 'd' })).status).toBe(404);
  });
});
