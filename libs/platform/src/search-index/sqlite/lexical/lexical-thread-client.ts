import { MessageChannel, receiveMessageOnPort, type Worker } from 'node:worker_threads';
import type { IdTopK } from './lexical-bounds';
import type { RangeJob, RangeRanker } from './lexical-split';
import type { LexicalAnswer, LexicalJob, LexicalThreadData } from './lexical-thread';
import { siblingWorker } from '../../../kernel/sibling-worker';

/** Longest wait for the thread's answer before it is deemed broken (a hostile query's range takes ~0.1 s). */
const ANSWER_TIMEOUT_MS = 5_000;

/**
 * The main thread's side of the ranking thread (lexical-thread.ts). Unlike the graph thread's queries, a job is
 * waited for synchronously (Atomics.wait, then the answer read off its port): the ranking stays a synchronous call,
 * and this thread ranks its own half meanwhile. Until the thread has started, and once it failed, `usable` is
 * false and queries rank on one thread.
 */
export class LexicalThreadClient implements RangeRanker {
  private readonly worker: Worker;
  private readonly signal = new Int32Array(new SharedArrayBuffer(12));
  private readonly answers = new MessageChannel();
  private broken = false;
  private seq = 0;
  /** Jobs the thread answered, and jobs taken back before it started them (benches and tests). */
  jobs = 0;
  takenBack = 0;

  /** `takeBack: false` always waits for the thread (tests that must see its answers). */
  constructor(private readonly options: { readonly takeBack?: boolean } = {}) {
    this.worker = siblingWorker(__dirname, 'lexical-thread', {
      workerData: { signal: this.signal, answers: this.answers.port2 } satisfies LexicalThreadData,
      transferList: [this.answers.port2],
    });
    // It holds no work of its own between queries: it never keeps the process alive.
    this.worker.unref();
    this.answers.port1.unref();
    this.worker.on('error', () => (this.broken = true));
    this.worker.on('exit', () => (this.broken = true));
  }

  get usable(): boolean {
    return !this.broken && Atomics.load(this.signal, 1) === 1;
  }

  start(job: RangeJob): () => IdTopK | undefined {
    const seq = ++this.seq;
    Atomics.store(this.signal, 2, seq);
    this.worker.postMessage({ seq, job } satisfies LexicalJob);
    return () => this.answer(seq);
  }

  close(): Promise<number> {
    this.broken = true;
    this.answers.port1.close();
    return this.worker.terminate();
  }

  /** The thread's answer, or undefined: rank the job here (taken back before the thread started it, or it failed). */
  private answer(seq: number): IdTopK | undefined {
    // Not started yet, though this thread ranked a whole half meanwhile: the other core is busy, waiting would
    // cost more than ranking it here (measured: 2.6–3.3 ms for a query one thread ranks in 0.7–2.3).
    if (this.options.takeBack !== false && Atomics.compareExchange(this.signal, 2, seq, 0) === seq) {
      this.takenBack++;
      return undefined;
    }
    const deadline = performance.now() + ANSWER_TIMEOUT_MS;
    for (;;) {
      const done = Atomics.load(this.signal, 0);
      if (done === seq) break;
      const left = deadline - performance.now();
      if (left <= 0 || this.broken) return this.fail();
      Atomics.wait(this.signal, 0, done, left);
    }
    // Answers come in order; an earlier one left unread (its wait gave up) is skipped.
    for (let m = receiveMessageOnPort(this.answers.port1); m; m = receiveMessageOnPort(this.answers.port1)) {
      const answer = m.message as LexicalAnswer;
      if (answer.seq === seq) {
        this.jobs++;
        return answer.top;
      }
    }
    return this.fail();
  }

  private fail(): undefined {
    this.broken = true;
    return undefined;
  }
}
