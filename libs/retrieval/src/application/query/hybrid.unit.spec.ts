import { GloveEncoder } from '@lib/encoders';
import type { SearchHit } from '@lib/platform';
import { blend, lexicalScore, partKey, lexicalWeight, semanticScore, squashedBm25 } from './hybrid';

const hit = (documentId: string, scores: { textScore?: number; vectorDistance?: number }): SearchHit => ({
  documentId,
  seq: 0,
  text: documentId,
  partMetadata: {},
  documentMetadata: {},
  score: 0,
  ...scores,
});

describe('hybrid scoring', () => {
  it('maps lexical_interpolation to a convex weight: 0 is semantic only, 1 lexical only, in between increasing', () => {
    expect(lexicalWeight(0, 100)).toBe(0);
    expect(lexicalWeight(1, 100)).toBe(1);
    expect(lexicalWeight(0.005, 100)).toBeCloseTo(0.5 / 1.495, 10);
    // A larger unit (a weaker encoder) leans on the lexical side more at the same λ.
    expect(lexicalWeight(0.005, 2200)).toBeGreaterThan(lexicalWeight(0.005, 100));
    const ws = [0.001, 0.005, 0.025, 0.1, 0.5].map((l) => lexicalWeight(l, 100));
    ws.forEach((w, i) => {
      expect(w).toBeGreaterThan(0);
      expect(w).toBeLessThan(1);
      if (i) expect(w).toBeGreaterThan(ws[i - 1]);
    });
  });

  it('leans the default query on BM25 at 0.98 with GloVe: its word vectors only reorder near-ties (SciFact train, docs/search.md)', () => {
    expect(lexicalWeight(0.005, GloveEncoder.LEXICAL_UNIT)).toBeCloseTo(0.98, 2);
  });

  it('keeps both scores in 0–1', () => {
    expect(squashedBm25(0)).toBe(0);
    expect(squashedBm25(1e9)).toBeLessThanOrEqual(1);
    expect(semanticScore(1.7)).toBe(0);
    expect(semanticScore(-0.1)).toBe(1);
  });

  it('takes the index\'s calibrated lexical score where it has one, and squashes the raw score otherwise', () => {
    expect(lexicalScore({ ...hit('a', { textScore: 3e-6 }), lexicalRelevance: 0.86 })).toBe(0.86);
    expect(lexicalScore(hit('b', { textScore: 30 }))).toBeCloseTo(squashedBm25(30), 10);
  });

  it('ranks by the blend: the semantic side decides at weight 0, the lexical side at weight 1', () => {
    const lexical = [hit('a', { textScore: 30 }), hit('b', { textScore: 5 })];
    const vector = [hit('b', { vectorDistance: 0.1 }), hit('a', { vectorDistance: 0.6 })];
    const order = (w: number) => blend(lexical, vector, w, 10, partKey).sort((x, y) => y.score - x.score).map((s) => s.hit.documentId);
    expect(order(0)).toEqual(['b', 'a']);
    expect(order(1)).toEqual(['a', 'b']);
    const mid = blend(lexical, vector, 0.5, 10, partKey).find((s) => s.hit.documentId === 'a')!;
    expect(mid.score).toBeCloseTo(0.5 * semanticScore(0.6) + 0.5 * squashedBm25(30), 10);
  });

  it('gives a part one side missed that side’s floor: 0 when the side ran out, its lowest score when it was cut at depth', () => {
    const onlyVector = hit('v', { vectorDistance: 0.2 });
    // The lexical side returned fewer than depth: the part did not match a query word.
    const short = blend([hit('l', { textScore: 10 })], [onlyVector], 0.5, 5, partKey).find((s) => s.hit.documentId === 'v')!;
    expect(short.score).toBeCloseTo(0.5 * semanticScore(0.2), 10);
    // The lexical side was cut at depth 1: the part scored at most the lowest lexical score retrieved.
    const cut = blend([hit('l', { textScore: 10 })], [onlyVector], 0.5, 1, partKey).find((s) => s.hit.documentId === 'v')!;
    expect(cut.score).toBeCloseTo(0.5 * semanticScore(0.2) + 0.5 * squashedBm25(10), 10);
  });
});
