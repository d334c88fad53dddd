import { HierarchicalNSW } from 'hnswlib-node';
import { GloveEncoder } from '@lib/encoders';
import { median, now, percentile, report, round } from './common';
import { loadSciFact } from './scifact';
import { syntheticChunks } from './synthetic-corpus';

const K = 10;
const DIMS = 100;

/** Exact top-k by inner product (vectors are unit length, so it is the cosine order). */
function exactTopK(matrix: Float32Array, n: number, q: Float32Array, k: number): number[] {
  const best: { id: number; s: number }[] = [];
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let d = 0, at = i * DIMS; d < DIMS; d++) s += matrix[at + d] * q[d];
    if (best.length < k || s > best[best.length - 1].s) {
      best.push({ id: i, s });
      best.sort((a, b) => b.s - a.s);
      if (best.length > k) best.pop();
    }
  }
  return best.map((b) => b.id);
}

const recall = (found: number[], truth: number[]) => truth.filter((t) => found.includes(t)).length / truth.length;
const rssMb = () => round(process.memoryUsage().rss / 2 ** 20, 0);

/**
 * Issue 19: candidate HNSW libraries on GloVe vectors of the synthetic SciFact corpus. For each: build time (one
 * thread, as the projection would build), query p50/p99 at k = 10, recall@10 against the exact scan, RSS growth.
 */
export async function annBench(args: string[]): Promise<void> {
  const n = Number(args[0] ?? 100_000);
  // `defaults`: only the service's settings (sqlite-vector-ann.ts), for a run at a million vectors.
  const onlyDefaults = args[1] === 'defaults';
  const encoder = new GloveEncoder();
  const texts = [...syntheticChunks(n)].map((c) => c.text);
  const vectors = await encoder.encode(texts, 'document');
  const matrix = new Float32Array(n * DIMS);
  vectors.forEach((v, i) => matrix.set(v, i * DIMS));
  const queryTexts = [...loadSciFact('train').queries.values(), ...loadSciFact('test').queries.values()].slice(0, 300);
  const queries = await encoder.encode(queryTexts, 'query');
  let t = now();
  const truth = queries.map((q) => exactTopK(matrix, n, q, K));
  const exactMs = (now() - t) / queries.length;
  const rows: Record<string, unknown>[] = [{ index: 'exact scan (JS)', 'build s': 0, 'p50 ms': round(exactMs), 'p99 ms': '', 'recall@10': 1, 'RSS +MB': 0 }];

  const measure = (name: string, buildS: number, search: (q: Float32Array) => number[], rss0: number) => {
    const times: number[] = [];
    let r = 0;
    queries.forEach((q, i) => {
      const s = now();
      const found = search(q);
      times.push(now() - s);
      r += recall(found, truth[i]);
    });
    rows.push({ index: name, 'build s': buildS, 'p50 ms': round(median(times), 3), 'p99 ms': round(percentile(times, 99), 3), 'recall@10': round(r / queries.length, 3), 'RSS +MB': rssMb() - rss0 });
  };

  // `defaults` builds the service's graph once and sweeps efSearch on it (a build at 1M is most of an hour).
  const settings: (readonly [number, number, number[]])[] = onlyDefaults ? [[16, 100, [200, 300, 400, 600]]] : [[16, 200, [64]], [16, 100, [100, 200, 400]]];
  for (const [m, efc, efs] of settings) {
    global.gc?.();
    const rss0 = rssMb();
    const h = new HierarchicalNSW('ip', DIMS);
    const started = now();
    h.initIndex({ maxElements: n, m, efConstruction: efc, randomSeed: 100 });
    for (let i = 0; i < n; i++) h.addPoint(Array.from(vectors[i]), i);
    const buildS = round((now() - started) / 1000, 1);
    for (const ef of efs) {
      h.setEf(ef);
      measure(`hnswlib-node M=${m} efC=${efc} ef=${ef}`, buildS, (q) => h.searchKnn(Array.from(q), K).neighbors, rss0);
    }
  }
  report(`ann-${n}`, rows, { chunks: n, queries: queries.length, 'exact scan ms/query (JS)': round(exactMs) });
}
