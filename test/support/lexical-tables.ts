import { fts5Idf } from '../../libs/platform/src/search-index/sqlite/fts5/fts5-statistics';
import type { LexicalTable } from '../../libs/platform/src/search-index/sqlite/lexical/lexical-postings';
import type { QueryTerm } from '../../libs/platform/src/search-index/sqlite/lexical/lexical-top-k';

/** Tests of the postings' rankings: a row of `text` and `title` words added as the build adds one (counts per column). */
export function addRow(table: LexicalTable, rowid: number, text: string[], title: string[]): void {
  const id = table.addRow(rowid, text.length + title.length);
  const counts = new Map<string, [number, number]>();
  for (const w of text) counts.set(w, [(counts.get(w)?.[0] ?? 0) + 1, counts.get(w)?.[1] ?? 0]);
  for (const w of title) counts.set(w, [counts.get(w)?.[0] ?? 0, (counts.get(w)?.[1] ?? 0) + 1]);
  for (const [w, [x, y]] of counts) table.addPosting(w, id, x, y);
}

/** The query's terms as lexical-indexed.ts builds them: a repeated word once with its count. */
export function termsOf(table: LexicalTable, words: string[]): { terms: QueryTerm[]; phrases: number[] } {
  const terms: QueryTerm[] = [];
  const at = new Map<string, number>();
  const phrases: number[] = [];
  for (const w of words) {
    const list = table.list(w);
    if (!list) continue;
    if (!at.has(w)) {
      at.set(w, terms.length);
      terms.push({ list, idf: fts5Idf(table.liveRows, table.df(w)), times: 0 });
    }
    (terms[at.get(w)!] as { times: number }).times++;
    phrases.push(at.get(w)!);
  }
  return { terms, phrases };
}
