import MiniSearch from 'minisearch';
import { create, insertMultiple, search as oramaSearch } from '@orama/orama';
import { SEARCH_INDEX, SearchIndex } from '@lib/platform';
import { runClients } from './http-clients';
import { now, percentile, report, round } from './common';
import { loadSciFact, ndcgAt, recallAt } from './scifact';
import { benchModels } from './model-env';
import { BENCH_KEY, startBenchService, untilSearchable } from './service';

type Search = Record<string, unknown>;

/**
 * Issue 5's quality and speed bench. SciFact's abstracts indexed through the API (one core part per abstract:
 * "title. text"; the corpus gets the default encoder), then the split's queries over HTTP with limit 100:
 * nDCG@10 and Recall@100 for lexical only, semantic only, the default hybrid, each extra lexical_interpolation
 * asked for, and the default hybrid with each reranker. Then latency over HTTP (limit 10) for lexical and
 * hybrid, and the lexical engine in process against MiniSearch and Orama on the same data (ratio of medians).
 * `npm run bench -- scifact [test|train] [λ,λ,…] [rounds=3]`. Tune on train only.
 */
export async function scifactBench(args: string[]): Promise<void> {
  const split = args[0] === 'train' ? 'train' : 'test';
  const extraLambdas = args[1] ? args[1].split(',').filter(Boolean).map(Number) : [];
  const rounds = Number(args[2] ?? 3);
  const data = loadSciFact(split);
  const models = benchModels();
  const service = await startBenchService('scifact', models.env);
  const { call } = service;
  const rows: Record<string, unknown>[] = [];
  const notes: Record<string, unknown> = {};
  try {
    await call('POST', '/v2/corpora', { key: 'scifact', name: 'SciFact', ...(models.encoderName ? { encoder_name: models.encoderName } : {}) });
    const encoder = ((await call('GET', '/v2/corpora/scifact')) as { encoder_name: string }).encoder_name;
    let t = now();
    const requests = data.corpus.map((d) => ({
      method: 'POST',
      path: '/v2/corpora/scifact/documents?wait_for=indexed',
      body: { id: d.id, type: 'core', document_parts: [{ text: `${d.title}. ${d.text}` }] },
    }));
    await runClients(service.started.url, BENCH_KEY, requests, 8);
    await untilSearchable(service.started, 600_000);
    notes.ingest = `${data.corpus.length} abstracts through POST /documents (8 clients, encoder ${encoder}) searchable in ${round((now() - t) / 1000)} s`;

    const quality = async (label: string, search: Search) => {
      let ndcg = 0;
      let recall = 0;
      const times: number[] = [];
      for (const [qid, text] of data.queries) {
        const started = now();
        const res = await call('POST', '/v2/corpora/scifact/query', { query: text, search: { limit: 100, ...search } });
        times.push(now() - started);
        const ranked = [...new Set((res.search_results as { document_id: string }[]).map((x) => x.document_id))];
        ndcg += ndcgAt(ranked, data.qrels.get(qid)!);
        recall += recallAt(ranked, data.qrels.get(qid)!);
      }
      const n = data.queries.size;
      rows.push({ run: label, [`nDCG@10 (${split})`]: round(ndcg / n, 4), 'R@100': round(recall / n, 4), 'p50 ms (limit 100)': round(percentile(times, 50)) });
    };
    await quality('lexical only (λ = 1)', { lexical_interpolation: 1 });
    await quality('semantic only (λ = 0)', { lexical_interpolation: 0 });
    await quality('default hybrid (λ = 0.005)', {});
    for (const l of extraLambdas) await quality(`hybrid λ = ${l}`, { lexical_interpolation: l });
    await quality('default hybrid + mmr (diversity_bias 0.1)', { reranker: { type: 'mmr', diversity_bias: 0.1 } });
    await quality('default hybrid + userfn sqrt(score) (order kept)', { reranker: { type: 'userfn', user_function: "sqrt(get('$.score'))" } });
    await quality('default hybrid + chain(mmr 0.1, userfn)', {
      reranker: { type: 'chain', rerankers: [{ type: 'mmr', diversity_bias: 0.1 }, { type: 'userfn', user_function: "sqrt(get('$.score'))" }] },
    });
    if (models.rerankerName) await quality(`default hybrid + customer_reranker (${models.rerankerName}, in process)`, { reranker: { type: 'customer_reranker', reranker_name: models.rerankerName } });
    else rows.push({ run: 'default hybrid + customer_reranker', [`nDCG@10 (${split})`]: 'not run: needs RERANKER_MODEL_DIR (an ONNX cross-encoder) or a rerank endpoint; none is here' });

    // Latency over HTTP at the API's default limit (10).
    const latency: Record<string, unknown>[] = [];
    for (const [label, search] of [['lexical', { lexical_interpolation: 1 }], ['hybrid (default)', {}]] as const) {
      const times: number[] = [];
      for (let r = 0; r < rounds; r++) {
        for (const text of data.queries.values()) {
          t = now();
          await call('POST', '/v2/corpora/scifact/query', { query: text, search });
          times.push(now() - t);
        }
      }
      latency.push({ mode: `${label}, HTTP, limit 10`, queries: times.length, 'p50 ms': round(percentile(times, 50)), 'p99 ms': round(percentile(times, 99)) });
    }
    notes.latency = latency;

    // The lexical engine in process against MiniSearch and Orama, same documents, same queries, top 100.
    const index = service.started.app.get<symbol, SearchIndex>(SEARCH_INDEX, { strict: false });
    const mini = new MiniSearch<{ id: string; title: string; text: string }>({ fields: ['title', 'text'] });
    mini.addAll(data.corpus);
    const orama = create({ schema: { title: 'string', text: 'string' } as const });
    await insertMultiple(orama, data.corpus.map((d) => ({ id: d.id, title: d.title, text: d.text })));
    const engines: [string, (q: string) => Promise<string[]>][] = [
      ['ours (SearchIndex, lexical)', async (q) => (await index.search('scifact', { mode: 'lexical', text: q, limit: 100 })).map((h) => h.documentId)],
      ['MiniSearch 7.2', async (q) => mini.search(q).slice(0, 100).map((r) => String(r.id))],
      ['Orama 3.1 (threshold 1: any word)', async (q) => (await oramaSearch(orama, { term: q, properties: ['title', 'text'], limit: 100, threshold: 1 })).hits.map((h) => String(h.id))],
    ];
    const comparison: Record<string, unknown>[] = [];
    let ourMedian = 0;
    for (const [name, run] of engines) {
      const times: number[] = [];
      let ndcg = 0;
      let recall = 0;
      for (let r = 0; r < rounds; r++) {
        for (const [qid, text] of data.queries) {
          t = now();
          const ranked = await run(text);
          times.push(now() - t);
          if (r === 0) {
            ndcg += ndcgAt(ranked, data.qrels.get(qid)!);
            recall += recallAt(ranked, data.qrels.get(qid)!);
          }
        }
      }
      const p50 = percentile(times, 50);
      if (!ourMedian) ourMedian = p50;
      const n = data.queries.size;
      comparison.push({ engine: name, [`nDCG@10 (${split})`]: round(ndcg / n, 4), 'R@100': round(recall / n, 4), 'p50 ms': round(p50, 3), 'p99 ms': round(percentile(times, 99), 3), 'their p50 / ours': round(p50 / ourMedian) });
    }
    notes.in_process = comparison;
    notes.rss = `${round(process.memoryUsage().rss / 2 ** 20, 0)} MB`;
    console.table(latency);
    console.table(comparison);
    report(`scifact-${split}`, rows, notes);
  } finally {
    await service.close();
  }
}
