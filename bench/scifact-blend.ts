import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENCODER_REGISTRY, EncoderRegistry } from '@lib/encoders';
import { SEARCH_INDEX, SearchHit, SearchIndex } from '@lib/platform';
import { blend, lexicalScore, lexicalWeight, partKey } from '../libs/retrieval/src/application/query/hybrid';
import { QUERY_DEFAULTS } from '../apps/api/src/corpora/query.dto';
import { runClients } from './http-clients';
import { loadSciFact, ndcgAt, SciFact } from './scifact';
import { LAYOUTS, Layout } from './scifact-layouts';
import { BENCH_KEY, startBenchService, untilSearchable } from './service';

/** Each side's candidates for one query, as the query pipeline asks for them (top 100 each). */
type Candidates = { qid: string; lexical: SearchHit[]; vector: SearchHit[] };
type Fusion = (c: Candidates) => SearchHit[];

const DEPTH = 100;
const QUERY_DEFAULT_LAMBDA = QUERY_DEFAULTS.lexicalInterpolation;
const file = (dir: string, layout: string, split: string) => join(dir, `${layout}-${split}.json`);

/**
 * The default hybrid blend, tuned without the HTTP round trips (docs/search.md, "The default blend made robust"):
 * `dump DIR` indexes SciFact through the API in both layouts and writes each query's lexical and vector
 * candidates (train and test), as the query pipeline fetches them; `sweep DIR train` scores every fusion of the
 * grid on them (nDCG@10 over distinct documents, each layout's margin over lexical with its paired standard
 * error); `sweep DIR test <fusion>` scores one named fusion on test, once it is chosen on train.
 */
export async function scifactBlendBench(args: string[]): Promise<void> {
  const [command, dir = '/tmp/scifact-blend', split = 'train', only] = args;
  if (command === 'dump') return dump(dir);
  const fusions = grid();
  const names = only ? only.split(',') : Object.keys(fusions);
  for (const layout of ['a', 'b'] as Layout[]) {
    const data = loadSciFact(split === 'test' ? 'test' : 'train');
    const queries = JSON.parse(readFileSync(file(dir, layout, split), 'utf8')) as Candidates[];
    const score = (f: Fusion) => queries.map((q) => ndcgAt([...new Set(f(q).slice(0, DEPTH).map((h) => h.documentId))], data.qrels.get(q.qid)!));
    const lexical = score((q) => q.lexical);
    for (const name of names) {
      const s = score(fusions[name]);
      const diff = s.map((x, i) => x - lexical[i]);
      const mean = diff.reduce((a, b) => a + b, 0) / diff.length;
      const se = Math.sqrt(diff.reduce((a, b) => a + (b - mean) ** 2, 0) / (diff.length - 1) / diff.length);
      const avg = s.reduce((a, b) => a + b, 0) / s.length;
      console.log(JSON.stringify({ split, layout, fusion: name, ...(name.includes('U=') && { w: r4(lexicalWeight(QUERY_DEFAULT_LAMBDA, Number(name.split('U=')[1]))) }), ndcg10: r4(avg), lexical: r4(lexical.reduce((a, b) => a + b, 0) / lexical.length), margin: r4(mean), se: r4(se) }));
    }
  }
}

const r4 = (x: number) => Math.round(x * 1e6) / 1e6;
const sorted = (scored: { hit: SearchHit; score: number }[]) => scored.sort((a, b) => b.score - a.score).map((s) => s.hit);

/**
 * Convex blends at lexical weight w: as shipped (a candidate only the vectors found gets the lexical side's floor),
 * and lexical-first (it gets lexical 0: the vectors reorder what BM25 found and only add below it).
 */
function grid(): Record<string, Fusion> {
  const out: Record<string, Fusion> = { lexical: (q) => sorted(q.lexical.map((hit) => ({ hit, score: lexicalScore(hit) }))) };
  // The encoder's lexical unit U at the default λ (hybrid.ts lexicalWeight), on a log-spaced grid.
  for (const unit of [200, 500, 1000, 2200, 3000, 5000, 7000, 10_000, 15_000, 20_000, 50_000]) {
    const w = lexicalWeight(QUERY_DEFAULT_LAMBDA, unit);
    out[`convex U=${unit}`] = (q) => sorted(blend(q.lexical, q.vector, w, DEPTH, partKey));
    out[`lexical-first U=${unit}`] = (q) => sorted(lexicalFirst(q, w));
  }
  return out;
}

function lexicalFirst(q: Candidates, w: number): { hit: SearchHit; score: number }[] {
  const found = new Set(q.lexical.map(key));
  const blended = blend(q.lexical, q.vector, w, DEPTH, partKey);
  const semantic = new Map(q.vector.map((h) => [key(h), Math.min(1, Math.max(0, 1 - (h.vectorDistance ?? 1)))]));
  return blended.map((s) => (found.has(key(s.hit)) ? s : { hit: s.hit, score: (1 - w) * semantic.get(key(s.hit))! }));
}

const key = (h: SearchHit) => `${h.documentId}\u0000${h.seq}`;
async function dump(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const service = await startBenchService('scifact-blend');
  try {
    const index = service.started.app.get<symbol, SearchIndex>(SEARCH_INDEX, { strict: false });
    const encoder = (await service.started.app.get<symbol, EncoderRegistry>(ENCODER_REGISTRY, { strict: false }).lookup('glove-6b-100d'))!;
    const corpus: SciFact['corpus'] = loadSciFact('train').corpus;
    for (const layout of ['a', 'b'] as Layout[]) {
      const key = `scifact_${layout}`;
      await service.call('POST', '/v2/corpora', { key, name: `SciFact ${layout}`, encoder_name: 'glove-6b-100d' });
      await runClients(service.started.url, BENCH_KEY, corpus.map((d) => ({ method: 'POST', path: `/v2/corpora/${key}/documents?wait_for=indexed`, body: LAYOUTS[layout].body(d) })), 8);
      await untilSearchable(service.started, 900_000);
      for (const split of ['train', 'test'] as const) {
        const out: Candidates[] = [];
        for (const [qid, text] of loadSciFact(split).queries) {
          const [vector] = await encoder.encode([text], 'query');
          const slim = (h: SearchHit) => ({ documentId: h.documentId, seq: h.seq, lexicalRelevance: h.lexicalRelevance, textScore: h.textScore, vectorDistance: h.vectorDistance, score: h.score }) as SearchHit;
          const lexical = (await index.search(key, { mode: 'lexical', text, limit: DEPTH })).map(slim);
          const nearest = (await index.search(key, { mode: 'vector', vector: Array.from(vector), limit: DEPTH })).map(slim);
          out.push({ qid, lexical, vector: nearest });
        }
        writeFileSync(file(dir, layout, split), JSON.stringify(out));
        console.log(`${layout} ${split}: ${out.length} queries`);
      }
    }
  } finally {
    await service.close();
  }
}
