import { resolve } from 'node:path';
import type { SqliteSearchIndex } from '@lib/platform/sqlite';
import { median, now, percentile, report, round } from './common';
import { startHealthPinger } from './health-pinger';
import { runClients } from './http-clients';
import { loadSciFact, warmUpQueries } from './scifact';
import { BENCH_KEY, startBenchService } from './service';

/**
 * Where a lexical query's time goes over HTTP, on a kept scale dir (`scale N keep=DIR`): SciFact's test queries at
 * limit 10 from a client thread, and for the same requests the server's time from the request's arrival to its
 * response's end, and the index's ranking (`rank`) inside them; then the same queries on `search()` in a loop. The
 * client's share is HTTP − server; the request path's is server − ranking. Issue 19's "lexical p50 ≤ 10 ms at 1M".
 * The service is first warmed by SciFact's train queries; round 1 times the test queries unseen, later rounds again.
 */
export async function lexicalHttpBench(args: string[]): Promise<void> {
  const dir = args[0];
  if (!dir) throw new Error('usage: lexical-http DIR [rounds=2]');
  const rounds = Number(args[1] ?? 2);
  const service = await startBenchService('lexical-http', {}, resolve(dir));
  const { started } = service;
  const search = started.infra.search as SqliteSearchIndex;
  try {
    const queries = [...loadSciFact('test').queries.values()];
    // After the start: the first query (hybrid, the default), then lexical queries while the postings are built
    // (FTS5 answers them), with /health timed from another thread: what a restart costs callers.
    const pinger = startHealthPinger(started.url);
    const firstStarted = now();
    await service.call('POST', '/v2/corpora/scale/query', { query: 'warm up', search: { limit: 1 } });
    const firstQueryMs = now() - firstStarted;
    const duringBuild: number[] = [];
    for (const q of warmUpQueries(10)) {
      const t = now();
      await service.call('POST', '/v2/corpora/scale/query', { query: q, search: { limit: 10, lexical_interpolation: 1 } });
      duringBuild.push(now() - t);
    }
    await search.postings.whenIdle();
    await search.ann.whenIdle();
    const { latencies: health } = await pinger.stop();
    const start = {
      'first query ms (hybrid)': round(firstQueryMs, 0),
      'next 10 lexical queries p50 / max ms': [round(median(duringBuild), 0), round(Math.max(...duringBuild), 0)],
      '/health p50 / p99 / max ms until the postings are built': [round(median(health), 1), round(percentile(health, 99), 1), round(Math.max(...health), 1)],
    };
    const server: number[] = [];
    started.app.getHttpServer().prependListener('request', (_req: unknown, res: NodeJS.EventEmitter) => {
      const t = now();
      res.once('finish', () => server.push(now() - t));
    });
    const ranking: number[] = [];
    const rank = search.rank.bind(search);
    search.rank = async (...a: Parameters<SqliteSearchIndex['rank']>) => {
      const t = now();
      try {
        return await rank(...a);
      } finally {
        ranking.push(now() - t);
      }
    };
    const asked = (qs: string[]) => qs.map((q) => ({ method: 'POST', path: '/v2/corpora/scale/query', body: { query: q, search: { limit: 10, lexical_interpolation: 1 } } }));
    const rows: Record<string, unknown>[] = [];
    // Round 1: the test queries unseen, on a service warmed by other queries; later rounds: the same queries again.
    await runClients(started.url, BENCH_KEY, asked(warmUpQueries()), 1);
    for (let r = 0; r < rounds; r++) {
      global.gc?.();
      server.length = 0;
      ranking.length = 0;
      const http = await runClients(started.url, BENCH_KEY, asked(queries), 1);
      const [serverTimes, rankTimes] = [server.slice(), ranking.slice()];
      const loop: number[] = [];
      for (const q of queries) {
        const t = now();
        await search.search('scale', { mode: 'lexical', text: q, limit: 10 });
        loop.push(now() - t);
      }
      rows.push({
        round: r + 1,
        'HTTP p50 ms (client)': round(median(http), 2),
        'server p50 ms (arrival → end)': round(median(serverTimes), 2),
        'rank() p50 ms in requests': round(median(rankTimes), 2),
        'search() p50 ms in a loop': round(median(loop), 2),
        'RSS MB': round(process.memoryUsage().rss / 2 ** 20, 0),
        'JS heap / array buffers MB': [round(process.memoryUsage().heapUsed / 2 ** 20, 0), round(process.memoryUsage().arrayBuffers / 2 ** 20, 0)],
      });
    }
    report('lexical-http', rows, { dir, queries: queries.length, 'after the start': start, bar: 'HTTP p50 ≤ 10 ms at 1M chunks' });
  } finally {
    await service.close();
  }
}
