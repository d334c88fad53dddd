import { dot, GloveEncoder, UseLiteEncoder } from '@lib/encoders';
import { sentences } from '@lib/corpora';
import { median, now, report, round } from './common';
import { loadSciFact, ndcgAt, recallAt } from './scifact';

type Mode = 'sentences' | 'titled-sentences' | 'whole';
const MODES: readonly Mode[] = ['sentences', 'titled-sentences', 'whole'];

/**
 * What gets embedded for one document: its title and each sentence apart (the default sentence chunking), each
 * sentence after the title, or all of it as one text.
 */
function chunksOf(doc: { title: string; text: string }, mode: Mode): string[] {
  if (mode === 'whole') return [`${doc.title} ${doc.text}`.trim()];
  if (mode === 'titled-sentences') return sentences(doc.text).map((s) => `${doc.title}. ${s}`);
  return [doc.title, ...sentences(doc.text)].filter((s) => s.trim());
}

/**
 * A built-in encoder on SciFact, dense retrieval only, on the train queries (what the encoder was chosen on,
 * docs/encoders.md). A document scores the best cosine of its chunks (brute force, no index). Throughput is in
 * texts (chunks) per second: the median of three timed 64-text samples, and the full-corpus pass.
 */
export async function encodersBench(args: string[]): Promise<void> {
  const which = args[0] === GloveEncoder.NAME || args[0] === UseLiteEncoder.NAME ? args[0] : GloveEncoder.NAME;
  const mode = MODES.find((m) => m === args[1]) ?? 'titled-sentences';
  const threads = Number(args[2] ?? 2);
  const limit = args[3] && args[3] !== 'all' ? Number(args[3]) : Infinity;
  const data = loadSciFact('train');
  const corpus = data.corpus.slice(0, limit);
  const owner: number[] = [];
  const texts: string[] = [];
  corpus.forEach((d, i) => chunksOf(d, mode).forEach((c) => (owner.push(i), texts.push(c))));
  const encoder = which === GloveEncoder.NAME ? new GloveEncoder() : new UseLiteEncoder({ threads });
  try {
    const loadMs = await encoder.load();
    const samples: number[] = [];
    for (let run = 0; run < 3; run++) {
      const sample = texts.slice(run * 64, run * 64 + 64);
      const t = now();
      await encoder.encode(sample, 'document');
      samples.push(sample.length / ((now() - t) / 1000));
    }
    const t0 = now();
    const vectors = await encoder.encode(texts, 'document');
    const corpusSeconds = (now() - t0) / 1000;
    const qids = [...data.queries.keys()];
    const queries = await encoder.encode(qids.map((q) => data.queries.get(q)!), 'query');
    let ndcg = 0;
    let recall = 0;
    qids.forEach((q, i) => {
      const best = new Float64Array(corpus.length).fill(-Infinity);
      vectors.forEach((v, c) => (best[owner[c]] = Math.max(best[owner[c]], dot(queries[i], v))));
      const ranked = [...best.keys()].sort((a, b) => best[b] - best[a]).slice(0, 100).map((d) => corpus[d].id);
      ndcg += ndcgAt(ranked, data.qrels.get(q)!, 10);
      recall += recallAt(ranked, data.qrels.get(q)!, 100);
    });
    report(`encoders-${encoder.name}-${mode}`, [
      {
        encoder: encoder.name,
        dims: encoder.dimensions,
        mode,
        threads: encoder instanceof UseLiteEncoder ? threads : 1,
        documents: corpus.length,
        texts: texts.length,
        train_queries: qids.length,
        'nDCG@10': round(ndcg / qids.length, 4),
        'R@100': round(recall / qids.length, 4),
        'texts/s (median 3×64)': round(median(samples), 1),
        'texts/s (full pass)': round(texts.length / corpusSeconds, 1),
        load_ms: Math.round(loadMs),
        rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20),
      },
    ]);
  } finally {
    if (encoder instanceof UseLiteEncoder) await encoder.close();
  }
}
