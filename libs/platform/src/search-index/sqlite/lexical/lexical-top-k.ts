import { byRowid, heapOffer, type IdTopK, type QueryTerm, rankRows, type RankRows, seek, tfBound, tfPart, type TopK } from './lexical-bounds';
import { exhaustiveIds } from './lexical-exhaustive';
import type { LexicalTable, PostingList } from './lexical-postings';

export type { QueryTerm, TopK } from './lexical-bounds';

/**
 * Slack on every pruning comparison: partial sums are added in bound order, not phrase order, so they may differ
 * from the exact score in the last bits (~1e-14 relative for 150 terms); a row is dropped only when it misses by more.
 */
const SLACK = 1 - 1e-9;
/**
 * Merge steps allowed, as a multiple of the query's postings, before the exhaustive loop is cheaper: a merge step
 * is a sequential read and write, an exhaustive posting a cache miss or more (measured at 1M rows: ~4×).
 */
const MERGE_WORK = 2;

/** Per table (per key), two candidate buffers (internal ids ascending, partial scores alongside) that merges alternate. */
const scratch = new WeakMap<object, { ids: [Int32Array, Int32Array]; scores: [Float64Array, Float64Array] }>();

/** The buffers, holding at least `need` rows: grown as queries need them, so an index pays for what its queries merge. */
function scratchOf(key: object, count: number, need: number) {
  let s = scratch.get(key);
  if (!s || s.ids[0].length < need) {
    const size = Math.ceil(Math.min(Math.max(need, 1024) * 1.5, Math.max(count, 1024)));
    const grow = <T extends Int32Array | Float64Array>(old: T | undefined, fresh: T) => (old && fresh.set(old), fresh);
    s = {
      ids: [grow(s?.ids[0], new Int32Array(size)), grow(s?.ids[1], new Int32Array(size))],
      scores: [grow(s?.scores[0], new Float64Array(size)), grow(s?.scores[1], new Float64Array(size))],
    };
    scratch.set(key, s);
  }
  return s;
}

/**
 * The k best rows by FTS5's BM25, exactly, with safe term-at-a-time pruning ("quit/continue", docs/search.md).
 * Terms go from the largest bound (IDF × the list's largest possible tf part) down, each list merged into a sparse
 * candidate list kept in id order (sequential reads: a dense accumulator's random writes cost a cache miss a
 * posting). Once the k-th best partial score beats all that the terms left could add, no unseen row can reach the
 * top k: the rest (the common words, the long lists) are only looked up for the candidates, by galloping, and the
 * candidates that cannot reach the k-th any more are dropped after every term. The survivors are then scored again
 * phrase by phrase in query order, as fts5_aux.c sums them, so the scores are bit for bit bm25()'s and the rows the
 * exhaustive ranking's (ties to the lower internal id). When the bounds cannot cut the work, the exhaustive loop.
 */
export function topK(table: LexicalTable, terms: readonly QueryTerm[], phrases: readonly number[], k: number, avgdl: number): TopK {
  return byRowid(table, topKIds(rankRows(table), table, terms, phrases, k, avgdl));
}

/**
 * Two ranges of one query ranked at once (lexical-split.ts) share their k-th best partial scores: each is a lower
 * bound of the global k-th best score, so either range may prune by the larger. A range's answer then holds every
 * row of the global top k it has, not always its own top k; the merge of both is still exactly the global top k.
 */
export interface SharedBar {
  /** Per range, its k-th best partial score so far (-Infinity until it has k candidates), in shared memory. */
  readonly slots: Float64Array;
  readonly mine: 0 | 1;
}

/** Publishes this range's bar and returns the higher of both ranges'. */
function raise(bar: SharedBar | undefined, theta: number): number {
  if (!bar) return theta;
  if (theta > bar.slots[bar.mine]) bar.slots[bar.mine] = theta;
  return Math.max(theta, bar.slots[1 - bar.mine]);
}

/**
 * {@link topK} by internal id, on the rows and postings given (views of a range of ids, on either thread); `key`
 * owns the candidate buffers (one per table and thread).
 */
