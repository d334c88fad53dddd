import { runClients } from './http-clients';
import { now, percentile, report, round } from './common';
import { loadSciFact, ndcgAt, recallAt, SciFact } from './scifact';
import { BENCH_KEY, startBenchService, untilSearchable } from './service';

export type Layout = 'a' | 'b';

/** A section title is at most 255 characters (the API's limit); a few SciFact titles are longer: cut at a word. */
const sectionTitle = (title: string): string => (title.length <= 255 ? title : title.slice(0, title.lastIndexOf(' ', 255)));
export const LAYOUTS: Record<Layout, { label: string; body: (d: SciFact['corpus'][number]) => unknown }> = {
  // What a user sends for a paper: one section titled with the paper's title (default sentence chunking).
  a: { label: 'structured, title as section title', body: (d) => ({ id: d.id, type: 'structured', sections: [{ title: sectionTitle(d.title), text: d.text }] }) },
  b: { label: 'core, title folded into the text', body: (d) => ({ id: d.id, type: 'core', document_parts: [{ text: `${d.title}. ${d.text}` }] }) },
};

/**
 * Issue 19, "quality and cost as users index and query": SciFact indexed through the API in each layout, then
 * the split's queries over HTTP for 100 results (nDCG@10, Recall@100 over distinct documents, p50) and for 10
 * (p50), lexical and the default hybrid, plus each extra lexical_interpolation asked for (tune on train only).
 * `npm run bench -- scifact-layouts [train|test] [λ,λ,…] [a,b]`.
 */
export async function scifactLayoutsBench(args: string[]): Promise<void> {
  const split = args[0] === 'train' ? 'train' : 'test';
  const lambdas = args[1] ? args[1].split(',').filter(Boolean).map(Number) : [];
  const layouts = (args[2] ?? 'a,b').split(',') as Layout[];
  const data = loadSciFact(split);
  const service = await startBenchService('scifact-layouts');
  const { call } = service;
  const rows: Record<string, unknown>[] = [];
  const notes: Record<string, unknown> = {};
  try {
    for (const layout of layouts) {
      const key = `scifact_${layout}`;
      await call('POST', '/v2/corpora', { key, name: `SciFact ${layout}` });
      const t = now();
      const requests = data.corpus.map((d) => ({ method: 'POST', path: `/v2/corpora/${key}/documents?wait_for=indexed`, body: LAYOUTS[layout].body(d) }));
      await runClients(service.started.url, BENCH_KEY, requests, 8);
      await untilSearchable(service.started, 900_000);
      notes[`ingest ${layout}`] = `${data.corpus.length} abstracts (${LAYOUTS[layout].label}) searchable in ${round((now() - t) / 1000)} s`;

      // Both limits of one query are asked back to back (which first alternates), so a change in the shared
      // machine's load falls on both alike and their ratio, the cost of 90 more results, holds still.
      const run = async (label: string, search: Record<string, unknown>, withLimit10: boolean) => {
        let ndcg = 0;
        let recall = 0;
        const times: Record<number, number[]> = { 10: [], 100: [] };
        const top: number[] = [];
        const ask = async (text: string, limit: number) => {
          const started = now();
          const res = await call('POST', `/v2/corpora/${key}/query`, { query: text, search: { limit, ...search } });
          times[limit].push(now() - started);
          return res.search_results as { document_id: string; score: number }[];
        };
        let i = 0;
        for (const [qid, text] of data.queries) {
          if (withLimit10 && i % 2 === 1) await ask(text, 10);
          const results = await ask(text, 100);
          if (withLimit10 && i++ % 2 === 0) await ask(text, 10);
          if (results[0]) top.push(results[0].score);
          const ranked = [...new Set(results.map((x) => x.document_id))];
          ndcg += ndcgAt(ranked, data.qrels.get(qid)!);
          recall += recallAt(ranked, data.qrels.get(qid)!);
        }
        const n = data.queries.size;
        const [p10, p100] = [percentile(times[10], 50), percentile(times[100], 50)];
        return {
          layout,
          run: label,
          [`nDCG@10 (${split})`]: round(ndcg / n, 4),
          'R@100': round(recall / n, 4),
          'p50 ms (limit 100)': round(p100),
          ...(withLimit10 && { 'p50 ms (limit 10)': round(p10), 'p50 100 / 10': round(p100 / p10) }),
          'top score p50': round(percentile(top, 50), 3),
        };
      };
      for (const [label, search] of [['lexical (λ = 1)', { lexical_interpolation: 1 }], ['default hybrid', {}], ...lambdas.map((l) => [`hybrid λ = ${l}`, { lexical_interpolation: l }] as const)] as const) {
        rows.push(await run(label, search, !label.startsWith('hybrid λ')));
        console.log(JSON.stringify(rows[rows.length - 1]));
      }
    }
    notes.rss = `${round(process.memoryUsage().rss / 2 ** 20, 0)} MB`;
    report(`scifact-layouts-${split}`, rows, notes);
  } finally {
    await service.close();
  }
}
