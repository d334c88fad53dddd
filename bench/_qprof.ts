import { SqliteDatabase, SqliteProjectionState, SqliteSearchIndex } from '@lib/platform/sqlite';
import { loadSciFact } from './scifact';
import { now, percentile } from './common';
async function main() {
  const data = loadSciFact('test');
  const sqlite = new SqliteDatabase({ path: '/tmp/qp/q.db', synchronous: 'NORMAL' });
  const state = new SqliteProjectionState(sqlite);
  const si = new SqliteSearchIndex(sqlite, state);
  await si.prepare({ name: 'search', version: 1 }, 1);
  await si.activate({ name: 'search', version: 1 }, 1);
  await si.applyBatch('search', 1, [{ position: 1, ops: [{ op: 'createIndex', index: 'sf' }, ...data.corpus.map((d) => ({ op: 'upsertDocument' as const, index: 'sf', document: { documentId: d.id, documentMetadata: {}, parts: [{ seq: 0, text: `${d.title}. ${d.text}`, partMetadata: {} }] } }))] }], 1);
  for (const limit of [10, 100]) {
    const lat: number[] = [];
    for (const [, q] of data.queries) { const t = now(); await si.search('sf', { mode: 'lexical', text: q, limit }); lat.push(now() - t); }
    console.log(limit, 'p50', percentile(lat, 50).toFixed(2), 'p99', percentile(lat, 99).toFixed(2));
  }
}
main();
