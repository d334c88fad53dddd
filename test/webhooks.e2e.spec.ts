import { Webhook } from 'standardwebhooks';
import { ScriptedOpenAIServer } from '@lib/testing';
import { createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * Issue 43, part 4: webhooks (docs/webhooks.md). A receiver on 127.0.0.1 (allowed by OUTBOUND_WEBHOOKS_ALLOWED_HOSTS)
 * records what the service sends; signatures are checked with the `standardwebhooks` package, as a receiver would.
 * Retries are fast here (WEBHOOK_RETRY_BASE_MS 200 ms) and give up after 4 s.
 */
describe('webhooks', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let receiver: WebhookReceiver;
  let agentAdmin: string;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.fallback = { content: 'Noted.' };
    receiver = await WebhookReceiver.start();
    app = await startTestApp({ env: { OUTBOUND_WEBHOOKS_ALLOWED_HOSTS: '127.0.0.1', WORKER_POLL_MS: '200', WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_GIVE_UP_AFTER_MS: '4000' } });
    await registerScripted(app, upstream, 'm');
    for (const key of ['desk', 'other']) expect((await app.call('POST', '/v2/agents', { key, name: key, model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
    agentAdmin = await createUser(app, 'agentadmin', { api_roles: ['agent_administrator'] });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await receiver?.close();
  });

  const create = (path: string, body: Record<string, unknown> = {}) => app.call('POST', '/v2/webhooks', { url: `${receiver.url}${path}`, event_types: ['session.turn_completed'], description: path, ...body });
  let sessions = 0;
  const turn = async (agent = 'desk') => {
    const key = `s${++sessions}`;
    expect((await app.call('POST', `/v2/agents/${agent}/sessions`, { key })).status).toBe(201);
    const sent = await app.call('POST', `/v2/agents/${agent}/sessions/${key}/events`, { messages: [{ type: 'text', content: 'hello' }] });
    expect(sent.status).toBe(201);
    return key;
  };
  const deliveries = async (id: string) => (await app.call('GET', `/v2/webhooks/${id}/deliveries`)).body.deliveries as any[];

  it('creates a webhook with its secret shown once, lists, reads it masked, changes and deletes it; the secret is in no event and no log line', async () => {
    const created = await create('/crud', { agent_keys: ['desk'] });
    expect(created.status).toBe(201);
    const secret: string = created.body.secret;
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^whk_[0-9a-f]{32}$/), url: `${receiver.url}/crud`, event_types: ['session.turn_completed'], agent_keys: ['desk'], enabled: true });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64').length;
    expect(bytes >= 24 && bytes <= 32).toBe(true);
    const id = created.body.id as string;

    const read = await app.call('GET', `/v2/webhooks/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.secret).toBe('whsec_****');
    const patched = await app.call('PATCH', `/v2/webhooks/${id}`, { description: 'ops desk', event_types: ['session.turn_completed', 'pipeline_run.failed'], agent_keys: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ description: 'ops desk', event_types: ['session.turn_completed', 'pipeline_run.failed'], secret: 'whsec_****' });
    expect(patched.body.agent_keys).toBeUndefined();

    const others = [(await create('/crud-2')).body.id, (await create('/crud-3')).body.id];
    const first = await app.call('GET', '/v2/webhooks?limit=2');
    expect(first.body.webhooks).toHaveLength(2);
    const second = await app.call('GET', `/v2/webhooks?limit=2&page_key=${encodeURIComponent(first.body.metadata.page_key)}`);
    const listed = [...first.body.webhooks, ...second.body.webhooks].map((w: { id: string }) => w.id);
    expect(listed).toEqual(expect.arrayContaining([id, ...others]));
    expect(JSON.stringify([first.body, second.body])).not.toContain(secret.slice(6));

    expect((await app.call('DELETE', `/v2/webhooks/${id}`)).status).toBe(204);
    expect((await app.call('GET', `/v2/webhooks/${id}`)).status).toBe(404);
    expect((await app.call('PATCH', `/v2/webhooks/${id}`, { description: 'x' })).status).toBe(404);
    for (const other of others) expect((await app.call('DELETE', `/v2/webhooks/${other}`)).status).toBe(204);

    const events = await app.call('GET', '/v2/events?category=webhook&limit=1000');
    expect(events.body.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['WebhookCreated', 'WebhookUpdated', 'WebhookDeleted']));
    const everything = JSON.stringify(events.body) + app.logLines.join('\n');
    expect(everything).not.toContain(secret.slice(6));
  });

  it('refuses bad input with a field error and stores nothing: unknown event type, a non-http URL, an address the outbound policy refuses, unknown fields', async () => {
    const before = (await app.call('GET', '/v2/webhooks?limit=100')).body.webhooks.length;
    const unknown = await create('/bad', { event_types: ['session.turn_completed', 'session.exploded'] });
    expect(unknown.status).toBe(400);
    expect(Object.keys(unknown.body.field_errors)).toEqual(['event_types']);
    expect(unknown.body.field_errors.event_types).toContain('session.turn_failed');
    const ftp = await app.call('POST', '/v2/webhooks', { url: 'ftp://files.example/in', event_types: ['session.turn_completed'] });
    expect([ftp.status, Object.keys(ftp.body.field_errors ?? {})]).toEqual([400, ['url']]);
    // The cloud metadata address (link-local) and a private network: refused unless an operator allows them.
    for (const url of ['http://169.254.169.254/latest', 'http://10.1.2.3/hook']) {
      const refused = await app.call('POST', '/v2/webhooks', { url, event_types: ['session.turn_completed'] });
      expect(refused.status).toBe(400);
      expect(refused.body.field_errors.url).toContain('OUTBOUND_WEBHOOKS_ALLOWED_HOSTS');
    }
    expect((await app.call('POST', '/v2/webhooks', { url: `${receiver.url}/x`, event_types: ['session.turn_completed'], secret: 'mine' })).status).toBe(400);
    expect((await app.call('POST', '/v2/webhooks', { url: `${receiver.url}/x`, event_types: [] })).status).toBe(400);
    const badAgent = await create('/bad', { agent_keys: ['not a key'] });
    expect([badAgent.status, Object.keys(badAgent.body.field_errors ?? {})]).toEqual([400, ['agent_keys']]);
    expect((await app.call('GET', '/v2/webhooks?limit=100')).body.webhooks.length).toBe(before);
  });

  it('is for administrators only: an agent administrator and a viewer get 403 on every route', async () => {
    const id = (await create('/roles')).body.id;
    const viewer = await createUser(app, 'viewer', { api_roles: ['viewer'] });
    for (const key of [agentAdmin, viewer]) {
      const as = { 'x-api-key': key };
      expect((await app.call('POST', '/v2/webhooks', { url: `${receiver.url}/x`, event_types: ['session.turn_completed'] }, as)).status).toBe(403);
      expect((await app.call('GET', '/v2/webhooks', undefined, as)).status).toBe(403);
      expect((await app.call('GET', `/v2/webhooks/${id}`, undefined, as)).status).toBe(403);
      expect((await app.call('PATCH', `/v2/webhooks/${id}`, { enabled: false }, as)).status).toBe(403);
      expect((await app.call('DELETE', `/v2/webhooks/${id}`, undefined, as)).status).toBe(403);
      expect((await app.call('GET', `/v2/webhooks/${id}/deliveries`, undefined, as)).status).toBe(403);
    }
    const admin = await createUser(app, 'admin', { api_roles: ['administrator'] });
    expect((await app.call('GET', `/v2/webhooks/${id}`, undefined, { 'x-api-key': admin })).status).toBe(200);
    expect((await app.call('GET', `/v2/webhooks/${id}`)).body.enabled).toBe(true);
    await app.call('DELETE', `/v2/webhooks/${id}`);
  });

  it('tells a receiver that a turn completed, signed per Standard Webhooks, and only for the agents it listed', async () => {
    const desk = await create('/desk', { agent_keys: ['desk'] });
    const other = await create('/other-only', { agent_keys: ['other'] });
    const session = await turn('desk');
    const [got] = await until('the delivery', () => (receiver.at('/desk').length ? receiver.at('/desk') : undefined), 20_000);
    const verified = new Webhook(desk.body.secret).verify(got.body, got.headers) as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(verified).toEqual({ type: 'session.turn_completed', timestamp: expect.any(String), data: { agent_key: 'desk', session_key: session, turn_id: expect.stringMatching(/^turn_/), outcome: 'answered' } });
    expect(got.headers['webhook-id']).toMatch(/^msg_/);
    expect(got.headers['content-type']).toBe('application/json');
    // Signed with another webhook's secret, the same body fails.
    expect(() => new Webhook(other.body.secret).verify(got.body, got.headers)).toThrow();
    const [row] = await until('the delivery recorded', async () => ((await deliveries(desk.body.id))[0]?.status === 'delivered' ? await deliveries(desk.body.id) : undefined), 10_000);
    expect(row).toMatchObject({ webhook_message_id: got.headers['webhook-id'], event_type: 'session.turn_completed', status: 'delivered', attempts: 1, last_response_code: 200, next_retry_at: null });
    expect(receiver.at('/other-only')).toEqual([]);
    expect(await deliveries(other.body.id)).toEqual([]);
    for (const id of [desk.body.id, other.body.id]) await app.call('DELETE', `/v2/webhooks/${id}`);
  });

  it('tells that a tool call waits for approval, with what an approver needs and not the arguments', async () => {
    const tool = { type: 'web_get', description: 'Pays an invoice', requires_approval: true };
    expect((await app.call('POST', '/v2/agents', { key: 'gate', name: 'gate', model: { name: 'm' }, tool_configurations: { pay: tool }, first_step_name: 'main', steps: { main: { instructions: [], allowed_tools: ['pay'] } } })).status).toBe(201);
    const hook = await create('/approvals', { event_types: ['session.approval_requested'], agent_keys: ['gate'] });
    expect(hook.status).toBe(201);
    expect((await app.call('POST', '/v2/agents/gate/sessions', { key: 'g1' })).status).toBe(201);
    upstream.enqueue({ toolCalls: [{ id: 'call_g1', name: 'pay', arguments: JSON.stringify({ url: 'http://127.0.0.1:9/invoice/secret-path' }) }] });
    const paused = await app.call('POST', '/v2/agents/gate/sessions/g1/events', { messages: [{ type: 'text', content: 'pay it' }] });
    expect(paused.status).toBe(201);
    const request = paused.body.events.find((e: { type: string }) => e.type === 'tool_approval_requested');
    expect(request).toBeDefined();
    const [got] = await until('the delivery', () => (receiver.at('/approvals').length ? receiver.at('/approvals') : undefined), 20_000);
    const verified = new Webhook(hook.body.secret).verify(got.body, got.headers) as { type: string; data: Record<string, unknown> };
    expect(verified.type).toBe('session.approval_requested');
    expect(verified.data).toMatchObject({ agent_key: 'gate', session_key: 'g1', event_id: request.id, tool_call_id: 'call_g1', tool_name: 'web_get', tool_configuration_name: 'pay', expires_at: request.expires_at });
    expect(got.body).not.toContain('secret-path');
    await app.call('DELETE', `/v2/webhooks/${hook.body.id}`);
  });

  it('retries a failing receiver (500, then 200) with the same webhook-id and shows the attempts; a redelivery sends the same id again', async () => {
    receiver.reply('/flaky', 500);
    const hook = await create('/flaky', { agent_keys: ['desk'] });
    const session = await turn();
    const got = await until('two attempts', () => (receiver.at('/flaky').length >= 2 ? receiver.at('/flaky') : undefined), 20_000);
    expect(got[1].headers['webhook-id']).toBe(got[0].headers['webhook-id']);
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(150);
    for (const r of got) expect((new Webhook(hook.body.secret).verify(r.body, r.headers) as { data: { session_key: string } }).data.session_key).toBe(session);
    const [row] = await until('delivered', async () => ((await deliveries(hook.body.id))[0]?.status === 'delivered' ? await deliveries(hook.body.id) : undefined), 10_000);
    expect(row).toMatchObject({ status: 'delivered', attempts: 2, last_response_code: 200 });
    // The turns that ended before the webhook was created are not sent to it.
    expect(await deliveries(hook.body.id)).toHaveLength(1);

    const again = await app.call('POST', `/v2/webhooks/${hook.body.id}/deliveries/${row.id}/redeliver`);
    expect(again.status).toBe(202);
    const third = await until('the redelivery', () => (receiver.at('/flaky').length >= 3 ? receiver.at('/flaky')[2] : undefined), 20_000);
    expect(third.headers['webhook-id']).toBe(got[0].headers['webhook-id']);
    await until('recorded', async () => ((await deliveries(hook.body.id))[0]?.attempts === 3 ? true : undefined), 10_000);
    expect((await app.call('POST', `/v2/webhooks/${hook.body.id}/deliveries/whd_nope/redeliver`)).status).toBe(404);
    await app.call('DELETE', `/v2/webhooks/${hook.body.id}`);
  });

  it('tells that a pipeline run ended, naming the pipeline from the run’s first event, whatever agents it lists', async () => {
    const hook = await create('/runs', { event_types: ['pipeline_run.completed', 'pipeline_run.failed'], agent_keys: ['other'] });
    const source = { type: 'web', pages_source: { type: 'sitemap', sitemap_urls: [`${receiver.url}/sitemap.xml`] } };
    expect((await app.call('POST', '/v2/pipelines', { key: 'site', name: 'Site', source, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'desk' } })).status).toBe(201);
    const run = await app.call('POST', '/v2/pipelines/site/trigger');
    expect(run.status).toBeLessThan(300);
    const [got] = await until('the run’s webhook', () => (receiver.at('/runs').length ? receiver.at('/runs') : undefined), 30_000);
    const body = new Webhook(hook.body.secret).verify(got.body, got.headers) as { type: string; data: Record<string, unknown> };
    expect(['pipeline_run.completed', 'pipeline_run.failed']).toContain(body.type);
    expect(body.data).toMatchObject({ pipeline_key: 'site', run_id: run.body.id, agent_key: 'desk', trigger_type: 'manual', status: body.type.split('.')[1] });
    await app.call('DELETE', `/v2/webhooks/${hook.body.id}`);
  });

  it('tells of a failed turn with its error, and disables a webhook whose deliveries failed for the whole retry window', async () => {
    const hook = await create('/down', { event_types: ['session.turn_failed'], agent_keys: ['desk'] });
    // 200 ms, then 1.2 s (±20 %); the third wait (7.2 s) would pass the 4 s window: three attempts, then it gives up.
    receiver.reply('/down', 503, 503, 503);
    upstream.enqueue({ error: { status: 400, message: 'the model refused' } });
    await turn();
    const disabled = await until('the webhook disabled', async () => ((await app.call('GET', `/v2/webhooks/${hook.body.id}`)).body.enabled === false ? (await app.call('GET', `/v2/webhooks/${hook.body.id}`)).body : undefined), 20_000);
    expect(disabled.disabled_reason).toMatch(/every delivery failed/);
    const got = receiver.at('/down');
    expect(got).toHaveLength(3);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect((new Webhook(hook.body.secret).verify(got[0].body, got[0].headers) as { type: string; data: { error: string } }).data.error).toContain('rejected the request');
    const [row] = await deliveries(hook.body.id);
    expect(row).toMatchObject({ status: 'failed', last_response_code: 503, next_retry_at: null });
    const events = (await app.call('GET', '/v2/events?category=webhook&limit=1000')).body.events as { type: string; data: { webhookId: string } }[];
    expect(events.filter((e) => e.data.webhookId === hook.body.id).map((e) => e.type)).toContain('WebhookDisabled');

    // Enabled again, a redelivery goes through.
    expect((await app.call('PATCH', `/v2/webhooks/${hook.body.id}`, { enabled: true })).body).toMatchObject({ enabled: true });
    expect((await app.call('POST', `/v2/webhooks/${hook.body.id}/deliveries/${row.id}/redeliver`)).status).toBe(202);
    await until('delivered after enabling', async () => ((await deliveries(hook.body.id))[0]?.status === 'delivered' ? true : undefined), 20_000);
    await app.call('DELETE', `/v2/webhooks/${hook.body.id}`);
  });
});
