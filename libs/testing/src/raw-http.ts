import { Worker } from 'node:worker_threads';
import { connect } from 'node:net';

export interface RawOutcome {
  /** The status line's code, or undefined when the server closed without answering. */
  readonly status?: number;
  readonly response: string;
  /** Body bytes the client managed to write before the server closed the connection. */
  readonly bodyBytesWritten: number;
  /** Body bytes written when the first byte of the answer arrived: how much the server had been sent when it decided. */
  readonly bodyBytesBeforeAnswer?: number;
  /** Milliseconds from the first byte sent to the server closing the connection. */
  readonly closedAfterMs: number;
}

/**
 * Sends a request over a plain socket the way a hostile client would: headers announcing `contentLength`
 * bytes, then the body in `chunkBytes` pieces (or `sendBytes` of it and then nothing, to stall), and reports
 * what the server answered and when it hung up. Gives up after `giveUpMs`.
 */
export function rawRequest(
  baseUrl: string,
  options: { method?: string; path: string; headers?: Record<string, string>; contentLength: number; sendBytes?: number; chunkBytes?: number; giveUpMs?: number },
): Promise<RawOutcome> {
  const url = new URL(baseUrl);
  const { method = 'POST', path, headers = {}, contentLength, sendBytes = contentLength, chunkBytes = 64 * 1024, giveUpMs = 15_000 } = options;
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const started = Date.now();
    let written = 0;
    let beforeAnswer: number | undefined;
    let response = '';
    let closed = false;
    const chunk = Buffer.alloc(chunkBytes, 0x20);
    const finish = () => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(response)?.[1];
      resolve({ status: status ? Number(status) : undefined, response, bodyBytesWritten: written, bodyBytesBeforeAnswer: beforeAnswer, closedAfterMs: Date.now() - started });
    };
    const timer = setTimeout(finish, giveUpMs);
    const pump = () => {
      while (!closed && written < sendBytes) {
        const n = Math.min(chunk.length, sendBytes - written);
        written += n;
        if (!socket.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('connect', () => {
      const head = [`${method} ${path} HTTP/1.1`, `Host: ${url.host}`, `Content-Length: ${contentLength}`, 'Content-Type: application/json', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
      socket.write(head);
      pump();
    });
    socket.on('data', (d) => {
      beforeAnswer ??= written;
      response += d.toString('latin1');
    });
    socket.on('error', finish);
    socket.on('close', finish);
  });
}

/**
 * Polls `GET /health` every 5 ms from a worker thread until stopped, and reports the slowest answer and the peak
 * RSS of the process (the availability probe of issue 22). On its own thread so that a stall of the service's
 * event loop is measured whenever it happens: a client on that loop sleeping through a stall would not see it.
 */
export function pollHealth(baseUrl: string): { stop(): Promise<{ count: number; slowestMs: number; peakRss: number; failed: number }> } {
  const worker = new Worker(PINGER, { eval: true, workerData: `${baseUrl}/health` });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        worker.once('message', (m: { count: number; slowestMs: number; peakRss: number; failed: number }) => void worker.terminate().then(() => resolve(m)));
        worker.once('error', reject);
        worker.postMessage('stop');
      }),
  };
}

const PINGER = `
const { parentPort, workerData } = require('node:worker_threads');
let slowestMs = 0, peakRss = process.memoryUsage().rss, done = false, failed = 0, count = 0;
parentPort.on('message', () => { done = true; });
(async () => {
  while (!done) {
    const t = performance.now();
    // A kept-alive socket the server closed while frozen fails; the retry counts from the first attempt.
    for (;;) {
      try { await (await fetch(workerData)).text(); break; } catch { failed++; if (done) break; }
    }
    slowestMs = Math.max(slowestMs, performance.now() - t);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    count++;
    await new Promise((r) => setTimeout(r, 5));
  }
  parentPort.postMessage({ count, slowestMs, peakRss, failed });
})();
`;
