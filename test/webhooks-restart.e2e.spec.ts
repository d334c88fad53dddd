import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { spawnService, ServiceProcess } from './support/service-process';
import { startTestApp } from './support/test-app';
import { until } from './support/wait';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * Issue 43, part 4: a webhook is delivered at least once across a worker's death (docs/webhooks.md). The service
 * runs in a process of its own; the receiver holds the first request open, the test kills the process (SIGKILL)
 * mid-delivery and starts another on the same data directory, which sends the delivery again with the same
 * `webhook-id` once the dead holder's lease has expired (LEASE_TTL_MS 2 s here). And the gentler case: an app closed
 * mid-delivery aborts the attempt, records nothing, and the next app on the same data sends it.
 */
const KEY = 'zut_test_bootstrap_key_0123456789abcdef';

describe('webhook delivery across a killed worker', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-webhooks-restart-'));
  const env = { DATA_DIR: dataDir, ADMIN_API_KEY: KEY, SQLITE_SYNCHRONOUS: 'NORMAL', OUTBOUND_WEBHOOKS_ALLOWED_HOSTS: '127.0.0.1', WORKER_POLL_MS: '200', LEASE_TTL_MS: '2000', WEBHOOK_RETRY_BASE_MS: '200' };
  let upstream: ScriptedOpenAIServer;
  let receiver: WebhookReceiver;
  let service: ServiceProcess | undefined;

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${service!.url}${path}`, { method, headers: { 'x-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const kill = async () => {
    service?.child.kill('SIGKILL');
    await service?.exited;
    service = undefined;
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.fallback = { content: 'Noted.' };
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await kill();
    await upstream?.close();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers the turn another process was sending when it died, with the same webhook-id and a valid signature', async () => {
    service = await spawnService(env, 60_000);
    await until('the owner key', async () => ((await call('GET', '/v2/webhooks')).status === 200 ? true : undefined));
    expect((await call('POST', '/v2/llms', { type: 'openai-compatible', name: 'm', model: 'm-upstream', uri: `${upstream.baseURL}/chat/completions` })).status).toBe(201);
    expect((await call('POST', '/v2/agents', { key: 'desk', name: 'desk', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
    const hook = await call('POST', '/v2/webhooks', { url: `${receiver.url}/hook`, event_types: ['session.turn_completed'], description: 'restart' });
    expect(hook.status).toBe(201);
    receiver.reply('/hook', 'hold');
    expect((await call('POST', '/v2/agents/desk/sessions', { key: 's1' })).status).toBe(201);
    expect((await call('POST', '/v2/agents/desk/sessions/s1/events', { messages: [{ type: 'text', content: 'hello' }] })).status).toBe(201);

    const [first] = await until('the first attempt, held', () => (receiver.at('/hook').length ? receiver.at('/hook') : undefined), 20_000);
    await kill();
    receiver.release(); // Nobody is left to read the answer.

    service = await spawnService(env, 60_000);
    const second = await until('the delivery from the new process', () => (receiver.at('/hook').length >= 2 ? receiver.at('/hook')[1] : undefined), 30_000);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    const verified = new Webhook(hook.body.secret).verify(second.body, second.headers) as { type: string; data: Record<string, unknown> };
    expect(verified).toMatchObject({ type: 'session.turn_completed', data: { agent_key: 'desk', session_key: 's1', outcome: 'answered' } });

    const [row] = await until('delivered', async () => {
      const rows = (await call('GET', `/v2/webhooks/${hook.body.id}/deliveries`)).body.deliveries;
      return rows?.[0]?.status === 'delivered' ? rows : undefined;
    }, 10_000);
    // The dead process's attempt never got an answer, so it was never recorded: one attempt, by the new process.
    expect(row).toMatchObject({ webhook_message_id: first.headers['webhook-id'], attempts: 1, last_response_code: 200 });
    expect(receiver.at('/hook')).toHaveLength(2);
  }, 180_000);

  it('delivers what a closing app was sending when it stopped: the attempt is dropped, not recorded, and sent by the next app', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ars-webhooks-close-'));
    const appEnv = { WORKER_POLL_MS: '200', WEBHOOK_RETRY_BASE_MS: '200' };
    let app = await startTestApp({ dataDir: dir, env: appEnv });
    try {
      await registerScripted(app, upstream, 'm');
      await app.call('POST', '/v2/agents', { key: 'desk', name: 'desk', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
      const hook = await app.call('POST', '/v2/webhooks', { url: `${receiver.url}/closing`, event_types: ['session.turn_completed'] });
      receiver.reply('/closing', 'hold');
      await app.call('POST', '/v2/agents/desk/sessions', { key: 's1' });
      await app.call('POST', '/v2/agents/desk/sessions/s1/events', { messages: [{ type: 'text', content: 'hello' }] });
      const [first] = await until('the held attempt', () => (receiver.at('/closing').length ? receiver.at('/closing') : undefined), 20_000);
      const closed = Date.now();
      await app.close();
      // The in-flight attempt was aborted at shutdown, not waited out for its 10 s.
      expect(Date.now() - closed).toBeLessThan(8_000);
      receiver.release();
      app = await startTestApp({ dataDir: dir, env: appEnv });
      const second = await until('the delivery from the next app', () => (receiver.at('/closing').length >= 2 ? receiver.at('/closing')[1] : undefined), 20_000);
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(() => new Webhook(hook.body.secret).verify(second.body, second.headers)).not.toThrow();
      const [row] = await until('delivered', async () => {
        const rows = (await app.call('GET', `/v2/webhooks/${hook.body.id}/deliveries`)).body.deliveries;
        return rows?.[0]?.status === 'delivered' ? rows : undefined;
      }, 10_000);
      expect(row).toMatchObject({ attempts: 1, last_response_code: 200 });
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
