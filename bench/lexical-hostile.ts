import { median, percentile, report, round } from './common';
import { startHealthPinger } from './health-pinger';
import { BENCH_KEY, startBenchService, untilSearchable } from './service';
import type { SqliteSearchIndex } from '@lib/platform/sqlite';

/**
 * Issue 19, hostile input to the in-memory lexical index: one document of P parts, each of W distinct random words
 * (P × W words the corpus has never seen), written with an index key into a corpus whose postings are built, while
 * `GET /health` is timed from another thread. Reports the write's time, /health's latency meanwhile and until the
 * document is searchable and the postings have caught up (or been rebuilt), the postings' growth and RSS.
 */
export async function lexicalHostileBench(args: string[]): Promise<void> {
  const parts = Number(args[0] ?? 20_000);
  const words = Number(args[1] ?? 40);
  const service = await startBenchService('lexical-hostile', { LEXICAL_INDEX_MIN_ROWS: process.env.LEXICAL_INDEX_MIN_ROWS ?? '100' });
  const search = service.started.infra.search as SqliteSearchIndex;
  try {
    await service.call('POST', '/v2/corpora', { key: 'h', name: 'Hostile' });
    for (let d = 0; d < 60; d++)
      await service.call('POST', '/v2/corpora/h/documents?wait_for=indexed', { id: `d${d}`, type: 'core', document_parts: [{ text: `walrus tusk ice ${d}` }, { text: 'filler words here' }] });
    await service.call('POST', '/v2/corpora/h/query', { query: 'walrus', search: { limit: 1 } });
    await search.postings.whenIdle();
    global.gc?.();
    const before = { rss: process.memoryUsage().rss, postings: search.postings.bytes() };
    let n = 0;
    const word = () => `q${(n++).toString(36)}z`;
    const body = { id: 'hostile', type: 'core', document_parts: Array.from({ length: parts }, () => ({ text: Array.from({ length: words }, word).join(' ') })) };
    const pinger = startHealthPinger(service.started.url);
    const t0 = performance.now();
    const res = await fetch(`${service.started.url}/v2/corpora/h/documents?wait_for=indexed`, { method: 'POST', headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.text();
    const writeS = (performance.now() - t0) / 1000;
    await untilSearchable(service.started, 300_000);
    const searchableS = (performance.now() - t0) / 1000;
    await service.call('POST', '/v2/corpora/h/query', { query: 'walrus q1z', search: { limit: 1 } });
    await search.postings.whenIdle();
    const caughtS = (performance.now() - t0) / 1000;
    const { latencies, failed } = await pinger.stop();
    global.gc?.();
    const rows = [
      { figure: 'distinct new words / body MB', value: [parts * words, round(JSON.stringify(body).length / 2 ** 20, 1)] },
      { figure: 'write status / s (wait_for=indexed) / s until searchable', value: [res.status, round(writeS, 1), round(searchableS, 1)] },
      { figure: 's until the postings caught up or were rebuilt / rebuilt far behind / left to FTS5 past LEXICAL_INDEX_MAX_MB', value: [round(caughtS, 1), search.postings.stats.rebuiltBehind, search.postings.stats.leftOverBudget] },
      { figure: '/health p50 / p99 / max ms meanwhile (failed)', value: [round(median(latencies), 1), round(percentile(latencies, 99), 1), round(Math.max(...latencies), 1), failed] },
      { figure: 'postings MB before / after; RSS MB before / after', value: [round(before.postings / 2 ** 20, 0), round(search.postings.bytes() / 2 ** 20, 0), round(before.rss / 2 ** 20, 0), round(process.memoryUsage().rss / 2 ** 20, 0)] },
    ];
    for (const r of rows) process.stdout.write(`${r.figure}: ${JSON.stringify(r.value)}\n`);
    report(`lexical-hostile-${parts}x${words}`, rows);
  } finally {
    await service.close();
  }
}
