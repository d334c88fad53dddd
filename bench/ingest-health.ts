import { now, percentile, report, round } from './common';
import { startHealthPinger } from './health-pinger';
import { runClients } from './http-clients';
import { loadSciFact } from './scifact';
import { BENCH_KEY, startBenchService } from './service';

/**
 * Issue 19: how long `GET /health` takes while the service ingests all of SciFact (8 clients, `wait_for=indexed`,
 * so appends, chunking and the search projection all run at once) until every chunk is searchable. A client on
 * another thread asks for /health every 5 ms; its p99 is what other callers wait behind the ingest.
 */
export async function ingestHealthBench(args: string[]): Promise<void> {
  const limit = args[0] === undefined || args[0] === 'all' ? Infinity : Number(args[0]);
  const encoder = (args[1] ?? 'default').replace(/^encoder=/, '');
  const docs = loadSciFact('test').corpus.slice(0, limit);
  const service = await startBenchService('ingest-health');
  const { infra } = service.started;
  try {
    await service.call('POST', '/v2/corpora', { key: 'scifact', name: 'SciFact', ...(encoder === 'default' ? {} : { encoder_name: encoder }) });
    const idle = startHealthPinger(service.started.url);
    await new Promise((r) => setTimeout(r, 2000));
    const quiet = await idle.stop();
    const pinger = startHealthPinger(service.started.url);
    const t = now();
    const requests = docs.map((d) => ({
      method: 'POST',
      path: '/v2/corpora/scifact/documents?wait_for=indexed',
      body: { id: d.id, type: 'structured', sections: [{ text: `${d.title}. ${d.text}` }] },
    }));
    await runClients(service.started.url, BENCH_KEY, requests, 8);
    const head = await infra.events.headPosition();
    if (!(await infra.progress.waitFor(head, ['search'], 600_000))) throw new Error('search projection did not catch up');
    const searchable = now() - t;
    const { latencies, failed } = await pinger.stop();
    const chunks = ((await service.call('GET', '/v2/corpora/scifact')).limits as { used_parts: number }).used_parts;
    const row = (when: string, xs: number[], f: number) => ({
      when,
      'health answers': xs.length,
      'p50 ms': round(percentile(xs, 50), 2),
      'p99 ms': round(percentile(xs, 99), 2),
      'max ms': round(Math.max(...xs), 1),
      ...(f ? { failed: f } : {}),
    });
    report('ingest-health', [row('idle (2 s)', quiet.latencies, quiet.failed), row('under ingest', latencies, failed)], {
      documents: docs.length,
      encoder,
      writer: process.env.EVENT_STORE_WRITER ?? 'inline',
      chunks,
      'searchable s': round(searchable / 1000),
      'chunks/s': round(chunks / (searchable / 1000), 0),
      bar: '/health p99 ≤ 20 ms under a full ingest (issue 19)',
    });
  } finally {
    await service.close();
  }
}
