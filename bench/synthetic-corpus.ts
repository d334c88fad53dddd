import { loadSciFact } from './scifact';

/** A chunk of the synthetic corpus: 2–3 SciFact sentences from different abstracts, so no two chunks are copies. */
export interface SyntheticChunk {
  readonly id: string;
  readonly text: string;
}

/** Deterministic PRNG (mulberry32): the same N gives the same corpus on every run and machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** SciFact's sentences (≥ 20 characters), in corpus order. */
export function scifactSentences(): string[] {
  const out: string[] = [];
  for (const d of loadSciFact('test').corpus) {
    for (const s of d.text.split(/(?<=[.!?])\s+(?=[A-Z])/)) if (s.length >= 20) out.push(s.trim());
  }
  return out;
}

/**
 * N chunks recombined from SciFact's ~50k sentences: with 2–3 sentences per chunk there are ~10^14 combinations,
 * so the vocabulary and term statistics are SciFact's while every chunk's text (and vector) is its own.
 */
export function* syntheticChunks(n: number, seed = 19, sentences = scifactSentences()): Generator<SyntheticChunk> {
  const random = prng(seed);
  for (let i = 0; i < n; i++) {
    const k = 2 + Math.floor(random() * 2);
    const picked: string[] = [];
    for (let j = 0; j < k; j++) picked.push(sentences[Math.floor(random() * sentences.length)]);
    yield { id: `c${i}`, text: picked.join(' ') };
  }
}

export interface ScaleDocument {
  readonly id: string;
  readonly type: 'core';
  readonly document_parts: { text: string }[];
  readonly metadata: { bucket: number };
}

/**
 * The scale bench's documents: core documents of `partsPerDocument` synthetic chunks, `d0`, `d1`…, in a hundred
 * buckets. Another `prefix` and `seed` make other documents (the bench's `more=N`: rows written after a build).
 */
export function* scaleDocuments(n: number, partsPerDocument: number, prefix = 'd', seed = 19): Generator<ScaleDocument> {
  const chunks = syntheticChunks(n, seed, scifactSentences());
  for (let doc = 0; doc * partsPerDocument < n; doc++) {
    const parts: { text: string }[] = [];
    for (let p = 0; p < partsPerDocument; p++) {
      const c = chunks.next();
      if (!c.done) parts.push({ text: c.value.text });
    }
    yield { id: `${prefix}${doc}`, type: 'core', document_parts: parts, metadata: { bucket: doc % 100 } };
  }
}
