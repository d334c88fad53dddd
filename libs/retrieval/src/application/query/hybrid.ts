import type { RankedPart, SearchHit } from '@lib/platform';

/** What blending reads of a hit or of a ranked part. */
type Scores = Pick<SearchHit | RankedPart, 'score' | 'textScore' | 'lexicalRelevance' | 'vectorDistance'>;

/**
 * Hybrid scoring (docs/search.md). A part's score is the convex blend (1 − w)·semantic + w·lexical of two scores
 * in 0–1: semantic = the cosine of the query's and the part's vectors (negative taken as 0), lexical = the index's
 * calibrated relevance (else BM25 squashed by bm25 / (bm25 + 10)). The request's `lexical_interpolation` λ is the reference API's weight, whose
 * lexical side is on a scale far above the semantic one (its recommended values are 0.005–0.025); it maps to
 * the convex weight w = λ·U / ((1 − λ) + λ·U), which keeps λ = 0 purely semantic and λ = 1 purely lexical. The
 * unit U is the encoder's (Encoder.lexicalUnit): how much the semantic side can be trusted.
 */
export function lexicalWeight(lambda: number, unit: number): number {
  if (lambda <= 0) return 0;
  if (lambda >= 1) return 1;
  return (lambda * unit) / (1 - lambda + lambda * unit);
}

/** BM25 is unbounded; this squashes it monotonically into 0–1 (for an adapter that cannot calibrate it). */
export const squashedBm25 = (bm25: number): number => (bm25 > 0 ? bm25 / (bm25 + 10) : 0);

/** A hit's lexical score in 0–1: the adapter's calibrated relevance where it has one (docs/search.md), else squashed. */
export const lexicalScore = (hit: Scores): number => hit.lexicalRelevance ?? squashedBm25(hit.textScore ?? hit.score);

/** Cosine similarity from sqlite-vec's / Typesense's cosine distance (1 − cos), negative similarity as 0. */
export const semanticScore = (distance: number): number => Math.min(1, Math.max(0, 1 - distance));

export interface Scored<T> {
  readonly hit: T;
  readonly score: number;
}
export type ScoredHit = Scored<SearchHit>;

/** A part within a corpus, for hits read with their content. */
export const partKey = (h: SearchHit): string => `${h.documentId}\u0000${h.seq}`;

/**
 * Blends one corpus's lexical and vector candidate lists (each the top `depth` of its side). A part found by
 * one side only gets, for the other side, that side's lowest retrieved score when the side returned a full
 * `depth` (the part scored at most that) and 0 when it returned fewer (the part did not match at all).
 * Candidates are hits or ranked refs (SearchIndex.rank), told apart by `key`.
 */
export function blend<T extends Scores>(lexical: readonly T[], vector: readonly T[], weight: number, depth: number, key: (t: T) => string | number): Scored<T>[] {
  const lex = new Map(lexical.map((h) => [key(h), lexicalScore(h)]));
  const sem = new Map(vector.map((h) => [key(h), semanticScore(h.vectorDistance ?? 1)]));
  const floor = (scores: Map<string | number, number>, returned: number) => (returned < depth || scores.size === 0 ? 0 : Math.min(...scores.values()));
  const lexFloor = floor(lex, lexical.length);
  const semFloor = floor(sem, vector.length);
  const seen = new Map<string | number, T>();
  for (const h of [...lexical, ...vector]) if (!seen.has(key(h))) seen.set(key(h), h);
  return [...seen.entries()].map(([k, hit]) => ({
    hit,
    score: (1 - weight) * (sem.get(k) ?? semFloor) + weight * (lex.get(k) ?? lexFloor),
  }));
}
