import { Worker } from 'node:worker_threads';
import { rawRequest } from '../libs/testing/src/raw-http';
import { now, round } from './common';
import { ProbedCase, runProbedCases } from './probed-cases';
import { BENCH_KEY } from './service';


const json = (url: string, method: string, path: string, body: string, key = BENCH_KEY) =>
  fetch(`${url}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body }).then(async (r) => ({ status: r.status, note: (await r.text()).slice(0, 80) }));

/**
 * A JSON request built and sent by a thread of its own (the other cases send from the service's own loop, so their
 * /health figure includes the client's work): ready once the body is built, sent on the returned call.
 */
async function jsonFromThread(path: string, bodyExpression: string): Promise<(url: string) => Promise<{ status: number | string; note: string }>> {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
    const body = ${bodyExpression};
    parentPort.postMessage('ready');
    parentPort.once('message', ({ url, path, key }) => fetch(url + path, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body })
      .then(async (r) => parentPort.postMessage({ status: r.status, note: (await r.text()).slice(0, 80) }), (e) => parentPort.postMessage({ status: 'error', note: String(e) })));`,
    { eval: true },
  );
  await new Promise((resolve) => worker.once('message', resolve));
  return async (url) => {
    const answer = new Promise<{ status: number | string; note: string }>((resolve) => worker.once('message', resolve));
    worker.postMessage({ url, path, key: BENCH_KEY });
    try {
      return await answer;
    } finally {
      await worker.terminate();
    }
  };
}

function wideObject(keys: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const o: Record<string, unknown> = { ...extra };
  for (let i = 0; i < keys; i++) o[`k${i}`] = i;
  return o;
}

/**
 * Availability at the HTTP edge under hostile requests (issue 22): each is sent while a client on another thread
 * polls `GET /health`; the slowest answer is how long everyone else waited. Also the peak RSS (bodies held in
 * memory) and, for slow bodies, how many connections the service still held open after 5 s.
 */
export async function hostileRequestsBench(): Promise<void> {
  const cases: ProbedCase[] = [
    {
      name: 'a document of 200,000 keys (2.6 MB)',
      prepare: async () => {
        const body = JSON.stringify(wideObject(200_000, { id: 'wide', type: 'core', document_parts: [{ text: 'x' }] }));
        return (url) => json(url, 'POST', '/v2/corpora/h/documents', body);
      },
    },
    {
      name: 'a query of 40 MB (JSON, sent from another thread)',
      prepare: () => jsonFromThread('/v2/corpora/h/query', `JSON.stringify({ query: 'x', pad: 'x'.repeat(40 * 1024 * 1024) })`),
    },
    {
      name: 'document metadata with 100,000 keys',
      prepare: async () => {
        const body = JSON.stringify({ id: 'wide', type: 'core', document_parts: [{ text: 'x' }], metadata: wideObject(100_000) });
        return (url) => json(url, 'POST', '/v2/corpora/h/documents', body);
      },
    },
    {
      name: 'document metadata nested 1,000 deep',
      prepare: async () => {
        let deep: unknown = 1;
        for (let i = 0; i < 1000; i++) deep = { d: deep };
        const body = JSON.stringify({ id: 'deep', type: 'core', document_parts: [{ text: 'x' }], metadata: deep });
        return async (url) => {
          const res = await json(url, 'POST', '/v2/corpora/h/documents', body);
          await new Promise((r) => setTimeout(r, 500));
          const read = await fetch(`${url}/v2/corpora/h/documents/deep`, { headers: { 'x-api-key': BENCH_KEY } });
          return { status: res.status, note: `then GET ${read.status}; ${res.note}` };
        };
      },
    },
    {
      name: '8 parallel 50 MB bodies without credentials',
      prepare: async () => async (url) => {
        const all = await Promise.all(Array.from({ length: 8 }, () => rawRequest(url, { path: '/v2/corpora', contentLength: 50 * 1024 * 1024, giveUpMs: 60_000 })));
        const read = all.reduce((n, o) => n + o.bodyBytesWritten, 0);
        return { status: [...new Set(all.map((o) => o.status))].join(','), note: `${round(read / 2 ** 20, 1)} MB of 400 MB sent before the service hung up` };
      },
    },
    {
      name: '24 parallel 50 MB bodies with a key',
      prepare: async () => async (url) => {
        const all = await Promise.all(Array.from({ length: 24 }, () => rawRequest(url, { path: '/v2/corpora/h/documents', contentLength: 50 * 1024 * 1024, headers: { 'x-api-key': BENCH_KEY }, giveUpMs: 120_000 })));
        const read = all.reduce((n, o) => n + o.bodyBytesWritten, 0);
        const statuses = all.map((o) => o.status ?? 'none');
        const count = (s: unknown) => statuses.filter((x) => x === s).length;
        return { status: [...new Set(statuses)].join(','), note: `${count(400)} read (400: not JSON), ${count(503)} refused 503; ${round(read / 2 ** 20, 0)} MB of 1,200 sent` };
      },
    },
    {
      name: '50 slow bodies without credentials',
      prepare: async () => async (url) => {
        const started = now();
        const all = await Promise.all(Array.from({ length: 50 }, () => rawRequest(url, { path: '/v2/corpora', contentLength: 1000, sendBytes: 10, giveUpMs: 5_000 })));
        const open = all.filter((o) => o.closedAfterMs >= 5_000).length;
        return { status: [...new Set(all.map((o) => o.status ?? 'none'))].join(','), note: `${open} of 50 still open after 5 s (${round((now() - started) / 1000, 1)} s)` };
      },
    },
  ];
  await runProbedCases('hostile-requests', cases);
}
