import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedClock } from '@lib/platform';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/** Quotas trip at their counts, survive a restart (counted from events) and reset with their UTC window. */
describe('LLM quotas', () => {
  const clock = fixedClock('2026-03-31T23:58:30.000Z');
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-quotas-'));
  let upstream: ScriptedOpenAIServer;
  let app: TestApp;
  const chat = (model: string) => app.call('POST', '/v2/llms/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.fallback = { content: 'ok', usage: { prompt_tokens: 3, completion_tokens: 4 } };
    upstream.route('POST', '/hhem', (req) => ({ status: 200, json: { scores: [(req.body?.pairs as string[][])[0][1].includes('Berlin') ? 0.08 : 0.93] } }));
    app = await startTestApp({ dataDir, clock, env: { FCS_HHEM_URL: `${upstream.url}/hhem` } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('trips output tokens per minute at the configured count, keeps it over a restart, resets next minute', async () => {
    await registerScripted(app, upstream, 'metered', { llm_quota: { output_tokens_per_minute: 10 } });
    // 4 output tokens a call: admitted at 0, 4 and 8 used; the fourth call sees 12 ≥ 10.
    expect([(await chat('metered')).status, (await chat('metered')).status, (await chat('metered')).status]).toEqual([200, 200, 200]);
    const refused = await chat('metered');
    expect(refused.status).toBe(429);
    expect(refused.body.messages[0]).toBe('Quota output_tokens_per_minute of LLM "metered" is used up (12 of 10); it resets at 2026-03-31T23:59:00.000Z');
    expect(refused.headers.get('retry-after')).toBe('30');

    await app.close();
    app = await startTestApp({ dataDir, clock, env: { FCS_HHEM_URL: `${upstream.url}/hhem` } });
    expect((await chat('metered')).status).toBe(429);
    clock.advance(30_000);
    expect((await chat('metered')).status).toBe(200);
  });

  it('counts requests per second and input tokens per day; the day and month are UTC', async () => {
    await registerScripted(app, upstream, 'per-second', { llm_quota: { requests_per_second: 2 } });
    expect([(await chat('per-second')).status, (await chat('per-second')).status, (await chat('per-second')).status]).toEqual([200, 200, 429]);
    clock.advance(1000);
    expect((await chat('per-second')).status).toBe(200);

    await registerScripted(app, upstream, 'daily', { llm_quota: { input_tokens_per_day: 5, output_tokens_per_month: 1000 } });
    expect([(await chat('daily')).status, (await chat('daily')).status, (await chat('daily')).status]).toEqual([200, 200, 429]);
    clock.advance(30_000); // 23:59:31 on 31 March: another minute, the same UTC day
    expect((await chat('daily')).body.messages[0]).toMatch(/input_tokens_per_day .* resets at 2026-04-01T00:00:00.000Z/);
    clock.advance(30_000); // 00:00:01 on 1 April (UTC): a new day and a new month
    expect((await chat('daily')).status).toBe(200);
  });

  it('scores factual consistency with the HHEM endpoint', async () => {
    const berlin = await app.call('POST', '/v2/evaluate_factual_consistency', { generated_text: 'It is in Berlin.', source_texts: ['The tower is in Paris.'], model_parameters: { model_name: 'hhem_v2.3' } });
    expect(berlin.body).toEqual({ score: 0.08, scorer: 'hhem_v2.3' });
    expect(upstream.requests.at(-1)!.body).toEqual({ pairs: [['The tower is in Paris.', 'It is in Berlin.']] });
  });
});
