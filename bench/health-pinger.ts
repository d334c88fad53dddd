import { Worker } from 'node:worker_threads';

/**
 * Sends `GET /health` one after another (`gapMs` apart) from a worker thread until stopped, and returns every
 * answer's latency in ms. On its own thread so that a stall of the service's loop is timed from when the request
 * was due, as a client elsewhere would see it (a client on that loop would sleep through the stall). Pings sent
 * within `warmUpMs` of the start are not counted (the thread's first fetch sets up its client: ~130 ms).
 */
export function startHealthPinger(baseUrl: string, gapMs = 5, warmUpMs = 0): { stop(): Promise<{ latencies: number[]; failed: number }> } {
  const worker = new Worker(PINGER, { eval: true, workerData: { url: `${baseUrl}/health`, gapMs, warmUpMs } });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        worker.once('message', (m: { latencies: number[]; failed: number }) => void worker.terminate().then(() => resolve(m)));
        worker.once('error', reject);
        worker.postMessage('stop');
      }),
  };
}

const PINGER = `
const { parentPort, workerData } = require('node:worker_threads');
const latencies = [];
let done = false, failed = 0;
const counted = performance.now() + workerData.warmUpMs;
parentPort.on('message', () => { done = true; });
(async () => {
  while (!done) {
    const t = performance.now();
    try { const res = await fetch(workerData.url); await res.text(); if (t < counted) {} else if (res.status !== 200) failed++; else latencies.push(performance.now() - t); } catch { if (t >= counted) failed++; }
    await new Promise((r) => setTimeout(r, workerData.gapMs));
  }
  parentPort.postMessage({ latencies, failed });
})();
`;
