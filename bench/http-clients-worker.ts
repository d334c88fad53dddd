import { parentPort, workerData } from 'node:worker_threads';
import type { ClientRequest } from './http-clients';

const { baseUrl, apiKey, requests, concurrency } = workerData as { baseUrl: string; apiKey: string; requests: ClientRequest[]; concurrency: number };

async function main(): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const r = requests[next++];
        const res = await fetch(`${baseUrl}${r.path}`, {
          method: r.method,
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          body: r.body === undefined ? undefined : JSON.stringify(r.body),
        });
        const text = await res.text();
        if (res.status >= 300) throw new Error(`${r.method} ${r.path}: ${res.status} ${text.slice(0, 300)}`);
      }
    }),
  );
}

main().then(
  () => parentPort?.postMessage({}),
  (e: unknown) => parentPort?.postMessage({ error: e instanceof Error ? e.message : String(e) }),
);
