import { DomainError } from '@lib/platform';
import type { OnnxModelFiles } from './model-dir';
import { OnnxModel, OnnxRunOptions } from './onnx-model';

/**
 * A cross-encoder reranker (bge-reranker-base, ms-marco-MiniLM-L-6-v2, …) run in this process from an ONNX graph
 * and its `tokenizer.json`, in worker threads: each (query, text) pair is read together and given one relevance
 * score, 0 to 1 after the model's activation. It has the shape of the retrieval context's `ModelReranker`.
 */
export class OnnxCrossEncoder {
  private readonly model: OnnxModel;

  constructor(
    readonly name: string,
    readonly files: OnnxModelFiles,
    options: OnnxRunOptions = {},
  ) {
    this.model = new OnnxModel(files, 'score', options);
  }

  /** Loads the model now: a broken graph or tokenizer fails here, naming why. */
  async load(): Promise<void> {
    await this.model.load();
  }

  async score(query: string, texts: readonly string[]): Promise<number[]> {
    if (texts.length === 0) return [];
    try {
      await this.model.load();
    } catch (e) {
      throw new DomainError('unavailable', 'reranker.load_failed', `The reranker "${this.name}" could not load ${this.files.modelPath}: ${(e as Error).message}`);
    }
    try {
      const rows = await this.model.run(texts, 1, (batch) => ({ query, texts: batch }));
      return rows.map((r) => r[0]);
    } catch (e) {
      throw new DomainError('unavailable', 'reranker.failed', `The reranker "${this.name}" failed: ${(e as Error).message}`);
    }
  }

  close(): Promise<void> {
    return this.model.close();
  }
}
