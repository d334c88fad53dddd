import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { IdTopK } from './lexical-bounds';
import type { RangeJob } from './lexical-split';
import { topKIds } from './lexical-top-k';

/** What the main thread gives the ranking thread when it starts it (lexical-thread-client.ts). */
export interface LexicalThreadData {
  /**
   * Slot 0: the number of the last job answered, which the main thread waits on; slot 1: 1 once the thread is up;
   * slot 2: the open job's number, which this thread claims (negated) before ranking it, or the main thread takes
   * back (0) if it finished its own half first: a job this thread was not scheduled to start is not waited for.
   */
  readonly signal: Int32Array;
  /** Answers go here, read by the waiting main thread with receiveMessageOnPort. */
  readonly answers: MessagePort;
}

export interface LexicalJob {
  readonly seq: number;
  readonly job: RangeJob;
}

export interface LexicalAnswer {
  readonly seq: number;
  readonly top: IdTopK | undefined;
}

/**
 * The ranking thread: ranks ranges of internal ids from postings in shared memory, one job at a time. It reads
 * what the main thread wrote before posting the job and nothing else; the main thread waits for the answer, so no
 * write happens while it ranks. Its candidate buffers are its own, one set for every table (a job at a time), grown
 * to the largest merge a job needed.
 */
function main(): void {
  const port = parentPort!;
  const { signal, answers } = workerData as LexicalThreadData;
  const buffers = {};
  port.on('message', ({ seq, job }: LexicalJob) => {
    if (Atomics.compareExchange(signal, 2, seq, -seq) !== seq) return; // taken back: the main thread ranked it
    let top: IdTopK | undefined;
    try {
      top = topKIds(job.rows, buffers, job.terms, job.phrases, job.k, job.avgdl, job.bar);
    } catch {
      top = undefined; // the main thread ranks the range itself
    }
    answers.postMessage({ seq, top } satisfies LexicalAnswer);
    Atomics.store(signal, 0, seq);
    Atomics.notify(signal, 0);
  });
  // Told through shared memory, not a message: a caller that never yields to the event loop still sees it.
  Atomics.store(signal, 1, 1);
}

main();
