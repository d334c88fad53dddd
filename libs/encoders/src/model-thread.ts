import { Worker } from 'node:worker_threads';

type Reply = { id: number; vectors?: Float32Array; error?: string };
type Pending = { resolve: (v: Float32Array) => void; reject: (e: Error) => void };

/**
 * One worker thread running a model, with its table of requests; `load` settles with the worker's ready message
 * once the model is in memory. The worker's protocol: it posts `{ ready: true, ... }` (or `{ error }`) once
 * loaded, then answers each `{ id, ...request }` with `{ id, vectors }` (one flat Float32Array) or `{ id, error }`.
 */
export class ModelThread<Ready extends object = { loadMs?: number }> {
  readonly worker: Worker;
  readonly load: Promise<Ready>;
  /** Requests handed to this thread and not yet answered (the dispatcher picks the least busy thread). */
  queued = 0;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private dead?: Error;

  /** `source`: the worker's JavaScript, evaluated (one file then works under ts-jest, ts-node and the build alike). */
  constructor(source: string, workerData: unknown) {
    this.worker = new Worker(source, { eval: true, workerData });
    // An idle thread must not keep the process alive; `request` refs it while work is outstanding.
    this.worker.unref();
    this.load = new Promise((resolve, reject) => {
      this.worker.once('error', reject);
      this.worker.once('exit', (code) => reject(new Error(`model thread exited with code ${code} while loading`)));
      this.worker.once('message', (m: Ready & { ready?: boolean; error?: string }) => (m.ready ? resolve(m) : reject(new Error(m.error ?? 'the model did not load'))));
    });
    this.worker.on('error', (e) => this.failAll(e));
    this.worker.on('exit', (code) => this.failAll(new Error(`model thread exited with code ${code}`)));
    void this.load.then(() => this.worker.on('message', (m: Reply) => this.settle(m)), () => undefined);
  }

  /** False once the thread has died: its owner replaces it rather than queue work that would never end. */
  get alive(): boolean {
    return this.dead === undefined;
  }

  /** Sends one request once the model is loaded; resolves to the worker's flat answer. */
  async run(request: object): Promise<Float32Array> {
    this.queued++;
    try {
      await this.load;
      return await this.request(request);
    } finally {
      this.queued--;
    }
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }

  private request(request: object): Promise<Float32Array> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id });
    });
  }

  private settle(m: Reply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker.unref();
    if (m.vectors) p.resolve(m.vectors);
    else p.reject(new Error(m.error ?? 'no answer'));
  }

  private failAll(e: Error): void {
    this.dead ??= e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}
