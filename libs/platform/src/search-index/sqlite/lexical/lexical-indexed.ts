import { fts5Idf } from '../fts5/fts5-statistics';
import type { LexicalTable } from './lexical-postings';
import { type Split, splitTopK } from './lexical-split';
import { QueryTerm, topK } from './lexical-top-k';
import type { Lexicon } from './sqlite-lexical-index';

/** A ranked row: `d` its document's row (parts), `s` its BM25 as bm25() gives it, negated (higher is better). */
export interface Ranked {
  readonly id: number;
  readonly d: number;
  readonly s: number;
}

/** FTS5's figures for a table's bm25(): its averages record (rows, tokens), which may count deleted rows. */
export interface TableTotals {
  readonly rows: number;
  readonly tokens: number;
  /** bm25()'s IDF of a term in `hits` rows, computed as FTS5 computes it (fts5IdfInC). */
  readonly idf: (rows: number, hits: number) => number;
}

/**
 * The work a query may cost (docs/search.md, "Lexical index at scale"): it is ranked by its highest-IDF distinct
 * words while they hold at most this many postings in all, and at most {@link MAX_QUERY_TERMS} of them. A valid
 * query of 1,000 characters of the commonest words (~140, each in 10–60% of the rows) cost 264 ms of event loop
 * at 1M rows; SciFact's test queries have at most 25 words and 1.4M postings there, which the caps leave exact.
 */
export const MAX_QUERY_TERMS = 32;
export const MAX_QUERY_POSTINGS = 2_000_000;

/**
 * The query's terms on one table, a repeated stem once with its count, and per query phrase its term's index
 * (a stem in no row is left out: it adds 0; past the caps above, the lowest-IDF stems too); undefined
 * when a count overflowed.
 */
function queryTerms(table: LexicalTable, totals: TableTotals, stems: readonly string[]): { terms: QueryTerm[]; phrases: number[] } | undefined {
  const terms: QueryTerm[] = [];
  const indexOf = new Map<string, number>();
  const phrases: number[] = [];
  for (const stem of stems) {
    if (table.inexact.has(stem)) return undefined;
    const known = indexOf.get(stem);
    if (known !== undefined) {
      (terms[known] as { times: number }).times++;
      phrases.push(known);
      continue;
    }
    const list = table.list(stem);
    if (!list) continue;
    indexOf.set(stem, terms.length);
    phrases.push(terms.length);
    terms.push({ list, idf: totals.idf(totals.rows, table.df(stem)), times: 1 });
  }
  const postings = terms.reduce((sum, t) => sum + t.list.n, 0);
  return terms.length > MAX_QUERY_TERMS || postings > MAX_QUERY_POSTINGS ? highestIdf(terms, phrases) : { terms, phrases };
}

/** The terms of highest IDF (the earlier on a tie) within the caps, the phrases renumbered in query order. */
function highestIdf(terms: QueryTerm[], phrases: number[]): { terms: QueryTerm[]; phrases: number[] } {
  const byIdf = terms.map((t, i) => ({ t, i })).sort((a, b) => b.t.idf - a.t.idf || a.i - b.i);
  let n = 1; // the rarest word always
  for (let postings = byIdf[0].t.list.n; n < Math.min(byIdf.length, MAX_QUERY_TERMS); n++) if ((postings += byIdf[n].t.list.n) > MAX_QUERY_POSTINGS) break;
  const kept = byIdf.slice(0, n);
  const renumbered = new Map(kept.sort((a, b) => a.i - b.i).map(({ i }, at) => [i, at]));
  return { terms: kept.map(({ t }) => t), phrases: phrases.filter((p) => renumbered.has(p)).map((p) => renumbered.get(p)!) };
}

/** The sum of the query words' IDFs on the table, as idfSum() computes it (words in no row add nothing). */
export function indexedIdfSum(table: LexicalTable, totals: TableTotals, stems: readonly string[]): number {
  let sum = 0;
  for (const stem of stems) {
    const hits = table.df(stem);
    if (hits > 0) sum += fts5Idf(totals.rows, hits);
  }
  return sum;
}

/**
 * The best `k` rows of a table, as `ORDER BY bm25(...) LIMIT k` ranks them (ties aside). With `keep` (a filter
 * checked in SQL), 2k candidates are ranked, then 10k if too few passed, and the first k that pass are the answer;
 * undefined when fewer pass and more rows matched than were ranked: the filter is selective and FTS5 must rank
 * what passes. With `split`, a query with enough postings is ranked on two threads (lexical-split.ts).
 */
export function indexedTop(table: LexicalTable, totals: TableTotals, stems: readonly string[], k: number, keep?: (ids: number[]) => Set<number>, split?: Split): Ranked[] | undefined {
  if (table.liveRows === 0 || totals.rows === 0) return [];
  const query = queryTerms(table, totals, stems);
  if (!query) return undefined;
  const postings = query.terms.reduce((sum, t) => sum + t.list.n, 0);
  const threaded = split?.thread(table, postings);
  const rank = (want: number) => {
    const avgdl = totals.tokens / totals.rows;
    const started = performance.now();
    const top = threaded ? splitTopK(table, query.terms, query.phrases, want, avgdl, threaded) : topK(table, query.terms, query.phrases, want, avgdl);
    split?.took(table, postings, threaded !== undefined, performance.now() - started);
    return { top, ranked: top.rowids.map((id, i) => ({ id, d: table.docRow[table.internal(id)], s: top.scores[i] })) };
  };
  if (!keep) return rank(k).ranked;
  for (const want of [Math.max(2 * k, 100), Math.max(10 * k, 1000)]) {
    const { top, ranked } = rank(want);
    const passing = keep(top.rowids);
    const kept = ranked.filter((r) => passing.has(r.id)).slice(0, k);
    if (kept.length === k || top.complete) return kept;
  }
  return undefined;
}

/** Both sides' rankings from the postings, or undefined when FTS5 must answer (see indexedTop). */
export function rankFromPostings(
  lx: Lexicon,
  totals: { parts: TableTotals; docs: TableTotals },
  stems: readonly string[],
  partPool: number,
  docPool: number | undefined,
  keep?: (ids: number[]) => Set<number>,
  split?: Split,
) {
  const parts = indexedTop(lx.parts, totals.parts, stems, partPool, keep, split);
  if (!parts) return undefined;
  const docs = docPool === undefined ? [] : indexedTop(lx.docs, totals.docs, stems, docPool, undefined, split);
  if (!docs) return undefined;
  return { parts, docs, partIdf: indexedIdfSum(lx.parts, totals.parts, stems), docIdf: indexedIdfSum(lx.docs, totals.docs, stems) };
}
