import { now, report, round } from './common';
import { loadSciFact } from './scifact';
import { runClients } from './http-clients';
import { BENCH_KEY, startBenchService } from './service';

export interface IngestFigures {
  readonly documents: number;
  readonly chunks: number;
  /** ms until the last request was acknowledged. */
  readonly acknowledgedMs: number;
  /** ms until the search projection had applied the last write. */
  readonly searchableMs: number;
}

/**
 * SciFact documents through the API into a service started for them (`env` adds settings: the PostgreSQL comparison's
 * POSTGRES_URL), 8 concurrent clients in a worker thread, timed until every chunk is searchable.
 */
export async function ingestOnce(docs: readonly { id: string; title: string; text: string }[], encoder: string, waitFor: 'searchable' | 'indexed', env: Record<string, string> = {}): Promise<IngestFigures> {
  const service = await startBenchService('ingest', env);
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
    const acknowledgedMs = now() - t;
    const head = await infra.events.headPosition();
    if (!(await infra.progress.waitFor(head, ['search'], 600_000))) throw new Error('search projection did not catch up');
    const searchableMs = now() - t;
    const corpus = await call('GET', '/v2/corpora/scifact');
    return { documents: docs.length, chunks: (corpus.limits as { used_parts: number }).used_parts, acknowledgedMs, searchableMs };
  } finally {
    await service.close();
  }
}

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
    const f = await ingestOnce(docs, encoder, waitFor);
    rows.push({
      mode: `wait_for=${waitFor}`,
      encoder,
      documents: f.documents,
      chunks: f.chunks,
      'acknowledged s': round(f.acknowledgedMs / 1000),
      'searchable s': round(f.searchableMs / 1000),
      'docs/s': round(f.documents / (f.searchableMs / 1000), 0),
      'chunks/s': round(f.chunks / (f.searchableMs / 1000), 0),
    });
  }
  report('ingest', rows, { bar: 'lexical ≥ 5,000 chunks/s until searchable (BENCHMARKS.md)', rss: `${round(process.memoryUsage().rss / 2 ** 20, 0)} MB` });
}
