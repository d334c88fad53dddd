import { DomainError } from '@lib/platform';
import type { EncodeKind, Encoder } from '../encoder.port';
import type { OnnxModelFiles } from './model-dir';
import { OnnxModel, OnnxRunOptions } from './onnx-model';

export interface OnnxEncoderOptions extends OnnxRunOptions {
  /** The name corpora choose it by. */
  readonly name: string;
  readonly files: OnnxModelFiles;
  /** The hybrid blend's lexical unit (Encoder.lexicalUnit). Default 100, as for an embeddings endpoint: a transformer model. */
  readonly lexicalUnit?: number;
}

/**
 * A sentence-embedding model (bge-small-en-v1.5, all-MiniLM-L6-v2, e5-small, …) run in this process from an ONNX
 * graph and its `tokenizer.json`, in worker threads. Prefixes and pooling come from the directory's settings
 * (known-models.ts). `open` loads it and learns its vector length; a registered encoder whose length was
 * recorded is built with `new` and loads on first use.
 */
export class OnnxEncoder implements Encoder {
  readonly name: string;
  readonly lexicalUnit: number;
  private readonly model: OnnxModel;

  constructor(
    private readonly options: OnnxEncoderOptions,
    readonly dimensions: number,
  ) {
    this.name = options.name;
    this.lexicalUnit = options.lexicalUnit ?? 100;
    this.model = new OnnxModel(options.files, 'embed', options);
  }

  /** Loads the model now (a broken graph or tokenizer fails here, naming why) and returns an encoder of its length. */
  static async open(options: OnnxEncoderOptions): Promise<OnnxEncoder> {
    const probe = new OnnxModel(options.files, 'embed', { ...options, threads: 1 });
    try {
      const { dimensions } = await probe.load();
      return new OnnxEncoder(options, dimensions);
    } finally {
      await probe.close();
    }
  }

  get files(): OnnxModelFiles {
    return this.options.files;
  }

  async encode(texts: readonly string[], kind: EncodeKind): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const { queryPrefix, documentPrefix } = this.options.files.settings;
    const prefix = kind === 'query' ? queryPrefix : documentPrefix;
    try {
      await this.model.load();
    } catch (e) {
      throw new DomainError('unavailable', 'encoder.load_failed', `The encoder "${this.name}" could not load ${this.options.files.modelPath}: ${(e as Error).message}`);
    }
    let vectors: Float32Array[];
    try {
      vectors = await this.model.run(texts.map((t) => prefix + t), this.dimensions, (batch) => ({ texts: batch }));
    } catch (e) {
      throw new DomainError('unavailable', 'encoder.failed', `The encoder "${this.name}" failed: ${(e as Error).message}`);
    }
    return vectors;
  }

  close(): Promise<void> {
    return this.model.close();
  }
}
