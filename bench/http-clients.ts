import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

export interface ClientRequest {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
}

/**
 * Sends the requests from `concurrency` clients in a worker thread, so that the clients' HTTP and JSON work
 * does not share the service's event loop (real clients run elsewhere). Rejects on the first status ≥ 300.
 * Resolves with each request's time in ms as the client saw it (sent to body read), in the order given; with
 * one client, that is each request's latency alone.
 */
export function runClients(baseUrl: string, apiKey: string, requests: readonly ClientRequest[], concurrency: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(join(__dirname, 'http-clients-worker.js'), { workerData: { baseUrl, apiKey, requests, concurrency } });
    worker.once('message', (m: { error?: string; times?: number[] }) => (m.error ? reject(new Error(m.error)) : resolve(m.times!)));
    worker.once('error', reject);
  });
}
