import { Worker } from 'node:worker_threads';
import { manyParagraphsDocx, manySentencesText, pageBombPdf, sentencesText, zipBombDocx } from '../libs/testing/src/hostile-files';
import { now, report, round } from './common';
import { BENCH_KEY, startBenchService } from './service';

interface HostileCase {
  readonly name: string;
  /** Builds what is sent (before the probe starts, so building is not measured), then sends it. */
  readonly prepare: () => Promise<(url: string) => Promise<Response>>;
}

const upload = (url: string, file: Buffer | string, filename: string): Promise<Response> => {
  const form = new FormData();
  form.append('file', new Blob([file]), filename);
  return fetch(`${url}/v2/corpora/h/upload_file`, { method: 'POST', headers: { 'x-api-key': BENCH_KEY }, body: form });
};

/**
 * Availability under hostile input (issue 22): each hostile request is sent while another client polls
 * `GET /health` (5 ms apart); the slowest /health answer during the request is how long the service was frozen
 * for everyone. The service runs in this process, as in the other benches, so the peak RSS is the service's.
 */
export async function hostileUploadsBench(args: string[]): Promise<void> {
  const paragraphs = Number(args[0] ?? 86_000);
  const bombBytes = Number(args[1] ?? 400e6);
  const cases: HostileCase[] = [
    { name: '459 KB .txt of short sentences', prepare: async () => (url) => upload(url, manySentencesText(459_000), 'sentences.txt') },
    { name: `.docx of ${paragraphs} short paragraphs`, prepare: async () => { const file = await manyParagraphsDocx(paragraphs); return (url) => upload(url, file, 'paragraphs.docx'); } },
    {
      name: 'structured JSON, 17k sentences',
      prepare: async () => {
        const body = JSON.stringify({ type: 'structured', id: 'json-17k', metadata: {}, sections: [{ text: sentencesText(17_000) }] });
        return (url) => fetch(`${url}/v2/corpora/h/documents`, { method: 'POST', headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' }, body });
      },
    },
    { name: `zip bomb .docx (${round(bombBytes / 1e6, 0)} MB entry)`, prepare: async () => { const file = await zipBombDocx(bombBytes); return (url) => upload(url, file, 'bomb.docx'); } },
    { name: 'PDF page bomb (10k shared pages)', prepare: async () => { const file = pageBombPdf(10, 4); return (url) => upload(url, file, 'pages.pdf'); } },
  ];
  const service = await startBenchService('hostile-uploads');
  const { url } = service.started;
  const rows: Record<string, unknown>[] = [];
  try {
    await service.call('POST', '/v2/corpora', { key: 'h', name: 'h' });
    for (const c of cases) {
      const send = await c.prepare();
      const pinger = startPinger(`${url}/health`);
      const t = now();
      const res = await send(url);
      const body = await res.text();
      const took = now() - t;
      const { slowest, rss, failed } = await pinger.stop();
      rows.push({
        case: c.name,
        status: res.status,
        'request s': round(took / 1000, 2),
        'slowest /health ms': round(slowest, 0),
        'peak RSS MB': round(rss / 2 ** 20, 0),
        ...(failed ? { 'health failed': failed } : {}),
        answer: body.slice(0, 90),
      });
    }
  } finally {
    await service.close();
  }
  report('hostile-uploads', rows);
}

/**
 * The /health client runs on its own thread: a client on the service's event loop would be frozen with it and
 * never see the stall. It also samples the process's RSS (the service's, shared by all threads).
 */
const PINGER = `
const { parentPort, workerData } = require('node:worker_threads');
let slowest = 0, rss = process.memoryUsage().rss, done = false, failed = 0;
parentPort.on('message', () => { done = true; });
(async () => {
  while (!done) {
    const t = performance.now();
    // A kept-alive socket the server closed while frozen fails; the retry counts from the first attempt.
    for (;;) {
      try { await (await fetch(workerData)).text(); break; } catch { failed++; }
    }
    slowest = Math.max(slowest, performance.now() - t);
    rss = Math.max(rss, process.memoryUsage().rss);
    await new Promise((r) => setTimeout(r, 5));
  }
  parentPort.postMessage({ slowest, rss, failed });
})();
`;

interface PingerResult {
  readonly slowest: number;
  readonly rss: number;
  readonly failed: number;
}

export function startPinger(healthUrl: string): { stop(): Promise<PingerResult> } {
  const worker = new Worker(PINGER, { eval: true, workerData: healthUrl });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        worker.once('message', (m: PingerResult) => void worker.terminate().then(() => resolve(m)));
        worker.once('error', reject);
        worker.postMessage('stop');
      }),
  };
}
