import { manyParagraphsDocx, manySentencesText, pageBombPdf, sentencesText, zipBombDocx } from '../libs/testing/src/hostile-files';
import { pollHealth } from '../libs/testing/src/raw-http';
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
      const pinger = pollHealth(url);
      const t = now();
      const res = await send(url);
      const body = await res.text();
      const took = now() - t;
      const { slowestMs: slowest, peakRss: rss, failed } = await pinger.stop();
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
