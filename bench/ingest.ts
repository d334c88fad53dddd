import { now, report, round } from './common';
import { loadSciFact } from './scifact';
import { runClients } from './http-clients';
import { BENCH_KEY, startBenchService } from './service';

/**
 * Issue 4: SciFact through the API as structured documents (one section: title + abstract, default sentence chunking; SciFact titles exceed the 255-character title limit),
 * 8 concurrent clients in a worker thread, timed until every chunk is searchable. Two ways: each request waits for the search
 * index (`wait_for=searchable`, the default), or requests return once durable (`wait_for=indexed`) and the
 * clock stops when the search projection has caught up with the last write.
 */
export async function ingestBench(args: string[]): Promise<void> {
  const limit = args[0] === undefined || args[0] === 'all' ? Infinity : Number(args[0]);
  const encoder = (args[1] ?? 'default').replace(/^encoder=/, '');
  const data = loadSciFact('test');
  const docs = data.corpus.slice(0, limit);
  const rows: Record<string, unknown>[] = [];
  for (const waitFor of ['searchable', 'indexed'] as const) {
    const service = await startBenchService('ingest');
    const { call } = service;
    const { infra } = service.started;
    try {
      await call('POST', '/v2/corpora', { key: 'scifact', name: 'SciFact', ...(encoder === 'default' ? {} : { encoder_name: encoder }) });
      const t = now();
      const requests = docs.map((d) => ({
        method: 'POST',
        path: `/v2/corpora/scifact/documents?wait_for=${waitFor}`,
        body: { id: d.id, type: 'structured', sections: [{ text: `${d.title}. ${d.text}` }] },
      }));
      await runClients(service.started.url, BENCH_KEY, requests, 8);
      const acknowledged = now() - t;
      const head = await infra.events.headPosition();
      if (!(await infra.progress.waitFor(head, ['search'], 600_000))) throw new Error('search projection did not catch up');
      const searchable = now() - t;
      const corpus = await call('GET', '/v2/corpora/scifact');
      const chunks = (corpus.limits as { used_parts: number }).used_parts;
      rows.push({
        mode: `wait_for=${waitFor}`,
        encoder,
        documents: docs.length,
        chunks,
        'acknowledged s': round(acknowledged / 1000),
        'searchable s': round(searchable / 1000),
        'docs/s': round(docs.length / (searchable / 1000), 0),
        'chunks/s': round(chunks / (searchable / 1000), 0),
      });
    } finally {
      await service.close();
    }
  }
  report('ingest', rows, { bar: 'lexical ≥ 5,000 chunks/s until searchable (BENCHMARKS.md)', rss: `${round(process.memoryUsage().rss / 2 ** 20, 0)} MB` });
}
