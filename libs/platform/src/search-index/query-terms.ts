/**
 * Lucene's English stop words (StopAnalyzer.ENGLISH_STOP_WORDS_SET). Dropped from queries only, never from
 * the index: they match nearly every part, cost most of the ranking time and add little to BM25.
 */
const STOP_WORDS = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' '),
);

/**
 * The words a lexical query searches for, the same on every adapter: letters and digits only (so user text can
 * never carry an engine's query syntax), lower-cased, de-duplicated, stop words dropped unless nothing else is left.
 */
export function queryTerms(text: string): string[] {
  const words = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
  const content = words.filter((w) => !STOP_WORDS.has(w));
  return content.length ? content : words;
}
