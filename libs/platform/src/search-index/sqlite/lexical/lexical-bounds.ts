import { BLOCK, type LexicalTable, type PostingList } from './lexical-postings';

/** What ranking reads of a term's postings: a whole list, or the part of it in a range of internal ids. */
export interface PostingView {
  readonly ids: Uint32Array;
  readonly text: Uint16Array;
  readonly title: Uint16Array;
  /** The rows' lengths alongside, in a sparse list (PostingList.lens); else they are read by row id. */
  readonly lens?: Uint16Array;
  readonly n: number;
}

/**
 * A query term with its IDF; `times` the query phrases that stem to it (FTS5 scores each phrase). `tf` is the
 * list's {@link tfBound}, given when `list` is a view (a view has no blocks to compute it from).
 */
export interface QueryTerm {
  readonly list: PostingView;
  readonly idf: number;
  readonly times: number;
  readonly tf?: number;
}

/** What ranking reads of a table's rows: the table itself on the main thread, shared views of it on the ranking thread. */
export interface RankRows {
  readonly live: Uint8Array;
  readonly lens: Uint16Array | Uint32Array;
  readonly weights: readonly [number, number];
  readonly count: number;
}

/** A top k by internal id, best first (ties to the lower id), before ids are mapped to rowids. */
export interface IdTopK {
  readonly ids: Int32Array;
  readonly scores: Float64Array;
  readonly complete: boolean;
}

export const rankRows = (table: LexicalTable): RankRows => ({ live: table.live, lens: rowLengths(table), weights: table.weights, count: table.count });

/** The rowids and scores of a top k by internal id. */
export const byRowid = (table: LexicalTable, top: IdTopK): TopK => ({
  rowids: Array.from(top.ids, (id) => table.rowidOf[id]),
  scores: Array.from(top.scores),
  complete: top.complete,
});

export interface TopK {
  /** Row ids, best first. */
  readonly rowids: number[];
  readonly scores: number[];
  /** Every matching row was scored into the list: fewer than k rows match. */
  readonly complete: boolean;
}

/** FTS5's bm25() constants (fts5_aux.c). */
const K1 = 1.2;
const B = 0.75;

/**
 * bm25()'s tf part of `f` weighted occurrences in a row of `len` tokens, written as fts5_aux.c computes it, so that
 * `idf * tfPart(...)` is bit for bit its `idf * ((f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)))`. Every
 * ranking path scores through this one expression (V8 inlines it in their loops).
 */
export function tfPart(f: number, len: number, avgdl: number): number {
  return (f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * len) / avgdl));
}

/** Per table, its rows' lengths in 16 bits, appended to as rows are added (a row's length never changes). */
const short = new WeakMap<LexicalTable, { lens: Uint16Array; n: number }>();
/** Tables with a row of 65,536 tokens or more: they keep reading their 32-bit lengths (a rebuild makes a new table). */
const wide = new WeakSet<LexicalTable>();

/**
 * The table's row lengths as 16-bit values when every row is shorter than 65,536 tokens, else its own 32-bit array:
 * the same numbers in half the memory. Reading a row's length is a cache miss a posting for a rare word (its rows
 * are far apart); at 1M rows 2 MB instead of 4 MB made the parts ranking ~20% faster.
 */
export function rowLengths(table: LexicalTable): Uint16Array | Uint32Array {
  if (wide.has(table)) return table.lens;
  let e = short.get(table);
  if (e && e.n === table.count) return e.lens;
  const from = e?.n ?? 0;
  // In shared memory: the ranking thread reads it (2 bytes a row, one array a table).
  const lens = e && e.lens.length >= table.count ? e.lens : new Uint16Array(new SharedArrayBuffer(2 * Math.max(1024, Math.ceil(table.count * 1.25))));
  if (e && lens !== e.lens) lens.set(e.lens.subarray(0, from));
  for (let i = from; i < table.count; i++) {
    if (table.lens[i] > 0xffff) {
      short.delete(table);
      wide.add(table);
      return table.lens;
    }
    lens[i] = table.lens[i];
  }
  short.set(table, (e = { lens, n: table.count }));
  return lens;
}

