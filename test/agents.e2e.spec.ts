import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/** Agents: create (with the deprecated inline first step), read, merge-patch with nulls, replace, list, delete. */
describe('agents', () => {
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

  const support = {
    key: 'support',
    name: 'Support agent',
    description: 'Answers from the docs',
    model: { name: 'agent-model', parameters: { temperature: 0.2 } },
    tool_configurations: { docs: { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'docs' }] } } } },
    first_step_name: 'triage',
    steps: {
      triage: { instructions: [{ type: 'inline', template: 'Triage ${session.metadata.tier}' }], next_steps: [{ condition: "get('$.output.text') == 'sales'", step_name: 'sales' }] },
      sales: { instructions: [{ type: 'inline', template_type: 'text', template: 'Sell' }], allowed_tools: [] },
    },
    metadata: { team: 'support' },
  };

  it('creates an agent with defaults filled and shows it as the reference does', async () => {
    const res = await app.call('POST', '/v2/agents', support);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      key: 'support',
      name: 'Support agent',
      enabled: true,
      first_step_name: 'triage',
      first_step: { name: 'triage', output_parser: { type: 'default' }, reminders: [], next_steps: [{ step_name: 'sales' }] },
      steps: { sales: { output_parser: { type: 'default' }, allowed_tools: [] } },
      metadata: { team: 'support' },
      created_at: expect.any(String),
    });
    expect((await app.call('GET', '/v2/agents/support')).body).toEqual(res.body);
    // A taken key is a 400 on the key, as the reference lists for createAgent (no 409).
    const again = await app.call('POST', '/v2/agents', support);
    expect(again.status).toBe(400);
    expect(again.body.field_errors).toEqual({ key: 'already taken' });
  });

  it('takes the deprecated inline first_step and generates a key from the name', async () => {
    const res = await app.call('POST', '/v2/agents', { name: 'Legacy Bot!', model: { name: 'agent-model' }, tool_configurations: {}, first_step: { type: 'conversational', instructions: [] } });
    expect(res.status).toBe(201);
    expect(res.body.key).toMatch(/^legacy_bot_[0-9a-f]{8}$/);
    expect(res.body).toMatchObject({ first_step_name: 'first_step', steps: { first_step: { instructions: [] } } });
  });

  it('refuses configurations that refer to nothing, and changes nothing', async () => {
    const bad = async (body: object, field: string) => {
      const res = await app.call('POST', '/v2/agents', { ...support, key: 'bad', ...body });
      expect(res.status).toBe(400);
      expect(res.body.field_errors ?? {}).toHaveProperty([field]);
      expect(res.body.messages[0]).toContain(field);
      expect(typeof res.body.request_id).toBe('string');
    };
    await bad({ model: { name: 'nope' } }, 'model.name');
    await bad({ model: undefined }, 'model');
    await bad({ first_step_name: 'missing' }, 'first_step_name');
    await bad({ steps: { triage: { instructions: [], next_steps: [{ step_name: 'ghost' }] } } }, 'steps.triage.next_steps[0].step_name');
    await bad({ steps: { triage: { instructions: [], allowed_tools: ['web'] } } }, 'steps.triage.allowed_tools');
    await bad({ tool_configurations: { web: { type: 'dynamic_vectara' } } }, 'tool_configurations.web.tool_id');
    await bad({ tool_configurations: { web: { type: 'document_conversion' } } }, 'tool_configurations.web.type');
    await bad({ steps: { triage: { instructions: [{ type: 'inline' }] } } }, 'steps.triage.instructions[0].template');
    await bad({ steps: { triage: { instructions: [{ type: 'inline', template: '#if($x' }] } } }, 'steps.triage.instructions[0].template');
    await bad({ steps: { triage: { instructions: [{ type: 'inline', template: 'x'.repeat(50_001) }] } } }, 'steps.triage.instructions[0].template');
    await bad({ steps: { triage: { instructions: [], reminders: [{ type: 'templated', template: '#foreach($i in [1..$n])x#end', hooks: ['tool_output'] }] } } }, 'steps.triage.reminders[0].template');
    await bad({ steps: { ...support.steps, triage: { instructions: [], next_steps: [{ condition: 'get(', step_name: 'sales' }] } } }, 'steps.triage.next_steps[0].condition');
    expect((await app.call('GET', '/v2/agents/bad')).status).toBe(404);
    const unknownField = await app.call('POST', '/v2/agents', { ...support, key: 'bad', abilities: {} });
    expect(unknownField.status).toBe(400);
  });

  it('says which field is missing: a required field, and an inline instruction without its template (create, PATCH and PUT)', async () => {
    const missing = await app.call('POST', '/v2/agents', { ...support, key: 'nameless', name: undefined });
    expect([missing.status, missing.body.field_errors, missing.body.messages]).toEqual([400, { name: 'name is required' }, ['Invalid name: name is required']]);
    const field = 'steps.triage.instructions[0].template';
    const untemplated = { ...support, key: 'untemplated', steps: { ...support.steps, triage: { instructions: [{ type: 'inline' }] } } };
    const created = await app.call('POST', '/v2/agents', untemplated);
    expect([created.status, created.body.field_errors, created.body.messages]).toEqual([400, { [field]: 'is required (an inline instruction holds its template text)' }, [`${field} is required (an inline instruction holds its template text)`]]);
    expect((await app.call('GET', '/v2/agents/untemplated')).status).toBe(404);
    expect((await app.call('POST', '/v2/agents', { ...untemplated, first_step_name: undefined, steps: undefined, first_step: { name: 'triage', instructions: [{ type: 'inline', template_type: 'text' }] } })).body.field_errors).toEqual({ [field]: 'is required (an inline instruction holds its template text)' });
    await app.call('POST', '/v2/agents', { ...support, key: 'patched' });
    const patched = await app.call('PATCH', '/v2/agents/patched', { steps: { triage: { instructions: [{ type: 'inline' }] } } });
    expect([patched.status, patched.body.field_errors]).toEqual([400, { [field]: 'is required (an inline instruction holds its template text)' }]);
    const replaced = await app.call('PUT', '/v2/agents/patched', untemplated);
    expect([replaced.status, replaced.body.field_errors]).toEqual([400, { [field]: 'is required (an inline instruction holds its template text)' }]);
    const reminder = await app.call('PATCH', '/v2/agents/patched', { steps: { triage: { reminders: [{ type: 'templated', hooks: ['tool_output'] }] } } });
    expect(reminder.body.field_errors).toEqual({ 'steps.triage.reminders[0].template': 'is required (a templated reminder holds its template text)' });
    expect((await app.call('GET', '/v2/agents/patched')).body.steps.triage.instructions).toEqual(support.steps.triage.instructions);
    await app.call('DELETE', '/v2/agents/patched');
  });

  it('creates an agent without tools when tool_configurations is omitted', async () => {
    const { tool_configurations: _tools, ...toolless } = support;
    const res = await app.call('POST', '/v2/agents', { ...toolless, key: 'toolless', steps: { triage: { instructions: [{ type: 'inline', template: 'Hi' }] } }, first_step_name: 'triage' });
    expect(res.status).toBe(201);
    expect(res.body.tool_configurations).toEqual({});
    const put = await app.call('PUT', '/v2/agents/toolless', { name: 'Toolless', model: { name: 'agent-model' }, first_step_name: 'only', steps: { only: { instructions: [] } } });
    expect([put.status, put.body.tool_configurations]).toEqual([200, {}]);
    await app.call('DELETE', '/v2/agents/toolless');
  });

  it('merges a PATCH: omitted fields kept, null clears, steps and tools merge by key', async () => {
    const res = await app.call('PATCH', '/v2/agents/support', {
      description: null,
      metadata: { team: 'sales' },
      enabled: false,
      steps: { sales: { allowed_tools: null, reentry_step: 'triage' } },
      tool_configurations: { helper: { type: 'client', description: 'Ask the caller' } },
    });
    expect(res.status).toBe(200);
    expect(res.body.description).toBeUndefined();
    expect(res.body).toMatchObject({ name: 'Support agent', enabled: false, metadata: { team: 'sales' }, steps: { sales: { reentry_step: 'triage', instructions: [{ template: 'Sell' }] } } });
    expect(res.body.steps.sales.allowed_tools).toBeUndefined();
    expect(Object.keys(res.body.tool_configurations).sort()).toEqual(['docs', 'helper']);
    const removed = await app.call('PATCH', '/v2/agents/support', { tool_configurations: { helper: null }, enabled: null });
    expect(Object.keys(removed.body.tool_configurations)).toEqual(['docs']);
    expect(removed.body.enabled).toBe(true);
    // A patch that breaks a reference is refused whole.
    const broken = await app.call('PATCH', '/v2/agents/support', { steps: { sales: null }, name: 'Renamed' });
    expect(broken.status).toBe(400);
    expect((await app.call('GET', '/v2/agents/support')).body.name).toBe('Support agent');
  });

  it('replaces with PUT, lists with filters and paging, deletes', async () => {
    const put = await app.call('PUT', '/v2/agents/support', { name: 'Support v2', model: { name: 'agent-model' }, tool_configurations: {}, first_step_name: 'only', steps: { only: { instructions: [] } } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ key: 'support', name: 'Support v2', metadata: {}, steps: { only: {} } });
    expect(Object.keys(put.body.steps)).toEqual(['only']);
    const list = await app.call('GET', '/v2/agents?filter=^Support&limit=1');
    expect(list.body.agents.map((a: { key: string }) => a.key)).toEqual(['support']);
    expect((await app.call('GET', '/v2/agents?enabled=false')).body.agents).toEqual([]);
    expect((await app.call('DELETE', '/v2/agents/support')).status).toBe(204);
    expect((await app.call('GET', '/v2/agents/support')).status).toBe(404);
    expect((await app.call('DELETE', '/v2/agents/support')).status).toBe(404);
  });
});
