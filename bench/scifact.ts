import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const SCIFACT_DIR = process.env.SCIFACT_DIR ?? join(process.cwd(), '..', 'shared', 'datasets', 'scifact');

export interface SciFact {
  corpus: { id: string; title: string; text: string }[];
  queries: Map<string, string>;
  qrels: Map<string, Set<string>>;
}

function lines(file: string): string[] {
  return readFileSync(join(SCIFACT_DIR, file), 'utf8').split('\n').filter(Boolean);
}

export function loadSciFact(split: 'test' | 'train'): SciFact {
  const corpus = lines('corpus.jsonl').map((l) => {
    const d = JSON.parse(l) as { _id: string; title: string; text: string };
    return { id: d._id, title: d.title, text: d.text };
  });
  return { corpus, ...sciFactQueries(split) };
}

/** A split's queries (those with a relevant document) and their relevant documents, without the corpus. */
function sciFactQueries(split: 'test' | 'train'): Pick<SciFact, 'queries' | 'qrels'> {
  const allQueries = new Map(lines('queries.jsonl').map((l) => {
    const q = JSON.parse(l) as { _id: string; text: string };
    return [q._id, q.text] as const;
  }));
  const qrels = new Map<string, Set<string>>();
  for (const row of lines(`qrels/${split}.tsv`).slice(1)) {
    const [q, d, score] = row.split('\t');
    if (Number(score) > 0) qrels.set(q, (qrels.get(q) ?? new Set()).add(d));
  }
  const queries = new Map([...qrels.keys()].map((q) => [q, allQueries.get(q)!]));
  return { queries, qrels };
}

/**
 * Queries that warm a service before its query latency is timed: SciFact's train queries, never the timed test
 * queries, so the timed ones stay unseen (no word of theirs met before for being one of them). A service that has
 * served a while has its code compiled and its buffers grown: in a fresh process on 1M chunks, 300 test queries
 * ranked 0.7 ms slower at p50 (2.2 ms on the mean) the first time than the second, and 0.4 ms (0.6) once 600 train
 * queries had run first (docs/benchmarks/2026-11-29-session-22.md).
 */
export function warmUpQueries(count = 300): string[] {
  return [...sciFactQueries('train').queries.values()].slice(0, count);
}

/** nDCG@k with binary relevance and log2 discount (BEIR's definition). */
export function ndcgAt(ranked: string[], relevant: Set<string>, k = 10): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((d, i) => {
    if (relevant.has(d)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return ideal === 0 ? 0 : dcg / ideal;
}

export function recallAt(ranked: string[], relevant: Set<string>, k = 100): number {
  const hits = ranked.slice(0, k).filter((d) => relevant.has(d)).length;
  return relevant.size === 0 ? 0 : hits / relevant.size;
}
