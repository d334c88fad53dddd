import { byRowid, heapPush, heapReplaceTop, type IdTopK, type QueryTerm, rankRows, type RankRows, tfPart, type TopK } from './lexical-bounds';
import type { LexicalTable } from './lexical-postings';

/** Per table (per key), the scratch a query sums into (zeroed again as it is read, so a query costs what it touches). */
const scratch = new WeakMap<object, { acc: Float64Array; seen: Uint8Array; touched: Int32Array }>();

/**
 * The k best rows by FTS5's BM25, exhaustively: term at a time over every posting of the query's words, each query
 * phrase in order adding its contribution to a dense accumulator per row, which is the order fts5_aux.c sums them
 * in, so the scores are bit for bit bm25()'s; then the best k of the rows touched, ties to the lower internal id.
 * What the pruned ranking (lexical-top-k.ts) falls back to when its bounds cannot cut the work.
 */
export function exhaustiveTopK(table: LexicalTable, terms: readonly QueryTerm[], phrases: readonly number[], k: number, avgdl: number): TopK {
  return byRowid(table, exhaustiveIds(rankRows(table), table, terms, phrases, k, avgdl));
}

/** {@link exhaustiveTopK} by internal id, on the rows and postings given; `key` owns the accumulator. */
export function exhaustiveIds(rows: RankRows, key: object, terms: readonly QueryTerm[], phrases: readonly number[], k: number, avgdl: number): IdTopK {
  const { live, count, lens } = rows;
  const [w0, w1] = rows.weights;
  let s = scratch.get(key);
  if (!s || s.acc.length < count) {
    const size = Math.max(count, 1024) * 1.25;
    scratch.set(key, (s = { acc: new Float64Array(size), seen: new Uint8Array(size), touched: new Int32Array(size) }));
  }
  const { acc, seen, touched } = s;
  let nt = 0;
  for (const t of phrases) {
    const { idf, list } = terms[t];
    const { ids, text, title, n } = list;
    // A sparse list's row lengths are read alongside its postings (lexical-postings.ts), a dense list's by row id.
    const len = list.lens ?? lens;
    const at = list.lens !== undefined;
    for (let p = 0; p < n; p++) {
      const d = ids[p];
      const f = w0 * text[p] + w1 * title[p];
      acc[d] += idf * tfPart(f, len[at ? p : d], avgdl);
      if (seen[d] === 0) {
        seen[d] = 1;
        touched[nt++] = d;
      }
    }
  }
  const heapS = new Float64Array(k);
  const heapI = new Int32Array(k);
  let size = 0;
  for (let i = 0; i < nt; i++) {
    const d = touched[i];
    const score = acc[d];
    acc[d] = 0;
    seen[d] = 0;
    if (!live[d]) continue;
    if (size < k) heapPush(heapS, heapI, size++, score, d);
    else if (score > heapS[0] || (score === heapS[0] && d < heapI[0])) heapReplaceTop(heapS, heapI, k, score, d);
  }
  const best = Array.from({ length: size }, (_, i) => i).sort((a, b) => heapS[b] - heapS[a] || heapI[a] - heapI[b]);
  return { ids: Int32Array.from(best, (i) => heapI[i]), scores: Float64Array.from(best, (i) => heapS[i]), complete: size < k };
}
