import { BLOCK, LexicalTable, PostingList } from './lexical-postings';

/** FTS5's bm25() constants (fts5_aux.c). */
const K1 = 1.2;
const B = 0.75;

/** A query term with its IDF; `times` the query phrases that stem to it (FTS5 scores each phrase). */
export interface QueryTerm {
  readonly list: PostingList;
  readonly idf: number;
  readonly times: number;
}

export interface TopK {
  /** Row ids, best first. */
  readonly rowids: number[];
  readonly scores: number[];
  /** Every matching row was scored into the list: fewer than k rows match. */
  readonly complete: boolean;
}

/**
 * The k best rows by FTS5's BM25, exactly, with MaxScore pruning (Turtle and Flood): terms sorted by the most
 * they can add; once the k-th best score exceeds what the weakest terms can add together, rows holding only
 * those are never visited, and a candidate stops being scored as soon as its remaining terms cannot lift it
 * past the k-th. `avgdl` is FTS5's (its averages record). Bounds come from each block's largest weighted count and shortest row, so they hold whatever
 * the average length has become. A fully scored row's score is then summed again in the query's phrase order
 * (`phrases`: each phrase's index in `terms`), as fts5_aux.c sums it, so ties and scores are bit for bit FTS5's.
 */
export function topK(table: LexicalTable, terms: readonly QueryTerm[], phrases: readonly number[], k: number, avgdl: number): TopK {
  const { lens, live } = table;
  const contribution = (idf: number, f: number, d: number) => idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * d) / avgdl)));
  const bound = (q: QueryTerm) => {
    let m = 0;
    const blocks = Math.ceil(q.list.n / BLOCK);
    for (let b = 0; b < blocks; b++) {
      const c = contribution(q.idf, q.list.blockMaxF[b], q.list.blockMinLen[b]);
      if (c > m) m = c;
    }
    // Rounding could put a contribution an ulp above its block's bound: the bound is widened past that.
    return m * q.times * (1 + 1e-12);
  };
  const sorted = terms.map((q, i) => ({ q, i, ub: q.list.n > 0 ? bound(q) : 0 })).sort((a, b) => a.ub - b.ub);
  const T = sorted.length;
  const sortedOf = new Int32Array(T);
  sorted.forEach((s, t) => (sortedOf[s.i] = t));
  const phraseTerm = phrases.map((i) => sortedOf[i]);
  // Each term's contribution to the candidate being scored (0 when it lacks the term).
  const contributions = new Float64Array(T);
  const lists = sorted.map((s) => s.q.list);
  const idfs = sorted.map((s) => s.q.idf);
  const times = sorted.map((s) => s.q.times);
  const [w0, w1] = table.weights;
  // prefix[i]: the most terms 0..i can add together.
  const prefix = new Float64Array(T);
  sorted.forEach((s, i) => (prefix[i] = (i ? prefix[i - 1] : 0) + s.ub));
  const pos = new Int32Array(T);
  const heapS = new Float64Array(k);
  const heapI = new Int32Array(k);
  let size = 0;
  let theta = 0;
  let essential = 0; // terms below it are non-essential
  const score = (t: number, p: number, d: number) => {
    const l = lists[t];
    const c = contribution(idfs[t], w0 * l.text[p] + w1 * l.title[p], lens[d]);
    contributions[t] = c;
    return c * times[t];
  };
  const exact = () => {
    let s = 0;
    for (const t of phraseTerm) s += contributions[t];
    return s;
  };
  for (;;) {
    let d = 0xffffffff;
    for (let t = essential; t < T; t++) if (pos[t] < lists[t].n && lists[t].ids[pos[t]] < d) d = lists[t].ids[pos[t]];
    if (d === 0xffffffff) break;
    let s = 0;
    contributions.fill(0);
    for (let t = essential; t < T; t++) {
      const p = pos[t];
      if (p < lists[t].n && lists[t].ids[p] === d) {
        if (live[d]) s += score(t, p, d);
        pos[t] = p + 1;
      }
    }
    if (!live[d]) continue;
    let pruned = false;
    for (let t = essential - 1; t >= 0; t--) {
      if (size === k && s + prefix[t] <= theta) {
        pruned = true;
        break;
      }
      const p = seek(lists[t], pos[t], d);
      pos[t] = p;
      if (p < lists[t].n && lists[t].ids[p] === d) s += score(t, p, d);
    }
    if (pruned) continue;
    s = exact();
    if (size < k) {
      heapPush(heapS, heapI, size++, s, d);
      if (size === k) theta = heapS[0];
    } else if (s > theta) {
      heapReplaceTop(heapS, heapI, k, s, d);
      theta = heapS[0];
    } else continue;
    if (size === k) while (essential < T && prefix[essential] <= theta) essential++;
  }
  const order = Array.from({ length: size }, (_, i) => i).sort((a, b) => heapS[b] - heapS[a]);
  return { rowids: order.map((i) => table.rowidOf[heapI[i]]), scores: order.map((i) => heapS[i]), complete: size < k };
}

/** The first position at or after `from` whose id is ≥ d: galloping, then a binary search (cursors only move forward). */
function seek(list: PostingList, from: number, d: number): number {
  const { ids, n } = list;
  if (from >= n || ids[from] >= d) return from;
  let lo = from;
  let step = 1;
  while (lo + step < n && ids[lo + step] < d) {
    lo += step;
    step *= 2;
  }
  let hi = Math.min(lo + step, n);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid] < d) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function heapPush(s: Float64Array, ids: Int32Array, size: number, score: number, id: number): void {
  let i = size;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (s[parent] <= score) break;
    s[i] = s[parent];
    ids[i] = ids[parent];
    i = parent;
  }
  s[i] = score;
  ids[i] = id;
}

function heapReplaceTop(s: Float64Array, ids: Int32Array, size: number, score: number, id: number): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= size) break;
    const c = l + 1 < size && s[l + 1] < s[l] ? l + 1 : l;
    if (s[c] >= score) break;
    s[i] = s[c];
    ids[i] = ids[c];
    i = c;
  }
  s[i] = score;
  ids[i] = id;
}