/** Per list, its largest weighted count and shortest row over all its blocks, valid while it holds `n` postings. */
const extremes = new WeakMap<PostingList, { n: number; maxF: number; minLen: number }>();

/**
 * The most one occurrence-set of the term can add to any row's BM25 (before its IDF): bm25()'s tf part at the
 * list's largest weighted count and shortest row. A tombstone only lowers the true maximum, so it stays a bound.
 */
export function tfBound(list: PostingList, avgdl: number): number {
  let e = extremes.get(list);
  if (!e || e.n !== list.n) {
    let maxF = 0;
    let minLen = 0xffffffff;
    const blocks = Math.ceil(list.n / BLOCK);
    for (let b = 0; b < blocks; b++) {
      if (list.blockMaxF[b] > maxF) maxF = list.blockMaxF[b];
      if (list.blockMinLen[b] < minLen) minLen = list.blockMinLen[b];
    }
    extremes.set(list, (e = { n: list.n, maxF, minLen }));
  }
  return tfPart(e.maxF, e.minLen, avgdl);
}

/** The first position at or after `from` whose id is ≥ `id` (`n` when none): galloping, then binary search. */
export function seek(ids: Uint32Array, n: number, from: number, id: number): number {
  if (from >= n || ids[from] >= id) return from;
  let lo = from;
  let step = 1;
  let hi = from + 1;
  while (hi < n && ids[hi] < id) {
    lo = hi;
    step *= 2;
    hi = from + step;
  }
  if (hi > n) hi = n;
  // ids[lo] < id, and ids[hi] ≥ id or hi = n.
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid] < id) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * Adds `v` to a min-heap of at most k values holding `size` (the worst at 0), replacing the worst when full and
 * `v` beats it; returns the new size.
 */
export function heapOffer(heap: Float64Array, size: number, k: number, v: number): number {
  if (size < k) {
    let j = size;
    while (j > 0) {
      const parent = (j - 1) >> 1;
      if (heap[parent] <= v) break;
      heap[j] = heap[parent];
      j = parent;
    }
    heap[j] = v;
    return size + 1;
  }
  if (v <= heap[0]) return size;
  let j = 0;
  for (;;) {
    const l = 2 * j + 1;
    if (l >= k) break;
    const c = l + 1 < k && heap[l + 1] < heap[l] ? l + 1 : l;
    if (heap[c] >= v) break;
    heap[j] = heap[c];
    j = c;
  }
  heap[j] = v;
  return size;
}

/**
 * Min-heaps of (score, row), the worst at 0: a lower score, or the same score and a higher row (ties go to the
 * lower internal id, i.e. rowid order, whichever order the rows were met in).
 */
export function heapPush(s: Float64Array, ids: Int32Array, size: number, score: number, id: number): void {
  let i = size;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (s[parent] < score || (s[parent] === score && ids[parent] > id)) break;
    s[i] = s[parent];
    ids[i] = ids[parent];
    i = parent;
  }
  s[i] = score;
  ids[i] = id;
}

export function heapReplaceTop(s: Float64Array, ids: Int32Array, size: number, score: number, id: number): void {
  siftDown(s, ids, size, 0, score, id);
}

function siftDown(s: Float64Array, ids: Int32Array, size: number, from: number, score: number, id: number): void {
  let i = from;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= size) break;
    const r = l + 1;
    const c = r < size && (s[r] < s[l] || (s[r] === s[l] && ids[r] > ids[l])) ? r : l;
    if (s[c] > score || (s[c] === score && ids[c] < id)) break;
    s[i] = s[c];
    ids[i] = ids[c];
    i = c;
  }
  s[i] = score;
  ids[i] = id;
}
