import { parentPort, workerData } from 'node:worker_threads';
import type { ClientRequest } from './http-clients';

const { baseUrl, apiKey, requests, concurrency } = workerData as { baseUrl: string; apiKey: string; requests: ClientRequest[]; concurrency: number };

/** Each request's time (ms, sent to whole body read), in the order given. */
async function main(): Promise<number[]> {
  const times = new Array<number>(requests.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const at = next++;
        const r = requests[at];
        const t = performance.now();
        const res = await fetch(`${baseUrl}${r.path}`, {
          method: r.method,
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          body: r.body === undefined ? undefined : JSON.stringify(r.body),
        });
        const text = await res.text();
        times[at] = performance.now() - t;
        if (res.status >= 300) throw new Error(`${r.method} ${r.path}: ${res.status} ${text.slice(0, 300)}`);
      }
    }),
  );
  return times;
}

main().then(
  (times) => parentPort?.postMessage({ times }),
  (e: unknown) => parentPort?.postMessage({ error: e instanceof Error ? e.message : String(e) }),
);
