import { now, percentile, report, round } from './common';
import { loadSciFact, ndcgAt, recallAt } from './scifact';
import { startBenchService } from './service';

/**
 * The slice end to end: SciFact indexed through the API (one core part per abstract: title + text), then
 * the 300 test queries over HTTP with auth, one client, lexical. Also reports ingest rate and nDCG@10.
 */
export async function queryLatencyBench(args: string[]): Promise<void> {
  const rounds = Number(args[0] ?? 3);
  const data = loadSciFact('test');
  const service = await startBenchService('query');
  const { call } = service;
  try {
    await call('POST', '/v2/corpora', { key: 'scifact', name: 'SciFact' });
    let t = now();
    const concurrency = 8;
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < data.corpus.length) {
          const d = data.corpus[next++];
          await call('POST', '/v2/corpora/scifact/documents', { id: d.id, type: 'core', document_parts: [{ text: `${d.title}. ${d.text}` }] });
        }
      }),
    );
    const ingestSeconds = (now() - t) / 1000;

    // Quality once at depth 100 (for Recall@100); latency over `rounds` passes at the API's default limit 10.
    let ndcg = 0;
    let recall = 0;
    for (const [qid, text] of data.queries) {
      const res = await call('POST', '/v2/corpora/scifact/query', { query: text, search: { limit: 100, lexical_interpolation: 1 } });
      const ranked = (res.search_results as { document_id: string }[]).map((x) => x.document_id);
      ndcg += ndcgAt(ranked, data.qrels.get(qid)!);
      recall += recallAt(ranked, data.qrels.get(qid)!);
    }
    const latencies: number[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const text of data.queries.values()) {
        t = now();
        await call('POST', '/v2/corpora/scifact/query', { query: text, search: { lexical_interpolation: 1 } });
        latencies.push(now() - t);
      }
    }
    const n = data.queries.size;
    report(
      'query-latency',
      [{ mode: 'lexical (HTTP, auth, limit 10)', queries: latencies.length, 'p50 ms': round(percentile(latencies, 50)), 'p99 ms': round(percentile(latencies, 99)), 'p99/p50': round(percentile(latencies, 99) / percentile(latencies, 50)) }],
      {
        ingest: `${data.corpus.length} documents via POST /documents (8 clients, wait_for=searchable) in ${round(ingestSeconds)} s = ${round(data.corpus.length / ingestSeconds, 0)} docs/s`,
        quality: `lexical nDCG@10 ${round(ndcg / n, 4)}, Recall@100 ${round(recall / n, 4)} on ${n} test queries`,
        rss: `${round(process.memoryUsage().rss / 2 ** 20, 0)} MB`,
      },
    );
  } finally {
    await service.close();
  }
}
