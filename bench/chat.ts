import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { loadConfig } from '@lib/platform';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { serviceEnv, percentile, report, round } from './common';
import type { ChatRun, ChatTimings, Timing } from './chat-worker';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';

/**
 * Proxy overhead of /v2/llms/chat/completions: the same request to the scripted upstream directly and through
 * the service (registered model, auth, quota check, usage event), interleaved in one run so both see the
 * same machine noise. The upstream answers at once, so every millisecond of difference is ours. The upstream and
 * the client run on a thread of their own (chat-worker.ts), as they would run elsewhere.
 */
export async function chatBench(args: string[]): Promise<void> {
  const n = Number(args[0] ?? 2000);
  const worker = new Worker(join(__dirname, 'chat-worker.js'));
  const next = <T>() =>
    new Promise<T>((resolve, reject) => {
      worker.once('message', (m: T & { error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m)));
      worker.once('error', reject);
    });
  const { upstreamUrl } = await next<{ upstreamUrl: string }>();
  const dir = mkdtempSync(join(tmpdir(), 'bench-chat-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: KEY, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_TOOLS_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_PIPELINES_ALLOWED_HOSTS: '127.0.0.1', SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS ?? 'FULL', ...serviceEnv(), RATE_LIMIT_STORE: process.env.RATE_LIMIT_STORE ?? 'auto' });
  const { app, url } = await startApp(config, 'all', createLogger('silent'), () => undefined);
  try {
    const created = await fetch(`${url}/v2/llms`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench', model: 'upstream-model', uri: `${upstreamUrl}/chat/completions`, auth: { type: 'bearer', token: 'sk-bench' }, llm_quota: { output_tokens_per_month: 1e12 } }),
    });
    if (created.status !== 201) throw new Error(`register: ${created.status}`);
    const done = next<{ timings: ChatTimings }>();
    worker.postMessage({ serviceUrl: url, apiKey: KEY, requests: n, warmup: 200 } satisfies ChatRun);
    const { timings } = await done;
    const rows: Record<string, unknown>[] = [];
    for (const stream of [false, true]) {
      const { direct: d, proxied: p } = timings[stream ? 'stream' : 'nonStream'];
      const col = (xs: Timing[], f: 'total' | 'firstByte', q: number) => round(percentile(xs.map((x) => x[f]), q), 3);
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
    await worker.terminate();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
