import { assertNever, queryTerms } from '@lib/platform';
import { compileUserFunction } from './user-function';
import type { SearchResult } from './search-result';

/** The reference API's `search.reranker`, one stage or a chain of them. */
export type RerankerSpec =
  | { readonly type: 'none'; readonly limit?: number }
  | { readonly type: 'mmr'; readonly diversityBias: number; readonly limit?: number; readonly cutoff?: number }
  | { readonly type: 'userfn'; readonly userFunction: string; readonly limit?: number; readonly cutoff?: number }
  /** `includeContext` (default true): the model scores each result's text with its context window, when one is asked. */
  | { readonly type: 'customer_reranker'; readonly rerankerName: string; readonly limit?: number; readonly cutoff?: number; readonly includeContext?: boolean }
  | { readonly type: 'chain'; readonly rerankers: readonly RerankerSpec[] };

/** A model reranker (cross-encoder or rerank endpoint): relevance of each text to the query, 0 to 1. */
export interface ModelReranker {
  score(query: string, texts: readonly string[]): Promise<number[]>;
}

export interface RerankContext {
  readonly query: string;
  readonly now: Date;
  /** Where the spec sits in the request, for field errors (`search.reranker`, `search.reranker.rerankers[1]`). */
  readonly field: string;
  /** Resolves `reranker_name`; throws a 400 naming what to configure when there is none. */
  readonly model: (name: string, field: string) => ModelReranker;
  /** The results' texts with the request's context window, when it has one (`include_context`). */
  readonly withContext?: (results: readonly SearchResult[]) => Promise<string[]>;
}

/** Applies a reranker: each stage reorders its input, then keeps results at or above `cutoff`, then the first `limit`. */
export async function rerank(spec: RerankerSpec, results: SearchResult[], ctx: RerankContext): Promise<SearchResult[]> {
  switch (spec.type) {
    case 'none':
      return cut(results, spec);
    case 'chain': {
      let out = results;
      for (const [i, stage] of spec.rerankers.entries()) out = await rerank(stage, out, { ...ctx, field: `${ctx.field}.rerankers[${i}]` });
      return out;
    }
    case 'userfn': {
      const fn = compileUserFunction(spec.userFunction, `${ctx.field}.user_function`, ctx.now);
      const scored = results.flatMap((r) => {
        const score = fn(r);
        return score === null ? [] : [{ ...r, score }];
      });
      return cut(byScore(scored), spec);
    }
    case 'mmr':
      return cut(mmr(results, spec.diversityBias), spec);
    case 'customer_reranker': {
      const model = ctx.model(spec.rerankerName, `${ctx.field}.reranker_name`);
      const texts = spec.includeContext !== false && ctx.withContext ? await ctx.withContext(results) : results.map((r) => r.text);
      const scores = results.length ? await model.score(ctx.query, texts) : [];
      return cut(byScore(results.map((r, i) => ({ ...r, score: scores[i] ?? 0 }))), spec);
    }
    default:
      return assertNever(spec);
  }
}

function cut(results: SearchResult[], spec: { readonly limit?: number; readonly cutoff?: number }): SearchResult[] {
  const kept = spec.cutoff === undefined ? results : results.filter((r) => r.score >= spec.cutoff!);
  return spec.limit === undefined ? kept : kept.slice(0, spec.limit);
}

/** Whether a reranker (or a stage of a chain) compares results with each other, and so wants their vectors. */
export function comparesResults(spec: RerankerSpec): boolean {
  return spec.type === 'mmr' || (spec.type === 'chain' && spec.rerankers.some(comparesResults));
}

const byScore = (results: SearchResult[]): SearchResult[] => [...results].sort((a, b) => b.score - a.score);

/**
 * Maximal marginal relevance: picks, one at a time, the result maximising (1 − bias)·score − bias·(its
 * highest similarity to those already picked); that value, clamped to 0–1, becomes its score. Similarity is
 * the cosine of the parts' stored vectors when every result has one from the same encoder (as the reference's
 * MMR compares embeddings), else the cosine of the texts' word sets (query-term tokenisation).
 */
export function mmr(results: readonly SearchResult[], bias: number): SearchResult[] {
  const similarity = embeddingSimilarity(results) ?? wordSetSimilarity(results);
  const maxSim = results.map(() => 0);
  const left = new Set(results.map((_, i) => i));
  const out: SearchResult[] = [];
  while (left.size) {
    let best = -1;
    let bestValue = -Infinity;
    for (const i of left) {
      const value = (1 - bias) * results[i].score - bias * maxSim[i];
      if (value > bestValue) [best, bestValue] = [i, value];
    }
    left.delete(best);
    out.push({ ...results[best], score: Math.min(1, Math.max(0, bestValue)) });
    for (const i of left) maxSim[i] = Math.max(maxSim[i], similarity(i, best));
  }
  return out;
}

/** Cosine of stored vectors, or undefined when some result has none or they come from different encoders. */
function embeddingSimilarity(results: readonly SearchResult[]): ((i: number, j: number) => number) | undefined {
  const first = results[0];
  if (!first?.vector || !results.every((r) => r.vector && r.encoder === first.encoder && r.vector.length === first.vector!.length)) return undefined;
  const vectors = results.map((r) => r.vector!);
  const norms = vectors.map((v) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0)));
  return (i, j) => {
    if (!norms[i] || !norms[j]) return 0;
    const a = vectors[i];
    const b = vectors[j];
    let dot = 0;
    for (let k = 0; k < a.length; k++) dot += a[k] * b[k];
    return dot / (norms[i] * norms[j]);
  };
}

function wordSetSimilarity(results: readonly SearchResult[]): (i: number, j: number) => number {
  const vectors = termVectors(results.map((r) => r.text));
  return (i, j) => cosine(vectors[i], vectors[j]);
}

/** A text's term counts as term ids in ascending order, with the vector's norm: cosines are then a merge. */
interface TermVector {
  readonly ids: Int32Array;
  readonly counts: Float64Array;
  readonly norm: number;
}

function termVectors(texts: readonly string[]): TermVector[] {
  const dictionary = new Map<string, number>();
  return texts.map((text) => {
    const counts = new Map<number, number>();
    for (const t of queryTerms(text)) {
      let id = dictionary.get(t);
      if (id === undefined) dictionary.set(t, (id = dictionary.size));
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    const ids = Int32Array.from(counts.keys()).sort();
    const values = Float64Array.from(ids, (id) => counts.get(id)!);
    return { ids, counts: values, norm: Math.sqrt(values.reduce((sum, n) => sum + n * n, 0)) };
  });
}

function cosine(a: TermVector, b: TermVector): number {
  if (!a.norm || !b.norm) return 0;
  let dot = 0;
  for (let i = 0, j = 0; i < a.ids.length && j < b.ids.length; ) {
    if (a.ids[i] === b.ids[j]) dot += a.counts[i++] * b.counts[j++];
    else if (a.ids[i] < b.ids[j]) i++;
    else j++;
  }
  return dot / (a.norm * b.norm);
}
