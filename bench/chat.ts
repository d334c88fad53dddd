import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/platform';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { now, writerEnv, percentile, report, round } from './common';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';

/** Time to the whole answer, and to the first server-sent chunk when streaming (ms). */
async function timed(url: string, headers: Record<string, string>, body: object): Promise<{ total: number; firstByte: number }> {
  const t = now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const reader = res.body!.getReader();
  let firstByte = NaN;
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (Number.isNaN(firstByte)) firstByte = now() - t;
    text += decoder.decode(value, { stream: true });
  }
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text}`);
  return { total: now() - t, firstByte };
}

/**
 * Proxy overhead of /v2/llms/chat/completions: the same request to the scripted upstream directly and through
 * the service (registered model, auth, quota check, usage event), interleaved in one run so both see the
 * same machine noise. The upstream answers at once, so every millisecond of difference is ours.
 */
export async function chatBench(args: string[]): Promise<void> {
  const n = Number(args[0] ?? 2000);
  const upstream = await ScriptedOpenAIServer.start();
  upstream.fallback = { content: 'The capital of France is Paris.', usage: { prompt_tokens: 21, completion_tokens: 9 } };
  const dir = mkdtempSync(join(tmpdir(), 'bench-chat-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: KEY, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS ?? 'FULL', ...writerEnv(), RATE_LIMIT_STORE: process.env.RATE_LIMIT_STORE ?? 'auto' });
  const { app, url } = await startApp(config, 'all', createLogger('silent'), () => undefined);
  try {
    const created = await fetch(`${url}/v2/llms`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench', model: 'upstream-model', uri: `${upstream.baseURL}/chat/completions`, auth: { type: 'bearer', token: 'sk-bench' }, llm_quota: { output_tokens_per_month: 1e12 } }),
    });
    if (created.status !== 201) throw new Error(`register: ${created.status}`);
    // Recording every request would grow the scripted server's memory over the run.
    const requests = upstream.requests;
    const messages = [{ role: 'user', content: 'What is the capital of France?' }];
    const direct = (stream: boolean) => timed(`${upstream.baseURL}/chat/completions`, { authorization: 'Bearer sk-bench' }, { model: 'upstream-model', messages, stream, stream_options: stream ? { include_usage: true } : undefined });
    const proxied = (stream: boolean) => timed(`${url}/v2/llms/chat/completions`, { 'x-api-key': KEY }, { model: 'bench', messages, stream, stream_options: stream ? { include_usage: true } : undefined });
    const rows: Record<string, unknown>[] = [];
    for (const stream of [false, true]) {
      const d: { total: number; firstByte: number }[] = [];
      const p: { total: number; firstByte: number }[] = [];
      for (let i = 0; i < n + 200; i++) {
        // Alternate which goes first, so neither always runs on a warmer connection.
        let a: { total: number; firstByte: number };
        let b: { total: number; firstByte: number };
        if (i % 2) {
          a = await direct(stream);
          b = await proxied(stream);
        } else {
          b = await proxied(stream);
          a = await direct(stream);
        }
        if (i >= 200) {
          d.push(a);
          p.push(b);
        }
        requests.length = 0;
      }
      const col = (xs: { total: number; firstByte: number }[], f: 'total' | 'firstByte', q: number) => round(percentile(xs.map((x) => x[f]), q), 3);
      for (const f of stream ? (['firstByte', 'total'] as const) : (['total'] as const)) {
        rows.push({
          mode: stream ? 'stream' : 'non-stream',
          measure: f === 'firstByte' ? 'first byte' : 'whole answer',
          'direct p50 ms': col(d, f, 50),
          'proxy p50 ms': col(p, f, 50),
          'added p50 ms': round(col(p, f, 50) - col(d, f, 50), 3),
          'direct p99 ms': col(d, f, 99),
          'proxy p99 ms': col(p, f, 99),
        });
      }
    }
    report('chat', rows, { requests: n, synchronous: config.sqliteSynchronous, bar: 'added p50 ≤ 2 ms; streaming first byte added ≤ 2 ms' });
  } finally {
    await app.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
