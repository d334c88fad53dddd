import { join } from 'node:path';
import { SqliteDatabase, SqliteProjectionState, SqliteSearchIndex } from '@lib/platform/sqlite';
import { fts5Averages, fts5IdfInC, Fts5Stemmer, fts5Vocabulary } from '../libs/platform/src/search-index/sqlite/fts5/fts5-statistics';
import { indexedTop } from '../libs/platform/src/search-index/sqlite/lexical/lexical-indexed';
import { queryTerms } from '../libs/platform/src/search-index/query-terms';
import { median, now, percentile, report, round } from './common';
import { loadSciFact } from './scifact';

const mb = (bytes: number) => round(bytes / 2 ** 20, 0);
const p = (xs: number[]) => `${round(median(xs), 2)} / ${round(percentile(xs, 99), 2)}`;

/**
 * Issue 19, the lexical ranking alone on a kept data dir (a copy of `scale … keep=DIR`'s, never the original:
 * opening it writes the postings' log table): builds the postings once, then SciFact's test queries through the
 * index (limit 10, as the scale bench) and per phase (the parts' and the documents' top 300 from the postings),
 * p50 / p99, the parts' top 300 on two threads beside one, plus the hostile-but-valid query (1,000 characters of the commonest words).
 * `lexical-dir DIR [index=scale] [rounds=3]`.
 */
export async function lexicalDirBench(args: string[]): Promise<void> {
  const dir = args[0];
  if (!dir) throw new Error('usage: lexical-dir DIR [index=scale] [rounds=3]');
  const name = args.find((a) => a.startsWith('index='))?.slice(6) ?? 'scale';
  const rounds = Number(args.find((a) => a.startsWith('rounds='))?.slice(7) ?? 3);
  const sqlite = new SqliteDatabase({ path: join(dir, 'service.db'), synchronous: 'NORMAL' });
  const index = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite), { minVectors: Infinity });
  try {
    const tid = sqlite.db.prepare('SELECT tid FROM si_indexes JOIN si_active USING (generation) WHERE name = ?').pluck().get(name) as number;
    let t = now();
    await index.search(name, { mode: 'lexical', text: 'warm up', limit: 1 }); // starts the build
    await index.postings.whenIdle();
    const buildS = (now() - t) / 1000;
    global.gc?.();
    const lx = index.postings.ready(tid)!;
    // The parts' ranking always on two threads, beside always on one (search() takes the way measured cheaper).
    while (!index.postings.rankingThread()) await new Promise((resolve) => setTimeout(resolve, 10));
    const thread = index.postings.rankingThread()!;
    const twoThreads = { thread: () => thread, took: () => undefined };
    const stemmer = new Fts5Stemmer();
    const idf = (rows: number, hits: number) => fts5IdfInC(sqlite, rows, hits);
    const totals = { parts: { ...fts5Averages(sqlite, `si_${tid}_fts`), idf }, docs: { ...fts5Averages(sqlite, `si_${tid}_dfts`), idf } };
    const queries = [...loadSciFact('test').queries.values()];
    // The commonest words of the corpus (stop words are dropped from queries), 1,000 characters of them.
    const common = sqlite.db.prepare(`SELECT term FROM ${fts5Vocabulary(sqlite, `si_${tid}_fts`, 'row')} ORDER BY doc DESC LIMIT 1000`).pluck().all() as string[];
    let hostile = '';
    for (const w of common) if (/^[a-z]+$/.test(w) && hostile.length + w.length < 1000) hostile += `${w} `;
    const times = { index: [] as number[], parts: [] as number[], docs: [] as number[], split: [] as number[], hostile: [] as number[], hostileOne: [] as number[], hostileTwo: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      for (const q of queries) {
        const stems = stemmer.singleTokenStems(queryTerms(q))!;
        t = now();
        await index.search(name, { mode: 'lexical', text: q, limit: 10 });
        const t1 = now();
        indexedTop(lx.parts, totals.parts, stems, 300);
        const t2 = now();
        indexedTop(lx.docs, totals.docs, stems, 300);
        const t3 = now();
        indexedTop(lx.parts, totals.parts, stems, 300, undefined, twoThreads);
        const t4 = now();
        if (r > 0) {
          times.index.push(t1 - t);
          times.parts.push(t2 - t1);
          times.docs.push(t3 - t2);
          times.split.push(t4 - t3);
        }
      }
      t = now();
      await index.search(name, { mode: 'lexical', text: hostile, limit: 10 });
      times.hostile.push(now() - t);
      // What the hostile query holds the event loop for, its two rankings on one thread and on two.
      const stems = stemmer.singleTokenStems(queryTerms(hostile))!;
      for (const [way, split] of [['hostileOne', undefined], ['hostileTwo', twoThreads]] as const) {
        t = now();
        indexedTop(lx.parts, totals.parts, stems, 300, undefined, split);
        indexedTop(lx.docs, totals.docs, stems, 300, undefined, split);
        times[way].push(now() - t);
      }
    }
    global.gc?.();
    report('lexical-dir', [
      { phase: 'search(lexical, limit 10) in the index', 'p50 / p99 ms': p(times.index) },
      { phase: 'parts top 300 (postings)', 'p50 / p99 ms': p(times.parts) },
      { phase: 'documents top 300 (postings)', 'p50 / p99 ms': p(times.docs) },
      { phase: 'parts top 300 (postings, two threads)', 'p50 / p99 ms': p(times.split) },
      { phase: `hostile query (${queryTerms(hostile).length} words)`, 'p50 / p99 ms': p(times.hostile) },
      { phase: 'hostile: parts and documents top 300, one thread / two', 'p50 / p99 ms': `${p(times.hostileOne)} | ${p(times.hostileTwo)}` },
    ], { rows: lx.parts.liveRows, 'ranking thread jobs / taken back': `${index.postings.threadJobs} / ${index.postings.threadTakenBack}`, 'postings build s': round(buildS, 1), 'postings MB': mb(index.postings.bytes()), 'RSS MB': mb(process.memoryUsage().rss), 'timed rounds': rounds - 1 });
  } finally {
    index.close();
    sqlite.close();
  }
}
