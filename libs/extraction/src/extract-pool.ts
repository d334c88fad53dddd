import { Injectable, OnModuleDestroy } from '@nestjs/common';
import type { Worker } from 'node:worker_threads';
import type { ParseRequest } from './extract-worker';
import { ExtractedDocument, ExtractionError, ExtractionErrorKind, ExtractOptions } from './extracted';
import { siblingWorker } from '@lib/platform';

type Reply = { ready: true } | { id: number; document: ExtractedDocument; threadId: number } | { id: number; error: { kind: ExtractionErrorKind; message: string } };

/** Settings of the pool; the service reads them from EXTRACTION_WORKERS and EXTRACTION_TIMEOUT_MS. */
export interface ExtractionPoolOptions {
  /** Files parsed at once, one per worker thread (default 2). */
  readonly workers?: number;
  /** Wall-clock time one parse may take (default 30 s); the worker that exceeds it is terminated. */
  readonly timeoutMs?: number;
  /** Heap (old generation) one worker may grow to, MB (default 1024); past it only that worker dies. */
  readonly maxHeapMb?: number;
}

export const DEFAULT_EXTRACTION_WORKERS = 2;
export const DEFAULT_EXTRACTION_TIMEOUT_MS = 30_000;

interface Job {
  readonly file: Uint8Array;
  readonly filename: string;
  readonly options: ExtractOptions;
  resolve(value: { document: ExtractedDocument; threadId: number }): void;
  reject(e: unknown): void;
}

interface Running {
  readonly id: number;
  readonly job: Job;
  readonly timer: NodeJS.Timeout;
}

/**
 * Parses files on a small pool of worker threads, so a large PDF or DOCX (pdf.js layout, mammoth's conversion)
 * does not stall the service's event loop, and one slow or hostile file holds one worker, not every upload.
 * Each worker parses one file at a time; files wait in a queue for a free worker. A parse past the time limit is
 * refused and its worker terminated (nothing else stops a parser stuck in synchronous work); so is a worker
 * whose parse hit a size limit (a PDF refused mid-layout leaves pdf.js work behind), and one that dies fails
 * only the file it held. Workers start on demand and are unref'd. Hand-written rather than a pool library: one
 * message type, and the time limit must terminate the very worker that holds the file. A Nest provider, so the
 * workers end with the application.
 */
@Injectable()
export class ExtractionPool implements OnModuleDestroy {
  private readonly idle: Worker[] = [];
  private readonly running = new Map<Worker, Running | undefined>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private readonly workers: number;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;

  constructor(options: ExtractionPoolOptions = {}) {
    this.workers = options.workers ?? DEFAULT_EXTRACTION_WORKERS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_EXTRACTION_TIMEOUT_MS;
    this.maxHeapMb = options.maxHeapMb ?? 1024;
  }

  /** As `extract`, off the main thread; `threadId` says which thread parsed (for tests). */
  extractWithThread(file: Buffer, filename: string, options: ExtractOptions): Promise<{ document: ExtractedDocument; threadId: number }> {
    // A copy the worker owns: the caller's buffer may be a view of a larger pooled one.
    const copy = new Uint8Array(file);
    return new Promise((resolve, reject) => {
      this.queue.push({ file: copy, filename, options, resolve, reject });
      this.dispatch();
    });
  }

  async extract(file: Buffer, filename: string, options: ExtractOptions): Promise<ExtractedDocument> {
    return (await this.extractWithThread(file, filename, options)).document;
  }

  onModuleDestroy(): Promise<void> {
    return this.close();
  }

  /** Ends every worker; the files they held and those waiting fail. The next call starts new workers. */
  async close(): Promise<void> {
    const stopped = new ExtractionError('corrupt', 'The parser stopped while reading the file (the extraction pool was closed)');
    for (const job of this.queue.splice(0)) job.reject(stopped);
    await Promise.all([...this.running.keys()].map((worker) => this.retire(worker, stopped)));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop();
      if (!worker) {
        // A new worker takes the next file once it says it is ready (its start is not the file's time).
        while (this.running.size < this.workers && this.running.size - this.busy() < this.queue.length) this.spawn();
        return;
      }
      const job = this.queue.shift()!;
      const id = this.nextId++;
      const timer = setTimeout(() => void this.retire(worker, new ExtractionError('timeout', `Parsing the file took longer than ${this.timeoutMs} ms`)), this.timeoutMs);
      timer.unref();
      this.running.set(worker, { id, job, timer });
      const request: ParseRequest = { id, file: job.file, filename: job.filename, options: job.options };
      worker.postMessage(request, [job.file.buffer as ArrayBuffer]);
    }
  }

  /** Workers holding a file; the others in `running` are idle or starting (none idle when this is asked). */
  private busy(): number {
    return [...this.running.values()].filter((r) => r !== undefined).length;
  }

  private spawn(): Worker {
    const worker = siblingWorker(__dirname, 'extract-worker', {
      resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb },
      aliases: true,
    });
    worker.unref();
    this.running.set(worker, undefined);
    worker.on('message', (reply: Reply) => this.settle(worker, reply));
    const died = (reason: string) => void this.retire(worker, new ExtractionError('corrupt', `The parser stopped while reading the file (${reason})`));
    worker.on('error', (e) => died(e.message));
    worker.on('exit', (code) => died(`exit code ${code}`));
    return worker;
  }

  private settle(worker: Worker, reply: Reply): void {
    if ('ready' in reply) {
      this.idle.push(worker);
      return this.dispatch();
    }
    const current = this.running.get(worker);
    if (!current || current.id !== reply.id) return;
    clearTimeout(current.timer);
    if ('error' in reply) {
      const error = new ExtractionError(reply.error.kind, reply.error.message);
      if (reply.error.kind === 'too_large') return void this.retire(worker, error);
      current.job.reject(error);
    } else current.job.resolve({ document: reply.document, threadId: reply.threadId });
    this.running.set(worker, undefined);
    this.idle.push(worker);
    this.dispatch();
  }

  /** Takes a worker out of the pool for good, failing the file it held with `error`, and terminates it. */
  private async retire(worker: Worker, error: ExtractionError): Promise<void> {
    if (!this.running.has(worker)) return;
    const current = this.running.get(worker);
    this.running.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at >= 0) this.idle.splice(at, 1);
    if (current) {
      clearTimeout(current.timer);
      current.job.reject(error);
    }
    this.dispatch();
    await worker.terminate();
  }
}
