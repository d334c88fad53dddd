import { ScriptedOpenAIServer } from '@lib/testing';
import { FakePlatforms, slackHeaders } from './support/connector-platforms';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';
import { sleep } from './support/wait';

/**
 * A burst of connector messages does not start a turn for each at once (docs/connectors.md): with
 * CONNECTOR_MAX_CONCURRENT_REPLIES=2 and a model that takes 400 ms, the model never sees a third request before one
 * of the first two is answered, and every message is still answered in its own thread.
 */
describe('connector replies under a burst', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let platforms: FakePlatforms;
  const SIGNING = 'slack-signing-secret-burst-0123456789';
  let inFlight = 0;
  let mostInFlight = 0;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = (req) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      // The scripted server answers after firstByteDelayMs; the count drops when that answer is due.
      setTimeout(() => inFlight--, 400);
      const users = ((req.body?.messages ?? []) as { role: string; content: unknown }[]).filter((m) => m.role === 'user');
      return { content: `Echo: ${String(users[users.length - 1]?.content)}`, firstByteDelayMs: 400 };
    };
    platforms = await FakePlatforms.start();
    app = await startTestApp({ env: { ...platforms.env, WORKER_POLL_MS: '200', CONNECTOR_MAX_CONCURRENT_REPLIES: '2' } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'helper', name: 'helper', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await platforms?.close();
  });

  it('runs at most the configured number of replies at once and answers every message', async () => {
    const created = await app.call('POST', '/v2/agents/helper/connectors', { name: 'Burst', configuration: { type: 'slack', bot_token: 'xoxb-burst', signing_secret: SIGNING, api_app_id: 'A1' } });
    expect(created.status).toBe(201);
    const path = created.body.configuration.webhook_path as string;
    const mention = (i: number) => JSON.stringify({ type: 'event_callback', api_app_id: 'A1', team_id: 'T1', event_id: `Ev${i}`, event: { type: 'app_mention', user: 'U1', text: `<@UBOT> question ${i}`, channel: 'C1', ts: `1700000000.00${100 + i}` } });
    const acks = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => app.call('POST', path, mention(i), { 'x-api-key': '', 'content-type': 'application/json', ...slackHeaders(SIGNING, mention(i)) })));
    expect(acks.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);

    const deadline = Date.now() + 30_000;
    while (platforms.callsTo('/api/chat.postMessage').length < 6 && Date.now() < deadline) await sleep(50);
    const replies = platforms.callsTo('/api/chat.postMessage').map((c) => c.body as { thread_ts: string; text: string });
    expect(replies.map((r) => r.text).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `Echo: question ${i}`));
    for (const r of replies) expect(r.text).toBe(`Echo: question ${Number(r.thread_ts.slice(-3)) - 100}`);
    expect(mostInFlight).toBe(2);
  });
});
