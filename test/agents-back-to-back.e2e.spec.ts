import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedOpenAIServer } from '@lib/testing';
import { spawnService, ServiceProcess } from './support/service-process';
import { until } from './support/wait';

/**
 * Issue 43, the false "turn already running": a client that sends its next input as soon as it has the answer of
 * the last one must not meet the turn's lease still held (409 session.turn_running). Measured from another process
 * than the service's (the test's own), as a client would: 50 sessions, 20 inputs each back to back, all at once.
 */
const KEY = 'zut_test_bootstrap_key_0123456789abcdef';

describe('back-to-back inputs from a client', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-back-to-back-'));
  let upstream: ScriptedOpenAIServer;
  let service: ServiceProcess;

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${service.url}${path}`, { method, headers: { 'x-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.fallback = { content: 'Noted.' };
    service = await spawnService({ DATA_DIR: dataDir, ADMIN_API_KEY: KEY, SQLITE_SYNCHRONOUS: 'NORMAL', RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '1000000' }, 45_000);
    await until('the owner key', async () => ((await call('GET', '/v2/corpora')).status === 200 ? true : undefined));
    expect((await call('POST', '/v2/llms', { type: 'openai-compatible', name: 'm', model: 'm-upstream', uri: `${upstream.baseURL}/chat/completions` })).status).toBe(201);
    expect((await call('POST', '/v2/agents', { key: 'desk', name: 'desk', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    service?.child.kill('SIGKILL');
    await service?.exited;
    await upstream?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('accepts every input sent as soon as the answer to the last one arrived: 1,000 over 50 sessions, no 409', async () => {
    const sessions = 50;
    const perSession = 20;
    for (let s = 0; s < sessions; s++) expect((await call('POST', '/v2/agents/desk/sessions', { key: `s${s}` })).status).toBe(201);
    const statuses = new Map<number, number>();
    const refused: string[] = [];
    await Promise.all(
      Array.from({ length: sessions }, async (_, s) => {
        for (let i = 0; i < perSession; i++) {
          const res = await call('POST', `/v2/agents/desk/sessions/s${s}/events`, { messages: [{ type: 'text', content: `message ${i}` }] });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status !== 201) refused.push(`s${s} #${i}: ${res.status} ${JSON.stringify(res.body?.messages)}`);
        }
      }),
    );
    expect(refused.slice(0, 5)).toEqual([]);
    expect(Object.fromEntries(statuses)).toEqual({ 201: sessions * perSession });
  }, 240_000);
});
