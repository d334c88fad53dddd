import { byRowid, type IdTopK, type QueryTerm, rankRows, type RankRows, seek, tfBound, type TopK } from './lexical-bounds';
import type { LexicalTable, PostingList } from './lexical-postings';
import { type SharedBar, topKIds } from './lexical-top-k';

/** One range of a table's internal ids to rank, as posted to the ranking thread (typed arrays in shared memory). */
export interface RangeJob {
  readonly rows: RankRows;
  readonly terms: readonly QueryTerm[];
  readonly phrases: readonly number[];
  readonly k: number;
  readonly avgdl: number;
  readonly bar?: SharedBar;
}

/** Where a job goes: `start` posts it and returns the wait for its answer (undefined: the thread failed, rank here). */
export interface RangeRanker {
  start(job: RangeJob): () => IdTopK | undefined;
}

/** Ranking on two threads where it pays (lexical-thread-choice.ts), decided per table. */
export interface Split {
  /** The thread to rank a query of `postings` postings on the table on, or undefined: on this thread alone. */
  readonly thread: (table: LexicalTable, postings: number) => RangeRanker | undefined;
  /** How long a query of `postings` postings on the table took to rank, on two threads or one. */
  readonly took: (table: LexicalTable, postings: number, twoThreads: boolean, ms: number) => void;
}

/**
 * The query's terms restricted to internal ids lo..hi-1: views of the same arrays (no copy), each with its whole
 * list's bound, which bounds any part of it.
 */
export function rangeTerms(terms: readonly QueryTerm[], lo: number, hi: number, avgdl: number): QueryTerm[] {
  return terms.map(({ list, idf, times }) => {
    const { ids, text, title, lens, n } = list;
    const from = seek(ids, n, 0, lo);
    const to = seek(ids, n, from, hi);
    const view = { ids: ids.subarray(from, to), text: text.subarray(from, to), title: title.subarray(from, to), lens: lens?.subarray(from, to), n: to - from };
    return { list: view, idf, times, tf: tfBound(list as PostingList, avgdl) };
  });
}

/**
 * The best k of two ranges' exact top k, the first range's ids all below the second's: the global top k exactly
 * (each of its rows is in its own range's top k), ties to the lower id as each range breaks them.
 */
export function mergeTops(a: IdTopK, b: IdTopK, k: number): IdTopK {
  const size = Math.min(k, a.ids.length + b.ids.length);
  const ids = new Int32Array(size);
  const scores = new Float64Array(size);
  for (let i = 0, x = 0, y = 0; i < size; i++) {
    const first = y >= b.ids.length || (x < a.ids.length && a.scores[x] >= b.scores[y]);
    ids[i] = first ? a.ids[x] : b.ids[y];
    scores[i] = first ? a.scores[x++] : b.scores[y++];
  }
  // Complete when fewer than k rows match in all: each range then answered every match it had.
  return { ids, scores, complete: a.complete && b.complete && a.ids.length + b.ids.length < k };
}

/**
 * {@link topK} on two threads (docs/search.md, "Ranking on two threads"): the upper half of the internal ids is
 * posted to the ranking thread while this thread ranks the lower half, each pruning by the higher of both halves'
 * k-th best partial score; this thread then waits (blocked: no write can change the postings meanwhile) and merges. Postings the query reads move to shared memory on first use.
 */
export function splitTopK(table: LexicalTable, terms: readonly QueryTerm[], phrases: readonly number[], k: number, avgdl: number, thread: RangeRanker): TopK {
  table.share();
  for (const t of terms) (t.list as PostingList).share();
  const rows = rankRows(table);
  const mid = table.count >>> 1;
  const upper = rangeTerms(terms, mid, table.count, avgdl);
  const slots = new Float64Array(new SharedArrayBuffer(16)).fill(-Infinity);
  const wait = thread.start({ rows, terms: upper, phrases, k, avgdl, bar: { slots, mine: 1 } });
  const a = topKIds(rows, table, rangeTerms(terms, 0, mid, avgdl), phrases, k, avgdl, { slots, mine: 0 });
  const b = wait() ?? topKIds(rows, table, upper, phrases, k, avgdl, { slots, mine: 1 });
  return byRowid(table, mergeTops(a, b, k));
}