export function topKIds(rows: RankRows, key: object, terms: readonly QueryTerm[], phrases: readonly number[], k: number, avgdl: number, bar?: SharedBar): IdTopK {
  if (k < 1) return { ids: new Int32Array(0), scores: new Float64Array(0), complete: false };
  const { live, lens, count } = rows;
  const [w0, w1] = rows.weights;
  let s = scratchOf(key, count, 0);
  const m = terms.length;
  // A view carries its list's bound; a whole list computes it from its blocks.
  const order = terms.map((t) => ({ t, ub: t.times * t.idf * (t.tf ?? tfBound(t.list as PostingList, avgdl)) })).sort((a, b) => b.ub - a.ub);
  const rest = new Float64Array(m + 1); // what terms j.. could still add to any row
  for (let j = m - 1; j >= 0; j--) rest[j] = rest[j + 1] + order[j].ub;
  const heap = new Float64Array(k);
  let cur = 0;
  let nc = 0;
  let theta = -Infinity;
  // This range's own k-th best partial score over its live candidates (-Infinity until it has k), kept by the
  // merges as they write (see below), so that no pass over the candidates is spent finding it.
  let own = -Infinity;
  let budget = MERGE_WORK * terms.reduce((sum, t) => sum + t.list.n, 0);
  let j = 0;
  for (; j < m; j++) {
    if (nc >= k || bar) {
      theta = raise(bar, own);
      if (theta * SLACK > rest[j]) break;
    }
    const { list, idf, times } = order[j].t;
    if ((budget -= nc + list.n) < 0) return exhaustiveIds(rows, key, terms, phrases, k, avgdl); // its own top k: merges as well
    s = scratchOf(key, count, Math.min(nc + list.n, count)); // the merged rows are distinct
    const [ai, as, oi, os] = [s.ids[cur], s.scores[cur], s.ids[1 - cur], s.scores[1 - cur]];
    const { ids, text, title, n } = list;
    // A sparse list's row lengths are read alongside its postings, by position; a dense list's by row id.
    const len = list.lens ?? lens;
    const at = list.lens !== undefined;
    const w = idf * times;
    // The k best live scores written, in a min-heap: only a score above `low` can enter, the heap's worst once
    // it is full, and before that the previous term's k-th best (partial scores only grow, so the new k-th best is
    // at least that; when fewer than k scores pass it, it is still the k-th best).
    let size = 0;
    let low = own;
    let a = 0;
    let o = 0;
    for (let p = 0; p < n; p++) {
      const d = ids[p];
      while (a < nc && ai[a] < d) {
        const v = as[a];
        const id = ai[a++];
        oi[o] = id;
        os[o++] = v;
        if (v > low && live[id] === 1 && (size = heapOffer(heap, size, k, v)) === k) low = heap[0];
      }
      const f = w0 * text[p] + w1 * title[p];
      const c = w * tfPart(f, len[at ? p : d], avgdl);
      const v = a < nc && ai[a] === d ? as[a++] + c : c;
      oi[o] = d;
      os[o++] = v;
      if (v > low && live[d] === 1 && (size = heapOffer(heap, size, k, v)) === k) low = heap[0];
    }
    while (a < nc) {
      const v = as[a];
      const id = ai[a++];
      oi[o] = id;
      os[o++] = v;
      if (v > low && live[id] === 1 && (size = heapOffer(heap, size, k, v)) === k) low = heap[0];
    }
    own = low;
    nc = o;
    cur = 1 - cur;
  }
  const ci = s.ids[cur];
  const cs = s.scores[cur];
  if (j === m) theta = raise(bar, own);
  nc = prune(ci, cs, nc, live, theta, rest[j]);
  for (; j < m; j++) {
    const { list, idf, times } = order[j].t;
    const { ids, text, title, n } = list;
    const len = list.lens ?? lens;
    const at = list.lens !== undefined;
    const w = idf * times;
    // The k-th best kept as in the merges; a candidate dropped meanwhile (by the other range's bar) still has its
    // score, so the k-th best met before remains a lower bound of the k-th best of all.
    let size = 0;
    let low = own;
    for (let c = 0, p = 0; c < nc; c++) {
      const d = ci[c];
      if (p < n) {
        p = seek(ids, n, p, d);
        if (p < n && ids[p] === d) {
          const f = w0 * text[p] + w1 * title[p];
          cs[c] += w * tfPart(f, len[at ? p : d], avgdl);
        }
      }
      const v = cs[c];
      if (v > low && live[d] === 1 && (size = heapOffer(heap, size, k, v)) === k) low = heap[0];
    }
    own = low;
    theta = raise(bar, own);
    nc = prune(ci, cs, nc, live, theta, rest[j + 1]);
  }
  const survivors = ci.slice(0, nc);
  const exact = exactScores(rows, terms, phrases, survivors, avgdl);
  const best = Array.from({ length: nc }, (_, i) => i)
    .sort((a, b) => exact[b] - exact[a] || survivors[a] - survivors[b])
    .slice(0, k);
  return { ids: Int32Array.from(best, (i) => survivors[i]), scores: Float64Array.from(best, (i) => exact[i]), complete: theta === -Infinity };
}

/** Keeps, in order, the live candidates whose partial score plus what is left to add may reach `theta`. */
function prune(ids: Int32Array, scores: Float64Array, nc: number, live: Uint8Array, theta: number, left: number): number {
  const bar = theta * SLACK - left;
  let kept = 0;
  for (let c = 0; c < nc; c++) {
    if (scores[c] < bar || live[ids[c]] !== 1) continue;
    ids[kept] = ids[c];
    scores[kept++] = scores[c];
  }
  return kept;
}

/**
 * bm25() of the rows (ascending ids), each query phrase's contribution added in query order, as fts5_aux.c. Its
 * loop is the pruned phase's lookup loop again, on purpose: one function for both (tried in session 15's review)
 * ranked the hostile query 52–56 → 63–68 ms at 1M, its type feedback shared by lists and range views.
 */
function exactScores({ lens, weights }: RankRows, terms: readonly QueryTerm[], phrases: readonly number[], rows: Int32Array, avgdl: number): Float64Array {
  const [w0, w1] = weights;
  const scores = new Float64Array(rows.length);
  for (const t of phrases) {
    const { idf, list } = terms[t];
    const { ids, text, title, n } = list;
    const len = list.lens ?? lens;
    const at = list.lens !== undefined;
    for (let r = 0, p = 0; r < rows.length; r++) {
      const d = rows[r];
      p = seek(ids, n, p, d);
      if (p >= n) break;
      if (ids[p] !== d) continue;
      const f = w0 * text[p] + w1 * title[p];
      scores[r] += idf * tfPart(f, len[at ? p : d], avgdl);
    }
  }
  return scores;
}
