import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedOpenAIServer } from '@lib/testing';
import { FakePlatforms } from './support/connector-platforms';
import { spawnService, ServiceProcess } from './support/service-process';
import { until } from './support/wait';

/**
 * Issue 18: a reply is durable background work. An API process stores the delivery and acknowledges it; the
 * worker that owes the reply is killed (SIGKILL) after a failed post; a worker started afterwards delivers it.
 */

const KEY = 'zut_test_bootstrap_key_0123456789abcdef';

describe('connector replies across a worker crash', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-connectors-'));
  const processes: ServiceProcess[] = [];
  let upstream: ScriptedOpenAIServer;
  let platforms: FakePlatforms;
  let env: Record<string, string>;
  let api: ServiceProcess;

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { 'x-api-key': KEY }) => {
    const res = await fetch(`${api.url}${path}`, { method, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.fallback = { content: 'We are on it.' };
    platforms = await FakePlatforms.start();
    env = { DATA_DIR: dataDir, ADMIN_API_KEY: KEY, SQLITE_SYNCHRONOUS: 'NORMAL', LEASE_TTL_MS: '1500', LEASE_RENEW_MS: '300', WORKER_POLL_MS: '300', CONNECTOR_RETRY_BASE_MS: '3000', ...platforms.env };
    const [worker, apiProcess] = await Promise.all([spawnService(env, 45_000, [], ['--role=worker']), spawnService(env, 45_000, [], ['--role=api'])]);
    processes.push(worker, apiProcess);
    api = apiProcess;
    await until('the owner key', async () => ((await call('GET', '/v2/corpora')).status === 200 ? true : undefined));
    expect((await call('POST', '/v2/llms', { type: 'openai-compatible', name: 'm', model: 'm-upstream', uri: `${upstream.baseURL}/chat/completions` })).status).toBe(201);
    expect((await call('POST', '/v2/agents', { key: 'desk', name: 'desk', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await upstream?.close();
    await platforms?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers the reply once a new worker runs, after the one that owed it was killed', async () => {
    const c = (await call('POST', '/v2/agents/desk/connectors', { name: 'ZCC', configuration: { type: 'zoom', callback_url: `${platforms.url}/zoom/callback` } })).body;
    platforms.failNext['/zoom/callback'] = 1;
    const body = { engagement_id: 'eng-7', message_id: 'm1', message: { text: 'my order is late' } };
    const ack = await call('POST', c.configuration.webhook_path, body, { 'x-zoom-connector-token': c.configuration.connector_token });
    expect(ack).toEqual({ status: 200, body: { type: 'typing', engagement_id: 'eng-7', typing_duration_seconds: 60 } });
    const types = async () => ((await call('GET', '/v2/events?limit=1000&category=connector_message')).body.events as any[]).map((e) => e.type as string);
    await until('the first post recorded as failed', async () => ((await types()).includes('ConnectorReplyFailed') ? true : undefined));
    const worker = processes[0];
    worker.child.kill('SIGKILL');
    await worker.exited;

    processes.push(await spawnService(env, 45_000, [], ['--role=worker']));
    const delivered = await until('the reply from the new worker', () => platforms.callsTo('/zoom/callback')[1]);
    expect(delivered.body).toEqual({ engagement_id: 'eng-7', in_reply_to: 'm1', message: { type: 'text', text: 'We are on it.' } });
    const recorded = await until('the delivery recorded', async () => {
      const events = await types();
      return events.includes('ConnectorReplyDelivered') ? events : undefined;
    });
    expect(recorded).toEqual(['ConnectorMessageReceived', 'ConnectorAnswered', 'ConnectorReplyFailed', 'ConnectorReplyDelivered']);
    // The turn ran once: the new worker posted the answer recorded before the crash.
    expect(upstream.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(1);
  }, 120_000);
});
