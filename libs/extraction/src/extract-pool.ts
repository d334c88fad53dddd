import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ParseRequest } from './extract-worker';
import { ExtractedDocument, ExtractionError, ExtractOptions } from './extracted';

type Reply = { id: number; document: ExtractedDocument; threadId: number } | { id: number; error: { kind: ExtractionError['kind']; message: string } };

interface Pending {
  /** The worker holding the parse: only its own death fails it. */
  readonly worker: Worker;
  resolve(value: { document: ExtractedDocument; threadId: number }): void;
  reject(e: unknown): void;
}

/**
 * Parses files on a worker thread, so a large PDF or DOCX (pdf.js layout, mammoth's conversion: tens to hundreds
 * of milliseconds of synchronous work) does not stall every other request on the service's event loop. One
 * worker, started on first use and unref'd; requests are posted to it as they come (it parses them in turn).
 * A worker that dies fails the parses it held with a clear error and is replaced on the next call.
 * Hand-written (≈ 60 lines) rather than a pool library: one worker, one message type. A Nest provider, so the
 * worker ends with the application.
 */
@Injectable()
export class ExtractionThread implements OnModuleDestroy {
  private worker?: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /** As `extract`, off the main thread; `threadId` says which thread parsed (for tests). */
  async extractWithThread(file: Buffer, filename: string, options: ExtractOptions): Promise<{ document: ExtractedDocument; threadId: number }> {
    const worker = this.start();
    const id = this.nextId++;
    // A copy the worker owns: the caller's buffer may be a view of a larger pooled one.
    const copy = new Uint8Array(file);
    const request: ParseRequest = { id, file: copy, filename, options };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { worker, resolve, reject });
      worker.postMessage(request, [copy.buffer]);
    });
  }

  async extract(file: Buffer, filename: string, options: ExtractOptions): Promise<ExtractedDocument> {
    return (await this.extractWithThread(file, filename, options)).document;
  }

  onModuleDestroy(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    // From TypeScript sources (tests, ts-node) the worker needs the same loaders; the build runs the .js file.
    const fromSource = __filename.endsWith('.ts');
    const worker = new Worker(join(__dirname, fromSource ? 'extract-worker.ts' : 'extract-worker.js'), {
      execArgv: fromSource ? ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'] : [],
    });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if ('error' in reply) waiting.reject(new ExtractionError(reply.error.kind, reply.error.message));
      else waiting.resolve({ document: reply.document, threadId: reply.threadId });
    });
    const fail = (reason: string) => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, waiting] of this.pending) {
        if (waiting.worker !== worker) continue;
        this.pending.delete(id);
        waiting.reject(new ExtractionError('corrupt', `The parser stopped while reading the file (${reason})`));
      }
    };
    worker.on('error', (e) => fail(e.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }
}

