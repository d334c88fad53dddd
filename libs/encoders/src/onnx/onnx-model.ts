import { ModelThread } from '../model-thread';
import type { OnnxModelFiles } from './model-dir';
import { ONNX_WORKER_SOURCE } from './onnx-worker';

/** How an ONNX model runs in this process. Defaults measured on the project's 2-core machine. */
export interface OnnxRunOptions {
  /** Worker threads, each with its own session (a copy of the weights). Default 1: one core stays free for HTTP. */
  readonly threads?: number;
  /** onnxruntime's intra-op threads per worker. Default 1. */
  readonly intraOpThreads?: number;
  /** Texts per forward pass. Default 16: a batch is padded to its longest text, and CPU gains little past that. */
  readonly batchSize?: number;
}

type Ready = { dimensions: number; loadMs: number };

/**
 * onnxruntime-node's Linux library (1.30) starts Microsoft's telemetry system when it loads: it creates
 * `/tmp/mat-debug-<pid>.log` in every process that loads a model and is built to upload usage events over HTTPS
 * when it finds a CA bundle. A self-hosted service sends nothing to a vendor unasked: `ORT_DISABLE_TELEMETRY=1`,
 * which the library reads at load, unless the operator set the variable. Set on the main thread before the model's
 * threads start (the process's environment, which the threads' native code reads; docs/encoders.md).
 */
export function quietOnnxRuntime(env: NodeJS.ProcessEnv = process.env): void {
  if (env.ORT_DISABLE_TELEMETRY === undefined) env.ORT_DISABLE_TELEMETRY = '1';
}

/**
 * A pool of worker threads running one model directory, for embedding (`task: 'embed'`) or scoring query and
 * document pairs (`'score'`). Loaded on first use (or `load()`); a thread that died is replaced on the next call.
 */
export class OnnxModel {
  private threads?: ModelThread<Ready>[];
  private ready?: Promise<Ready>;

  constructor(
    readonly files: OnnxModelFiles,
    readonly task: 'embed' | 'score',
    readonly options: OnnxRunOptions = {},
  ) {}

  /** Loads every thread; resolves with the vector length (0 for a scorer). Throws the worker's reason on failure. */
  load(): Promise<Ready> {
    if (this.threads?.some((t) => !t.alive)) void this.close();
    if (!this.ready) {
      quietOnnxRuntime();
      const n = Math.max(1, Math.floor(this.options.threads ?? 1));
      const workerData = {
        ortModule: require.resolve('onnxruntime-node'),
        tokenizersModule: require.resolve('@huggingface/tokenizers'),
        modelPath: this.files.modelPath,
        tokenizerPath: this.files.tokenizerPath,
        tokenizerConfig: this.files.tokenizerConfig,
        settings: this.files.settings,
        task: this.task,
        intraOpThreads: Math.max(1, Math.floor(this.options.intraOpThreads ?? 1)),
      };
      const threads = Array.from({ length: n }, () => new ModelThread<Ready>(ONNX_WORKER_SOURCE, workerData));
      this.threads = threads;
      this.ready = Promise.all(threads.map((t) => t.load)).then(
        (all) => ({ dimensions: all[0].dimensions, loadMs: Math.max(...all.map((r) => r.loadMs)) }),
        async (e: unknown) => {
          if (this.threads === threads) [this.threads, this.ready] = [undefined, undefined];
          await Promise.all(threads.map((t) => t.terminate()));
          throw e;
        },
      );
    }
    return this.ready;
  }

  /**
   * Runs `texts` in batches of similar length (padding to the longest text of a batch costs compute), each on the
   * least busy thread; `request` builds a batch's message; the answer has `width` numbers per text.
   */
  async run(texts: readonly string[], width: number, request: (batch: string[]) => object): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    await this.load();
    const threads = this.threads!;
    const size = Math.max(1, Math.floor(this.options.batchSize ?? 16));
    const order = texts.map((_, i) => i).sort((a, b) => texts[a].length - texts[b].length);
    const out: Float32Array[] = new Array(texts.length);
    const batches: number[][] = [];
    for (let i = 0; i < order.length; i += size) batches.push(order.slice(i, i + size));
    await Promise.all(
      batches.map(async (batch) => {
        const thread = threads.reduce((a, t) => (t.queued < a.queued ? t : a));
        const flat = await thread.run(request(batch.map((i) => texts[i])));
        // A directory whose model was swapped after registration must not yield vectors of another length.
        if (flat.length !== batch.length * width) throw new Error(`the model gave ${flat.length / batch.length} numbers per text, not ${width}`);
        batch.forEach((at, row) => (out[at] = flat.slice(row * width, (row + 1) * width)));
      }),
    );
    return out;
  }

  async close(): Promise<void> {
    const threads = this.threads ?? [];
    [this.threads, this.ready] = [undefined, undefined];
    await Promise.all(threads.map((t) => t.terminate()));
  }
}
