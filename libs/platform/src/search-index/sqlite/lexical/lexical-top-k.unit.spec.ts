import { seeded } from '../../contract/search-index.contract';
import { fts5Idf } from '../fts5/fts5-statistics';
import { exhaustiveTopK } from './lexical-exhaustive';
import { indexedTop, MAX_QUERY_TERMS } from './lexical-indexed';
import { LexicalTable } from './lexical-postings';
import { addRow, termsOf } from '../../../../../../test/support/lexical-tables';
import { topK } from './lexical-top-k';

const WORDS = Array.from({ length: 400 }, (_, i) => `w${i}`);

/**
 * Rows of skewed word choice (a few words in most rows, most in few, as the common words of a real corpus),
 * every tenth row a copy of an earlier one (exact ties), some rows deleted or replaced after they were added.
 */
function corpus(seed: number, rows: number): LexicalTable {
  const random = seeded(seed);
  const table = new LexicalTable([1, 2]);
  const texts: string[][] = [];
  for (let r = 0; r < rows; r++) {
    const words = r % 10 === 9 ? texts[r - 5] : Array.from({ length: 3 + Math.floor(random() * 60) }, () => WORDS[Math.floor(random() ** 3 * WORDS.length)]);
    texts.push(words);
    addRow(table, r + 1, words, r % 7 === 0 ? words.slice(0, 2) : []);
  }
  for (let r = 3; r < rows; r += 13) table.remove(r + 1);
  for (let r = 5; r < rows; r += 29) addRow(table, r + 1, texts[r].slice(1), []); // replaced: a tombstone and a new row
  return table;
}


const totalsOf = (table: LexicalTable) => ({ rows: table.liveRows, tokens: table.liveTokens, idf: fts5Idf });


describe('topK: the pruned ranking gives the exhaustive ranking exactly (docs/search.md, "Lexical index at scale")', () => {
  const table = corpus(1919, 6000);
  const avgdl = table.liveTokens / table.liveRows;
  const random = seeded(7);
  const pick = (bias: number) => WORDS[Math.floor(random() ** bias * WORDS.length)];
  const queries = [
    ...Array.from({ length: 30 }, () => Array.from({ length: 2 + Math.floor(random() * 10) }, () => pick(1))), // rare and common
    ...Array.from({ length: 20 }, () => Array.from({ length: 10 + Math.floor(random() * 30) }, () => pick(4))), // mostly the commonest
    ['w0', 'w1', 'w2', 'w0', 'w399', 'w398'], // a repeated word, two that may match nothing
    ['w200'],
  ];

  it.each([1, 10, 100, 300, 1000])('same rows, same order, bit-identical scores at k = %i (ties to the lower rowid, deleted rows never)', (k) => {
    let rows = 0;
    for (const words of queries) {
      const { terms, phrases } = termsOf(table, words);
      const expected = exhaustiveTopK(table, terms, phrases, k, avgdl);
      const actual = topK(table, terms, phrases, k, avgdl);
      expect(actual).toEqual(expected);
      for (const id of actual.rowids) expect(table.live[table.internal(id)]).toBe(1);
      rows += actual.rowids.length;
    }
    expect(rows).toBeGreaterThan(0);
  });

  it('breaks a tie at the k-th place by rowid, whichever order the tied rows were met in', () => {
    const tied = new LexicalTable([1, 1]);
    // 'p' and 'q' each in 10 rows of the same length: rows 1–10 (p r) and 11–20 (q r) score exactly alike, and the
    // query meets rows 11–20 first.
    for (let r = 1; r <= 20; r++) addRow(tied, r, [r <= 10 ? 'p' : 'q', 'r'], []);
    for (let r = 21; r <= 400; r++) addRow(tied, r, ['filler', 'words'], []);
    const { terms, phrases } = termsOf(tied, ['q', 'p', 'r']);
    const avg = tied.liveTokens / tied.liveRows;
    const top = topK(tied, terms, phrases, 5, avg);
    expect(top.rowids).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(top.scores).size).toBe(1);
    expect(exhaustiveTopK(tied, terms, phrases, 5, avg)).toEqual(top);
  });

  it('stays exact as rows are added between queries, and with a row longer than 65,535 tokens', () => {
    const grown = corpus(5, 2000);
    const words = ['w0', 'w3', 'w40', 'w41', 'w120'];
    const check = () => {
      const { terms, phrases } = termsOf(grown, words);
      const avg = grown.liveTokens / grown.liveRows;
      expect(topK(grown, terms, phrases, 20, avg)).toEqual(exhaustiveTopK(grown, terms, phrases, 20, avg));
      return topK(grown, terms, phrases, 20, avg).rowids;
    };
    check();
    addRow(grown, 5001, ['w120', 'w120', 'w41', 'w40'], []);
    expect(check()[0]).toBe(5001);
    addRow(grown, 5002, [...Array.from({ length: 70_000 }, () => 'filler'), 'w120', 'w41', 'w40'], []);
    expect(check()).not.toContain(5002); // its length makes its matches weigh next to nothing
  });

  it('says when fewer rows match than were asked for', () => {
    const { terms, phrases } = termsOf(table, ['w399', 'w398', 'w397']);
    const top = topK(table, terms, phrases, 5000, avgdl);
    expect(top.complete).toBe(true);
    expect(topK(table, termsOf(table, ['w0']).terms, [0], 10, avgdl).complete).toBe(false);
  });
});

describe('indexedTop: a query past the caps is ranked by its highest-IDF words', () => {
  it(`ranks a query of more than ${MAX_QUERY_TERMS} distinct words as its ${MAX_QUERY_TERMS} rarest, in the query's order`, () => {
    const table = corpus(23, 3000);
    const df = (w: string) => table.df(w);
    // Words whose row count no other word shares: which are the rarest is then beyond doubt.
    const byIdf = WORDS.filter((w) => df(w) > 0 && WORDS.filter((v) => df(v) === df(w)).length === 1).sort((a, b) => df(a) - df(b));
    expect(byIdf.length).toBeGreaterThan(MAX_QUERY_TERMS + 10);
    const query = byIdf.slice(0, MAX_QUERY_TERMS + 10).reverse(); // the common words first
    const capped = indexedTop(table, totalsOf(table), query, 50)!;
    expect(capped).toEqual(indexedTop(table, totalsOf(table), query.slice(10), 50));
    expect(capped.length).toBe(50);
  });
});
