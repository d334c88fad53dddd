import { ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/** Sessions: the create-session table (each row checks nothing was created), reads, updates, deletes. */
describe('agent sessions', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    const agent = (key: string, extra: object = {}) =>
      app.call('POST', '/v2/agents', { key, name: key, model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Be brief.' }] } }, ...extra });
    expect((await agent('helper')).status).toBe(201);
    expect((await agent('gated', { run_condition: "get('$.session.metadata.tier') == 'gold'" })).status).toBe(201);
    expect((await agent('odd', { run_condition: "get('$.session.metadata.tier')" })).status).toBe(201);
    expect((await agent('off', { enabled: false })).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const count = async (agent: string) => (await app.call('GET', `/v2/agents/${agent}/sessions?limit=100`)).body.sessions?.length ?? -1;

  it('creates a session and shows it as the reference does', async () => {
    const res = await app.call('POST', '/v2/agents/helper/sessions', { key: 's1', name: 'First', metadata: { tier: 'gold', region: 'eu' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ key: 's1', agent_key: 'helper', name: 'First', metadata: { tier: 'gold' }, enabled: true, status: 'unstarted', tti_minutes: 0, created_at: expect.any(String) });
    expect((await app.call('GET', '/v2/agents/helper/sessions/s1')).body).toMatchObject({ key: 's1', name: 'First' });
    const generated = await app.call('POST', '/v2/agents/helper/sessions', {});
    expect(generated.status).toBe(201);
    expect(generated.body.key).toMatch(/^ses_/);
    expect(generated.body.name).toBe(generated.body.key);
  });

  it('answers every row of the create-session table and creates nothing on a refusal', async () => {
    const before = await count('helper');
    const refuse = async (path: string, body: object, status: number, text: RegExp, headers: Record<string, string> = {}) => {
      const res = await app.call('POST', path, body, headers);
      expect(res.status).toBe(status);
      expect(res.body.messages.join(' ')).toMatch(text);
      expect(typeof res.body.request_id).toBe('string');
    };
    await refuse('/v2/agents/helper/sessions', { key: 'bad key!' }, 400, /key/);
    await refuse('/v2/agents/helper/sessions', { key: 'x1', unknown: 1 }, 400, /unknown/);
    await refuse('/v2/agents/off/sessions', { key: 'x1' }, 400, /disabled/);
    const viewer = asKey(await createUser(app, 'viewer1', { agent_roles: [{ agent_key: 'helper', role: 'agent_viewer' }] }));
    await refuse('/v2/agents/helper/sessions', { key: 'x1' }, 403, /./, viewer);
    await refuse('/v2/agents/ghost/sessions', { key: 'x1' }, 404, /ghost/);
    // A taken key or name is a 400 on the field, as the reference lists for createAgentSession (no 409).
    await refuse('/v2/agents/helper/sessions', { key: 's1' }, 400, /key "s1" is already taken/);
    await refuse('/v2/agents/helper/sessions', { key: 'x1', name: 'First' }, 400, /name "First" is already taken/);
    await refuse('/v2/agents/gated/sessions', { key: 'x1', metadata: { tier: 'silver' } }, 409, /run_condition is false/);
    await refuse('/v2/agents/odd/sessions', { key: 'x1', metadata: { tier: 'silver' } }, 422, /not a boolean/);
    expect(await count('helper')).toBe(before);
    for (const agent of ['helper', 'gated', 'odd', 'off']) expect((await app.call('GET', `/v2/agents/${agent}/sessions/x1`)).status).toBe(404);
    expect(await count('gated')).toBe(0);
    // The refusal by run_condition succeeds once the metadata it reads holds.
    expect((await app.call('POST', '/v2/agents/gated/sessions', { key: 'x1', metadata: { tier: 'gold' } })).status).toBe(201);
  });

  it('lists with metadata_filter and paging, updates, masks session secrets, deletes', async () => {
    await app.call('POST', '/v2/agents/helper/sessions', { key: 's2', metadata: { tier: 'silver' }, secrets: { crm_token: 'crm-secret-value-123' } });
    const gold = await app.call('GET', `/v2/agents/helper/sessions?metadata_filter=${encodeURIComponent("doc.tier = 'gold'")}`);
    expect(gold.status).toBe(200);
    expect(gold.body.sessions.map((s: { key: string }) => s.key)).toEqual(['s1']);
    const page = await app.call('GET', '/v2/agents/helper/sessions?limit=1');
    expect(page.body.sessions).toHaveLength(1);
    expect(page.body.metadata.page_key).toBeDefined();
    const s2 = await app.call('GET', '/v2/agents/helper/sessions/s2');
    expect(s2.body.secrets).toEqual({ crm_token: '****' });
    const updated = await app.call('PATCH', '/v2/agents/helper/sessions/s2', { name: 'Second', metadata: { tier: 'gold' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Second', metadata: { tier: 'gold' }, secrets: { crm_token: '****' } });
    expect((await app.call('PATCH', '/v2/agents/helper/sessions/s2', { name: 'First' })).status).toBe(400);
    const events = await app.call('GET', '/v2/events?limit=1000');
    expect(JSON.stringify(events.body)).not.toContain('crm-secret-value-123');
    expect(app.logLines.join('\n')).not.toContain('crm-secret-value-123');
    expect((await app.call('DELETE', '/v2/agents/helper/sessions/s2')).status).toBe(204);
    expect((await app.call('GET', '/v2/agents/helper/sessions/s2')).status).toBe(404);
  });
});

/** tti_minutes: a session idle past it is deleted by the worker's sweep; effective_compaction is snapshotted. */
describe('agent session expiry', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let offsetMs = 0;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { WORKER_POLL_MS: '50' }, clock: { now: () => new Date(Date.now() + offsetMs) } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'brief', name: 'brief', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } }, compaction: { threshold_percent: 60 } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('deletes a session idle past its tti_minutes and keeps the others', async () => {
    const short = await app.call('POST', '/v2/agents/brief/sessions', { key: 'short', tti_minutes: 5 });
    expect(short.body).toMatchObject({ tti_minutes: 5, effective_compaction: { enabled: true, threshold_percent: 60, keep_recent_inputs: 1, tool_event_policy: 'include_outputs' } });
    await app.call('POST', '/v2/agents/brief/sessions', { key: 'forever' });
    await app.call('POST', '/v2/agents/brief/sessions', { key: 'long', tti_minutes: 60 });
    await new Promise((r) => setTimeout(r, 200));
    expect((await app.call('GET', '/v2/agents/brief/sessions/short')).status).toBe(200);
    offsetMs = 6 * 60_000;
    const deadline = Date.now() + 5000;
    while ((await app.call('GET', '/v2/agents/brief/sessions/short')).status !== 404 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await app.call('GET', '/v2/agents/brief/sessions/short')).status).toBe(404);
    expect((await app.call('GET', '/v2/agents/brief/sessions/forever')).status).toBe(200);
    expect((await app.call('GET', '/v2/agents/brief/sessions/long')).status).toBe(200);
    const log = (await app.call('GET', '/v2/events?category=session&type=SessionDeleted&limit=10')).body.events;
    expect(log).toEqual([expect.objectContaining({ metadata: expect.objectContaining({ actor: { type: 'system', id: 'session-expiry' } }) })]);
  });
});
