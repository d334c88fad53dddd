import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import type { ClientRequest } from './http-clients';

const { baseUrl, apiKey, requests, concurrency } = workerData as { baseUrl: string; apiKey: string; requests: ClientRequest[]; concurrency: number };

/**
 * Each request's time (ms, sent to whole body read), in the order given. Sent with undici's `request` over a pool
 * of `concurrency` kept-alive connections, not `fetch`: on a bare `node:http` server answering 10 KB of JSON from
 * this thread, `fetch` took 1.2–1.9 ms a round trip where `request` and `node:http`'s client took 0.3–0.8 ms
 * (docs/benchmarks/2026-11-29-session-22.md). What a client library adds is the client's; what is timed is the service.
 */
async function main(): Promise<number[]> {
  const times = new Array<number>(requests.length);
  const pool = new Pool(baseUrl, { connections: concurrency });
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests.length) {
          const at = next++;
          const r = requests[at];
          const t = performance.now();
          const res = await pool.request({
            path: r.path,
            method: r.method as 'GET',
            headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
            body: r.body === undefined ? undefined : JSON.stringify(r.body),
          });
          const text = await res.body.text();
          times[at] = performance.now() - t;
          if (res.statusCode >= 300) throw new Error(`${r.method} ${r.path}: ${res.statusCode} ${text.slice(0, 300)}`);
        }
      }),
    );
  } finally {
    await pool.close();
  }
  return times;
}

main().then(
  (times) => parentPort?.postMessage({ times }),
  (e: unknown) => parentPort?.postMessage({ error: e instanceof Error ? e.message : String(e) }),
);
