import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedOpenAIServer } from '@lib/testing';
import { ServiceProcess, spawnService } from './support/service-process';

const KEY = 'zut_slow_upstream_key_0123456789abcd';

/**
 * `idle_timeout_seconds` (up to 3600) is the one limit on a slow model, not Node's fetch transport timeouts (300 s:
 * a non-streamed answer from a reasoning model can take longer). The service runs with those timeouts cut to
 * 300 ms (preload), and a model with a 5 s idle timeout answers after 1 s, and streams with a 1 s pause.
 */
describe('slow upstream within idle_timeout_seconds', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-slow-'));
  let upstream: ScriptedOpenAIServer;
  let service: ServiceProcess | undefined;
  const post = (path: string, body: unknown) =>
    fetch(`${service!.url}${path}`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    service = await spawnService({ DATA_DIR: dataDir, ADMIN_API_KEY: KEY }, 30_000, [join(__dirname, 'support', 'short-transport-timeouts.ts')]);
    const made = await post('/v2/llms', { type: 'openai-compatible', name: 'slow', model: 'up', uri: `${upstream.baseURL}/chat/completions`, idle_timeout_seconds: 5 });
    expect(made.status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    service?.child.kill('SIGTERM');
    await service?.exited;
    await upstream?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('waits for a non-streamed answer that takes longer than the platform fetch would', async () => {
    upstream.enqueue({ content: 'thought about it', firstByteDelayMs: 1000 });
    const res = await post('/v2/llms/chat/completions', { model: 'slow', messages: [{ role: 'user', content: 'think' }] });
    const body = (await res.json()) as { choices?: { message: { content: string } }[]; messages?: string[] };
    expect({ status: res.status, content: body.choices?.[0].message.content, messages: body.messages }).toEqual({ status: 200, content: 'thought about it', messages: undefined });
  }, 15_000);

  it('keeps a stream open through a pause longer than the platform fetch would', async () => {
    upstream.enqueue({ chunks: ['one ', 'two'], chunkDelayMs: 1000 });
    const res = await post('/v2/llms/chat/completions', { model: 'slow', stream: true, messages: [{ role: 'user', content: 'count' }] });
    const text = await res.text();
    expect(text).not.toContain('"error"');
    const content = text
      .split('\n\n')
      .filter((f) => f.startsWith('data: {'))
      .map((f) => (JSON.parse(f.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
      .join('');
    expect(content).toBe('one two');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  }, 15_000);
});
