import Database from 'better-sqlite3';
import { sentences } from '@lib/corpora';
import { mkdirSync } from 'node:fs';
import { loadSciFact, ndcgAt, SciFact } from './scifact';
import { queryTerms } from '@lib/platform';

const match = (t: string) => queryTerms(t).map((w) => `"${w}"`).join(' OR ');

function build(data: SciFact, dir: string, layout: string) {
  const db = new Database(`${dir}/${layout}.db`);
  const has = db.prepare("SELECT count(*) c FROM sqlite_master WHERE name='parts'").get() as { c: number };
  if (has.c) return db;
  db.exec(`CREATE TABLE parts (rowid INTEGER PRIMARY KEY, doc_id TEXT, seq INTEGER, text TEXT, title TEXT);
    CREATE VIRTUAL TABLE fts USING fts5(text, title, content='parts', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
    CREATE TABLE docs (rowid INTEGER PRIMARY KEY, doc_id TEXT, text TEXT, title TEXT);
    CREATE VIRTUAL TABLE dfts USING fts5(text, title, content='docs', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');`);
  const ins = db.prepare('INSERT INTO parts (doc_id, seq, text, title) VALUES (?, ?, ?, ?)');
  const fins = db.prepare('INSERT INTO fts (rowid, text, title) VALUES (?, ?, ?)');
  const dins = db.prepare('INSERT INTO docs (doc_id, text, title) VALUES (?, ?, ?)');
  const dfins = db.prepare('INSERT INTO dfts (rowid, text, title) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (const d of data.corpus) {
      let parts: [string, string | null][];
      if (layout === 'a') parts = sentences(d.text).map((s) => [s, d.title]);
      else if (layout === 'bs') parts = sentences(`${d.title}. ${d.text}`).map((s) => [s, null]);
      else parts = [[`${d.title}. ${d.text}`, null]];
      parts.forEach(([t, ti], i) => { const r = ins.run(d.id, i, t, ti); fins.run(r.lastInsertRowid, t, ti); });
      const titles = [...new Set(parts.map((p) => p[1]).filter(Boolean))].join(' ');
      const r = dins.run(d.id, parts.map((p) => p[0]).join(' '), titles || null);
      dfins.run(r.lastInsertRowid, parts.map((p) => p[0]).join(' '), titles || null);
    }
  })();
  return db;
}


const nd = (x: number) => Math.round(x * 10000) / 10000;
function vocabSetup(db: Database.Database) {
  db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.pv USING fts5vocab(main, fts, row); CREATE VIRTUAL TABLE IF NOT EXISTS temp.dv USING fts5vocab(main, dfts, row);");
}
const tok = new Database(':memory:');
tok.exec("CREATE VIRTUAL TABLE q USING fts5(t, tokenize='porter unicode61 remove_diacritics 2'); CREATE VIRTUAL TABLE qv USING fts5vocab(q, instance);");
function stems(words: string[]): string[] {
  tok.prepare('DELETE FROM q').run();
  return words.map((w) => { tok.prepare('DELETE FROM q').run(); tok.prepare('INSERT INTO q (rowid, t) VALUES (1, ?)').run(w); return (tok.prepare('SELECT term FROM qv').pluck().get() as string) ?? w; });
}
function idfSumOf(db: Database.Database, table: 'pv' | 'dv', n: number, words: string[]): number {
  let sum = 0;
  for (const st of stems(words)) {
    const hit = (db.prepare(`SELECT doc FROM ${table} WHERE term = ?`).pluck().get(st) as number) ?? 0;
    if (!hit) continue;
    const idf = Math.log((n - hit + 0.5) / (hit + 0.5));
    sum += idf <= 0 ? 1e-6 : idf;
  }
  return sum || 1;
}
/**
 * The sweep that tuned the embedded index's lexical weights (docs/search.md), outside the service so a grid runs
 * in minutes: SciFact in FTS5 tables shaped as the index's (parts with their section title; one row per document),
 * each query's part and document candidates ranked once, then every [μ, part pool, document pool, part title
 * weight, document title weight] of the grid scored (nDCG@10 and Recall over distinct documents in 100 parts).
 * Layouts: a = section title on each sentence part, bs = title folded into the first sentence, b = one part.
 * `npm run bench -- lexical-sweep [train|test] [a,bs] '[[2,300,300,1,2],…]' [dir=/tmp/lexical-sweep]`. Tune on train.
 */
export async function lexicalSweepBench(args: string[]): Promise<void> {
  const data = loadSciFact(args[0] === 'test' ? 'test' : 'train');
  const layouts = (args[1] ?? 'a,bs').split(',');
  const grid = JSON.parse(args[2] ?? '[[0,300,300,1,2],[2,300,300,1,2]]') as [number, number, number, number, number][];
  const dir = args[3] ?? '/tmp/lexical-sweep';
  mkdirSync(dir, { recursive: true });
  for (const layout of layouts) {
    const db = build(data, dir, layout);
    vocabSetup(db);
    const NP = (db.prepare('SELECT count(*) FROM parts').pluck().get() as number);
    const ND = (db.prepare('SELECT count(*) FROM docs').pluck().get() as number);
    const pre: { qid: string; parts: Record<string, { d: string; s: number }[]>; docs: Record<string, { d: string; s: number }[]>; ip: number; id: number }[] = [];
    for (const [qid, text] of data.queries) {
      const m = match(text);
      const parts: Record<string, { d: string; s: number }[]> = {};
      for (const tw of [0.5, 1]) parts[tw] = (db.prepare(`SELECT p.doc_id d, -bm25(fts, 1.0, ${tw}) s FROM fts JOIN parts p ON p.rowid = fts.rowid WHERE fts MATCH ? ORDER BY bm25(fts, 1.0, ${tw}) LIMIT 1000`).all(m) as { d: string; s: number }[]);
      const docs: Record<string, { d: string; s: number }[]> = {};
      for (const tw of [1, 2, 3]) docs[tw] = (db.prepare(`SELECT p.doc_id d, -bm25(dfts, 1.0, ${tw}) s FROM dfts JOIN docs p ON p.rowid = dfts.rowid WHERE dfts MATCH ? ORDER BY bm25(dfts, 1.0, ${tw}) LIMIT 1000`).all(m) as { d: string; s: number }[]);
      const words = queryTerms(text);
      pre.push({ qid, parts, docs, ip: idfSumOf(db, 'pv', NP, words), id: idfSumOf(db, 'dv', ND, words) });
    }
    for (const [mu, kp, kd, tw, dtw] of grid) {
      let n = 0, r = 0;
      for (const q of pre) {
        const docsAll = q.docs[dtw].slice(0, kd);
        const dm = new Map(docsAll.map((x) => [x.d, x.s / q.id]));
        const floor = docsAll.length === kd ? docsAll[docsAll.length - 1].s / q.id : 0;
        const ranked = q.parts[tw].slice(0, kp).map((p) => ({ d: p.d, s: p.s / q.ip + mu * (dm.get(p.d) ?? floor) })).sort((a, b) => b.s - a.s).slice(0, 100).map((x) => x.d);
        const u = [...new Set(ranked)];
        const rel = data.qrels.get(q.qid)!;
        n += ndcgAt(u, rel);
        r += u.filter((x) => rel.has(x)).length / rel.size;
      }
      console.log(layout, JSON.stringify({ mu, kp, kd, tw, dtw }), nd(n / pre.length), nd(r / pre.length));
    }
  }
}
