import { makeServiceAccountKey, ScriptedOpenAIServer } from '@lib/testing';
import { FakePlatforms, slackHeaders } from './support/connector-platforms';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';
import { sleep, until } from './support/wait';

/**
 * Issue 18, connectors (docs/connectors.md): each test plays a platform, signing deliveries as it documents
 * them, and serves its reply API on 127.0.0.1; the agent answers from the scripted model server.
 */

describe('agent connectors', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let platforms: FakePlatforms;
  const SIGNING = 'slack-signing-secret-0123456789';
  const BOT = 'xoxb-1-2-botbotbot';

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = (req) => {
      const users = ((req.body?.messages ?? []) as { role: string; content: unknown }[]).filter((m) => m.role === 'user');
      const last = users[users.length - 1]?.content;
      return { content: `Echo: ${typeof last === 'string' ? last : JSON.stringify(last)}` };
    };
    platforms = await FakePlatforms.start();
    app = await startTestApp({ env: { ...platforms.env, WORKER_POLL_MS: '200', CONNECTOR_RETRY_BASE_MS: '100' } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'helper', name: 'helper', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('PUT', '/v2/agents/helper/secrets', { secrets: { slack_bot_token: BOT } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await platforms?.close();
  });

  const webhook = (path: string, body: string, headers: Record<string, string>) => app.call('POST', path, body, { 'x-api-key': '', 'content-type': 'application/json', ...headers });
  const connectorEvents = async (connectorId?: string) => ((await app.call('GET', '/v2/events?limit=1000&category=connector_message')).body.events as any[]).filter((e) => !connectorId || e.data.connectorId === connectorId).map((e) => e.type);
  const connectorSessions = async (connectorId: string) => ((await app.call('GET', '/v2/agents/helper/sessions?limit=100')).body.sessions as any[]).filter((s) => s.metadata?.connector?.id === connectorId);

  it('refuses a configuration naming a missing secret or lacking a field, naming the field, and stores nothing', async () => {
    const bad = await app.call('POST', '/v2/agents/helper/connectors', { name: 'S', configuration: { type: 'slack', bot_token: { $ref: 'agent.secrets.nope' }, signing_secret: 'x', api_app_id: 'A1' } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.field_errors)).toEqual(['configuration.bot_token']);
    const zoom = await app.call('POST', '/v2/agents/helper/connectors', { name: 'Z', configuration: { type: 'zoom', callback_url: 'ftp://x' } });
    expect(Object.keys(zoom.body.field_errors)).toEqual(['configuration.callback_url']);
    expect((await app.call('POST', '/v2/agents/helper/connectors', { name: 'X', configuration: { type: 'teams' } })).status).toBe(400);
    expect((await app.call('GET', '/v2/agents/helper/connectors')).body.connectors).toEqual([]);
  });

  it('Slack: answers the URL challenge, refuses forged and replayed deliveries, answers a mention in its thread once', async () => {
    const created = await app.call('POST', '/v2/agents/helper/connectors', { name: 'Support', configuration: { type: 'slack', bot_token: { $ref: 'agent.secrets.slack_bot_token' }, signing_secret: SIGNING, api_app_id: 'A1' } });
    expect(created.status).toBe(201);
    const c = created.body;
    expect(c.configuration).toEqual({ type: 'slack', bot_token: { $ref: 'agent.secrets.slack_bot_token' }, signing_secret: '****', api_app_id: 'A1', respond_to_thread_replies: false, hidden_output_types: [], webhook_path: `/v2/agents/helper/connectors/${c.id}/input` });
    expect(JSON.stringify((await app.call('GET', `/v2/agents/helper/connectors/${c.id}`)).body)).not.toContain(SIGNING);
    const path = c.configuration.webhook_path;

    const challenge = JSON.stringify({ type: 'url_verification', token: 'x', challenge: 'ch-123' });
    expect((await webhook(path, challenge, slackHeaders(SIGNING, challenge))).body).toEqual({ challenge: 'ch-123' });

    const mention = (ts: string, text: string, thread?: string) => JSON.stringify({ type: 'event_callback', api_app_id: 'A1', team_id: 'T1', event_id: `Ev${ts}`, event: { type: 'app_mention', user: 'U1', text: `<@UBOT> ${text}`, channel: 'C1', ts, ...(thread ? { thread_ts: thread } : {}) } });
    const first = mention('1700000000.000100', 'hello there');
    expect((await webhook(path, first, slackHeaders('wrong-secret', first))).status).toBe(401);
    expect((await webhook(path, first, slackHeaders(SIGNING, first, Math.floor(Date.now() / 1000) - 600))).status).toBe(401);
    expect((await webhook(path, first, { 'content-type': 'application/json' })).status).toBe(401);
    expect(await connectorEvents(c.id)).toEqual([]);

    expect((await webhook(path, first, slackHeaders(SIGNING, first))).status).toBe(200);
    // Slack retries a delivery it thinks timed out: the same event again.
    expect((await webhook(path, first, { ...slackHeaders(SIGNING, first), 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' })).status).toBe(200);
    const posted = await until('the reply in the thread', () => platforms.callsTo('/api/chat.postMessage')[0]);
    expect(posted.body).toEqual({ channel: 'C1', thread_ts: '1700000000.000100', text: 'Echo: hello there' });
    expect(posted.headers.authorization).toBe(`Bearer ${BOT}`);

    // The next message of the thread finds the same session; a failed post is retried and reported.
    platforms.failNext['/api/chat.postMessage'] = 1;
    const second = mention('1700000000.000200', 'and again', '1700000000.000100');
    expect((await webhook(path, second, slackHeaders(SIGNING, second))).status).toBe(200);
    await until('the second reply', () => (platforms.callsTo('/api/chat.postMessage').length >= 3 ? true : undefined));
    const replies = platforms.callsTo('/api/chat.postMessage').map((x) => x.body);
    expect(replies.slice(1)).toEqual([{ channel: 'C1', thread_ts: '1700000000.000100', text: 'Echo: and again' }, { channel: 'C1', thread_ts: '1700000000.000100', text: 'Echo: and again' }]);
    const sessions = await connectorSessions(c.id);
    expect(sessions).toHaveLength(1);
    const events = (await app.call('GET', `/v2/agents/helper/sessions/${sessions[0].key}/events`)).body.events;
    expect(events.map((e: any) => e.type)).toEqual(['input_message', 'agent_output', 'input_message', 'agent_output']);
    const types = await until('the delivery recorded', async () => {
      const t = await connectorEvents(c.id);
      return t.filter((x) => x === 'ConnectorReplyDelivered').length === 2 ? t : undefined;
    });
    expect(types.filter((x) => x === 'ConnectorMessageReceived')).toHaveLength(2);
    expect(types.filter((x) => x === 'ConnectorReplyFailed')).toHaveLength(1);
    expect((await app.call('GET', `/v2/agents/helper/connectors/${c.id}`)).body.last_webhook_at).toEqual(expect.any(String));
  }, 30_000);

  it('Slack: with respond_to_thread_replies, answers a reply without a mention in a thread it is in, and no other', async () => {
    const c = (await app.call('POST', '/v2/agents/helper/connectors', { name: 'Threads', configuration: { type: 'slack', bot_token: BOT, signing_secret: SIGNING, api_app_id: 'A2', respond_to_thread_replies: true } })).body;
    const path = c.configuration.webhook_path;
    const event = (e: Record<string, unknown>) => JSON.stringify({ type: 'event_callback', api_app_id: 'A2', event_id: `Ev${e.ts}`, event: { user: 'U1', channel: 'C9', ...e } });
    const send = (body: string) => webhook(path, body, slackHeaders(SIGNING, body));
    const before = platforms.callsTo('/api/chat.postMessage').length;
    expect((await send(event({ type: 'message', text: 'not for you', ts: '1.1', thread_ts: '1.0' }))).status).toBe(200);
    expect((await send(event({ type: 'app_mention', text: '<@UBOT> start', ts: '2.0' }))).status).toBe(200);
    await until('the mention answered', () => (platforms.callsTo('/api/chat.postMessage').length > before ? true : undefined));
    expect((await send(event({ type: 'message', text: 'follow up', ts: '2.1', thread_ts: '2.0' }))).status).toBe(200);
    // The bot's own reply comes back as a message event: it is not answered.
    expect((await send(event({ type: 'message', bot_id: 'B1', text: 'Echo: follow up', ts: '2.2', thread_ts: '2.0' }))).status).toBe(200);
    await until('the thread reply answered', () => (platforms.callsTo('/api/chat.postMessage').length > before + 1 ? true : undefined));
    await sleep(500);
    expect(platforms.callsTo('/api/chat.postMessage').slice(before).map((x) => x.body)).toEqual([
      { channel: 'C9', thread_ts: '2.0', text: 'Echo: start' },
      { channel: 'C9', thread_ts: '2.0', text: 'Echo: follow up' },
    ]);
  }, 30_000);

  it('reports a reply the platform never takes: each attempt and the final failure are events', async () => {
    const c = (await app.call('POST', '/v2/agents/helper/connectors', { name: 'Down', configuration: { type: 'zoom', callback_url: `${platforms.url}/zoom/down` } })).body;
    platforms.failNext['/zoom/down'] = 100;
    const body = JSON.stringify({ engagement_id: 'eng-down', message_id: 'm1', message: { text: 'anyone?' } });
    expect((await webhook(c.configuration.webhook_path, body, { 'x-zoom-connector-token': c.configuration.connector_token })).status).toBe(200);
    const failures = await until('the final failure', async () => {
      const events = ((await app.call('GET', '/v2/events?limit=1000&category=connector_message&type=ConnectorReplyFailed')).body.events as any[]).filter((e) => e.data.connectorId === c.id);
      return events.some((e) => e.data.retryAt === null) ? events : undefined;
    });
    expect(failures.map((e) => e.data.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(failures[4].data.error).toContain('500');
    expect(platforms.callsTo('/zoom/down')).toHaveLength(5);
  }, 30_000);

  it('Google Chat: verifies the bearer ID token against the audience URL, replies in the thread through the Chat API', async () => {
    const sa = makeServiceAccountKey({ tokenUri: `${platforms.url}/token`, project: 'chat-project' });
    const created = await app.call('POST', '/v2/agents/helper/connectors', { name: 'Chat', configuration: { type: 'gchat', service_account_key: sa.keyJson } });
    expect(created.status).toBe(201);
    const c = created.body;
    expect(c.configuration).toEqual({ type: 'gchat', service_account_key: '****', hidden_output_types: [], client_email: sa.email, project_id: 'chat-project', audience_url: `${app.url}/v2/agents/helper/connectors/${c.id}/gchat` });
    const audience = c.configuration.audience_url;
    const path = new URL(audience).pathname;
    const event = JSON.stringify({ type: 'MESSAGE', eventTime: new Date().toISOString(), space: { name: 'spaces/AAA', type: 'ROOM' }, message: { name: 'spaces/AAA/messages/M1.M1', text: '@bot what time', argumentText: ' what time', thread: { name: 'spaces/AAA/threads/T1' }, sender: { type: 'HUMAN' } }, user: { name: 'users/1' } });
    expect((await webhook(path, event, { authorization: `Bearer ${await platforms.chatToken(audience, { forge: true })}` })).status).toBe(401);
    expect((await webhook(path, event, { authorization: `Bearer ${await platforms.chatToken('https://elsewhere.example/x')}` })).status).toBe(401);
    expect((await webhook(path, event, { authorization: `Bearer ${await platforms.chatToken(audience, { expiredSecondsAgo: 600 })}` })).status).toBe(401);
    expect(await connectorEvents(c.id)).toEqual([]);

    const ok = await webhook(path, event, { authorization: `Bearer ${await platforms.chatToken(audience)}` });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({});
    expect((await webhook(path, event, { authorization: `Bearer ${await platforms.chatToken(audience)}` })).status).toBe(200);
    const posted = await until('the Chat reply', () => platforms.callsTo('/v1/spaces/AAA/messages')[0]);
    expect(posted.path).toContain('messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
    expect(posted.body).toEqual({ text: 'Echo: what time', thread: { name: 'spaces/AAA/threads/T1' } });
    expect(platforms.issuedTokens.has(String(posted.headers.authorization).replace('Bearer ', ''))).toBe(true);
    await sleep(500);
    expect(platforms.callsTo('/v1/spaces/AAA/messages')).toHaveLength(1);
  }, 30_000);

  it('Zoom: token shown once and kept across updates, typing indicator at once, answer to the callback; deleted → 404', async () => {
    const created = await app.call('POST', '/v2/agents/helper/connectors', { name: 'ZCC', configuration: { type: 'zoom', callback_url: `${platforms.url}/zoom/callback`, callback_access_token: 'zoom-cb-token', typing_duration_seconds: 30 } });
    expect(created.status).toBe(201);
    const c = created.body;
    const token = c.configuration.connector_token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect((await app.call('GET', `/v2/agents/helper/connectors/${c.id}`)).body.configuration.connector_token).toBe('****');
    const path = c.configuration.webhook_path;
    const message = (id: string, text: string) => JSON.stringify({ engagement_id: 'eng-1', message_id: id, message: { text } });

    expect((await webhook(path, message('m1', 'need help'), { 'x-zoom-connector-token': 'guess' })).status).toBe(401);
    expect((await webhook(path, message('m1', 'need help'), {})).status).toBe(401);
    const ack = await webhook(path, message('m1', 'need help'), { 'x-zoom-connector-token': token });
    expect(ack.status).toBe(200);
    expect(ack.body).toEqual({ type: 'typing', engagement_id: 'eng-1', typing_duration_seconds: 30 });
    expect((await webhook(path, message('m1', 'need help'), { 'x-zoom-connector-token': token })).status).toBe(200);
    const answer = await until('the callback', () => platforms.callsTo('/zoom/callback')[0]);
    expect(answer.body).toEqual({ engagement_id: 'eng-1', in_reply_to: 'm1', message: { type: 'text', text: 'Echo: need help' } });
    expect(answer.headers.authorization).toBe('Bearer zoom-cb-token');

    const updated = await app.call('PATCH', `/v2/agents/helper/connectors/${c.id}`, { name: 'ZCC 2', configuration: { type: 'zoom', callback_url: `${platforms.url}/zoom/callback`, typing_duration_seconds: 10 } });
    expect(updated.status).toBe(200);
    expect(updated.body.configuration).toMatchObject({ connector_token: '****', callback_access_token: '****', typing_duration_seconds: 10 });
    expect((await webhook(path, message('m2', 'still there?'), { 'x-zoom-connector-token': token })).body).toMatchObject({ typing_duration_seconds: 10 });
    await until('the second callback', () => platforms.callsTo('/zoom/callback')[1]);
    expect(await connectorSessions(c.id)).toHaveLength(1);

    // Disabled, it takes nothing in; enabled again, it answers.
    expect((await app.call('PATCH', `/v2/agents/helper/connectors/${c.id}`, { enabled: false })).body).toMatchObject({ enabled: false, status: 'inactive' });
    expect((await webhook(path, message('m9', 'anyone?'), { 'x-zoom-connector-token': token })).status).toBe(409);
    expect((await app.call('GET', `/v2/agents/helper/connectors?type=zoom&enabled=false`)).body.connectors.map((x: any) => x.id)).toEqual([c.id]);
    expect((await app.call('PATCH', `/v2/agents/helper/connectors/${c.id}`, { enabled: true })).status).toBe(200);
    expect((await connectorEvents(c.id)).filter((t) => t === 'ConnectorMessageReceived')).toHaveLength(2);

    expect((await app.call('DELETE', `/v2/agents/helper/connectors/${c.id}`)).status).toBe(204);
    expect((await webhook(path, message('m3', 'hello?'), { 'x-zoom-connector-token': token })).status).toBe(404);
    expect((await app.call('GET', `/v2/agents/helper/connectors/${c.id}`)).status).toBe(404);
    // No credential in the logs or the log of events, whatever was refused, retried or delivered.
    const log = app.logLines.join('\n');
    const events = JSON.stringify((await app.call('GET', '/v2/events?limit=1000')).body);
    for (const secret of [token, 'zoom-cb-token', SIGNING, BOT]) {
      expect(log).not.toContain(secret);
      expect(events).not.toContain(secret);
    }
  }, 30_000);

  it("a deleted agent's connectors take nothing in, and a re-created agent of the key does not inherit them", async () => {
    const other = (await app.call('POST', '/v2/agents/helper/connectors', { name: 'Last', configuration: { type: 'zoom', callback_url: `${platforms.url}/zoom/callback` } })).body;
    expect((await app.call('DELETE', '/v2/agents/helper')).status).toBe(204);
    await app.call('POST', '/v2/agents', { key: 'helper', name: 'helper', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
    const body = JSON.stringify({ engagement_id: 'eng-x', message_id: 'm1', message: { text: 'hi' } });
    expect((await webhook(other.configuration.webhook_path, body, { 'x-zoom-connector-token': other.configuration.connector_token })).status).toBe(404);
    expect((await app.call('GET', '/v2/agents/helper/connectors')).body.connectors).toEqual([]);
  });
});
