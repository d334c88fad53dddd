import { parentPort, threadId } from 'node:worker_threads';
import { extract } from './extract';
import { ExtractionError, ExtractOptions } from './extracted';

/** One parse request from the service's main thread (extract-pool.ts). */
export interface ParseRequest {
  readonly id: number;
  readonly file: Uint8Array;
  readonly filename: string;
  readonly options: ExtractOptions;
}

/** Runs in the extraction worker: parses each file it is sent and answers with the document or the error. */
parentPort?.on('message', (request: ParseRequest) => {
  const { id, file, filename, options } = request;
  extract(Buffer.from(file.buffer, file.byteOffset, file.byteLength), filename, options).then(
    (document) => parentPort!.postMessage({ id, document, threadId }),
    (e: unknown) =>
      parentPort!.postMessage(
        e instanceof ExtractionError ? { id, error: { kind: e.kind, message: e.message } } : { id, error: { kind: 'corrupt', message: `The file could not be parsed: ${(e as Error)?.message ?? String(e)}` } },
      ),
  );
});

// Loaded and listening: the pool starts a file's time limit from here, not from the thread's start.
parentPort?.postMessage({ ready: true });
