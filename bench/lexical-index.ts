import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase, SqliteProjectionState, SqliteSearchIndex } from '@lib/platform/sqlite';
import type { SearchOp } from '@lib/platform';
import { median, now, percentile, report, round } from './common';
import { loadSciFact } from './scifact';
import { syntheticChunks } from './synthetic-corpus';

const PARTS_PER_DOCUMENT = 20;
const DOCUMENTS_PER_BATCH = 100;
const mb = (bytes: number) => round(bytes / 2 ** 20, 0);
const rss = () => {
  global.gc?.();
  return process.memoryUsage().rss;
};

/**
 * Issue 19, index level: N synthetic chunks (bench/synthetic-corpus.ts) as documents of 20 parts applied straight
 * into a file-backed SqliteSearchIndex, then SciFact's 300 test queries, lexical, at limit 10 and 100 (and 10
 * under a filter passing half the documents): FTS5's bm25() (the path before) against the in-memory postings on
 * the same database, side by side in one run. Also the postings' build time and memory, and how many queries
 * returned the same parts in the same order. `lexical-index N [fts5 queries=300]`.
 */
export async function lexicalIndexBench(args: string[]): Promise<void> {
  const n = Number(args[0] ?? 100_000);
  // At a million chunks FTS5 takes about a second a query: its side may be measured on the first queries only.
  const fts5Queries = Number(args[1] ?? 300);
  const dir = mkdtempSync(join(tmpdir(), 'lexical-index-'));
  const sqlite = new SqliteDatabase({ path: join(dir, 'bench.db'), synchronous: 'NORMAL' });
  try {
    const state = new SqliteProjectionState(sqlite);
    const fts5 = new SqliteSearchIndex(sqlite, state, { minVectors: Infinity }, { minRows: Infinity });
    const shape = { name: 'search', version: 1 };
    await fts5.prepare(shape, 1);
    await fts5.activate(shape, 1);
    let t = now();
    const chunks = syntheticChunks(n);
    let pos = 0;
    await fts5.applyBatch('search', 1, [{ position: ++pos, ops: [{ op: 'createIndex', index: 'bench' }] }], pos);
    for (let doc = 0, left = n; left > 0; ) {
      const ops: SearchOp[] = [];
      for (let d = 0; d < DOCUMENTS_PER_BATCH && left > 0; d++, doc++) {
        const parts = [];
        for (let seq = 0; seq < PARTS_PER_DOCUMENT && left > 0; seq++, left--) parts.push({ seq, text: chunks.next().value!.text, partMetadata: {} });
        ops.push({ op: 'upsertDocument', index: 'bench', document: { documentId: `d${doc}`, documentMetadata: { bucket: doc % 100 }, parts } });
      }
      await fts5.applyBatch('search', 1, [{ position: ++pos, ops }], pos);
    }
    const ingestS = (now() - t) / 1000;
    process.stderr.write(`ingested ${n} chunks in ${round(ingestS, 1)} s\n`);

    const rss0 = rss();
    const postings = new SqliteSearchIndex(sqlite, state, { minVectors: Infinity }, { minRows: 1 });
    t = now();
    await postings.search('bench', { mode: 'lexical', text: 'warm up', limit: 1 }); // starts the build
    await postings.postings.whenIdle();
    const buildS = (now() - t) / 1000;
    const postingsMb = mb(postings.postings.bytes());
    const rssMb = mb(rss() - rss0);
    process.stderr.write(`postings built in ${round(buildS, 1)} s, ${postingsMb} MB\n`);

    const queries = [...loadSciFact('test').queries.values()];
    const half = { kind: 'cmp', field: { level: 'doc', name: 'bucket' }, op: '<', value: 50 } as const;
    const rows: Record<string, unknown>[] = [];
    for (const [label, limit, filter] of [['limit 10', 10, undefined], ['limit 100', 100, undefined], ['limit 10, filter ½', 10, half]] as const) {
      const times = { fts5: [] as number[], postings: [] as number[] };
      let same = 0;
      for (const q of queries.slice(0, 20)) await fts5.search('bench', { mode: 'lexical', text: q, limit, filter });
      for (const [qi, q] of queries.entries()) {
        const ids: string[][] = [];
        for (const [name, index] of [['fts5', fts5], ['postings', postings]] as const) {
          if (name === 'fts5' && qi >= fts5Queries) continue;
          const s = now();
          const hits = await index.search('bench', { mode: 'lexical', text: q, limit, filter });
          times[name].push(now() - s);
          ids.push(hits.map((h) => `${h.documentId}:${h.seq}`));
        }
        if (ids.length === 2 && ids[0].join() === ids[1].join()) same++;
      }
      rows.push({
        query: label,
        'FTS5 p50 ms': round(median(times.fts5), 1),
        'FTS5 p99 ms': round(percentile(times.fts5, 99), 1),
        'postings p50 ms': round(median(times.postings), 2),
        'postings p99 ms': round(percentile(times.postings, 99), 2),
        'same parts, same order': `${same}/${Math.min(fts5Queries, queries.length)}`,
      });
    }
    const answered = (postings as unknown as { ranker: { answered: { postings: number; fts5: number } } }).ranker.answered;
    report(`lexical-index-${n}`, rows, { chunks: n, 'ingest s': round(ingestS, 1), 'postings build s': round(buildS, 1), 'postings MB': postingsMb, 'RSS + MB': rssMb, answered });
    postings.close();
    fts5.close();
  } finally {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
