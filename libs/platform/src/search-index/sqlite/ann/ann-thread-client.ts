import type { Worker } from 'node:worker_threads';
import type { AnnCandidates, AnnCounts, AnnOptions } from './ann-graphs';
import type { AnnReply, AnnRequest, AnnThreadOptions } from './ann-thread';
import { siblingWorker } from '../../../kernel/sibling-worker';

/**
 * The main thread's side of the graph thread (ann-thread.ts). Queries are messages answered in order; if the
 * thread fails, every query from then on is left to the exact scan (undefined), as with no graph.
 */
export class AnnThreadClient {
  private readonly worker: Worker;
  private readonly pending = new Map<number, (value: unknown) => void>();
  private nextId = 1;
  private broken = false;

  constructor(path: string, ann: AnnOptions) {
    const { onLeft, ...cloneable } = ann; // a function cannot cross to the thread: the thread tells, and it is called here
    this.worker = siblingWorker(__dirname, 'ann-thread', {
      workerData: { path, ann: cloneable } satisfies AnnThreadOptions,
    });
    // A thread keeping graphs keeps no process alive by itself; one answering a request does.
    this.worker.unref();
    this.worker.on('message', (reply: AnnReply) => {
      if ('startFailed' in reply) return this.fail();
      if ('left' in reply) return onLeft?.(reply.left.tid, reply.left.rows);
      const settle = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      settle?.(reply.value);
    });
    this.worker.on('error', () => this.fail());
    this.worker.on('exit', () => this.fail());
  }

  touched(tids: number[]): void {
    if (tids.length > 0) this.post({ touched: tids });
  }

  dropped(tid: number): void {
    this.post({ dropped: tid });
  }

  async query(tid: number, vector: readonly number[], k: number, filtered: boolean): Promise<AnnCandidates | undefined> {
    return (await this.request((id) => ({ id, query: { tid, vector: Float32Array.from(vector), k, filtered } }))) as AnnCandidates | undefined;
  }

  async whenIdle(): Promise<void> {
    await this.request((id) => ({ id, call: 'idle' }));
  }

  async counts(): Promise<AnnCounts> {
    return ((await this.request((id) => ({ id, call: 'counts' }))) as AnnCounts | undefined) ?? { loaded: 0, built: 0, leftOverBudget: 0 };
  }

  /** Saves the graphs changed since their last save and ends the thread. */
  async close(): Promise<void> {
    if (this.broken) return;
    await this.request((id) => ({ id, call: 'close' }));
    this.broken = true;
    await this.worker.terminate();
  }

  private post(request: AnnRequest): void {
    if (!this.broken) this.worker.postMessage(request);
  }

  private request(make: (id: number) => AnnRequest): Promise<unknown> {
    if (this.broken) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.worker.ref();
      this.worker.postMessage(make(id));
    });
  }

  private fail(): void {
    this.broken = true;
    for (const settle of this.pending.values()) settle(undefined);
    this.pending.clear();
  }
}
