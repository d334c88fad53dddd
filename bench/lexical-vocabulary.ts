import { LexicalTable } from '../libs/platform/src/search-index/sqlite/lexical/lexical-postings';
import { report, round } from './common';

/**
 * Issue 19: what a rare term costs in the in-memory postings. A real corpus's vocabulary is mostly terms in a few
 * rows (names, numbers, identifiers, misspellings); the synthetic scale corpus, made of SciFact's sentences, has
 * only ~26k terms at any size. Adds T terms of R rows each (and one common term in every row) to a table of 100,000
 * rows, as a build or a catch-up adds them, and reports the process's memory per rare term after a full collection
 * (run with --expose-gc).
 */
export async function lexicalVocabularyBench(args: string[]): Promise<void> {
  const terms = Number(args[0] ?? 200_000);
  const rowsPerTerm = Number(args[1] ?? 2);
  const rows = 100_000;
  const gc = () => global.gc?.();
  const table = new LexicalTable([1, 1]);
  for (let r = 0; r < rows; r++) table.addRow(r + 1, 20);
  for (let id = 0; id < rows; id++) table.addPosting('common', id, 1, 0, rows);
  gc();
  const before = process.memoryUsage();
  const started = performance.now();
  for (let k = 0; k < terms; k++) {
    const term = `rare${k.toString(36)}`;
    for (let j = 0; j < rowsPerTerm; j++) table.addPosting(term, (k * 7 + j * 13) % rows, 1, 0);
  }
  const addMs = performance.now() - started;
  gc();
  const after = process.memoryUsage();
  const per = (key: 'rss' | 'heapUsed' | 'arrayBuffers') => round((after[key] - before[key]) / terms, 0);
  const rowsOut = [
    { figure: 'terms × rows each', value: `${terms} × ${rowsPerTerm}` },
    { figure: 'bytes per rare term: RSS / JS heap / array buffers', value: [per('rss'), per('heapUsed'), per('arrayBuffers')] },
    { figure: 'bytes per rare term, as the postings count them (bytes())', value: round((table.bytes() - 0) / terms, 0) },
    { figure: 'µs per posting added', value: round((addMs * 1000) / (terms * rowsPerTerm), 3) },
  ];
  for (const r of rowsOut) process.stdout.write(`${r.figure}: ${JSON.stringify(r.value)}\n`);
  report(`lexical-vocabulary-${terms}-${rowsPerTerm}`, rowsOut);
}
