import { manyParagraphsDocx, manySentencesText, pageBombPdf, sentencesText, zipBombDocx } from '../libs/testing/src/hostile-files';
import { round } from './common';
import { ProbedCase, runProbedCases } from './probed-cases';
import { BENCH_KEY } from './service';

const answer = async (res: Response) => ({ status: res.status, note: (await res.text()).slice(0, 90) });

const upload = (url: string, file: Buffer | string, filename: string) => {
  const form = new FormData();
  form.append('file', new Blob([file]), filename);
  return fetch(`${url}/v2/corpora/h/upload_file`, { method: 'POST', headers: { 'x-api-key': BENCH_KEY }, body: form }).then(answer);
};

/**
 * Availability under hostile input (issue 22): each hostile request is sent while another client polls
 * `GET /health` (5 ms apart); the slowest /health answer during the request is how long the service was frozen
 * for everyone. The service runs in this process, as in the other benches, so the peak RSS is the service's.
 */
export async function hostileUploadsBench(args: string[]): Promise<void> {
  const paragraphs = Number(args[0] ?? 86_000);
  const bombBytes = Number(args[1] ?? 400e6);
  const cases: ProbedCase[] = [
    { name: '459 KB .txt of short sentences', prepare: async () => (url) => upload(url, manySentencesText(459_000), 'sentences.txt') },
    { name: `.docx of ${paragraphs} short paragraphs`, prepare: async () => { const file = await manyParagraphsDocx(paragraphs); return (url) => upload(url, file, 'paragraphs.docx'); } },
    {
      name: 'structured JSON, 17k sentences',
      prepare: async () => {
        const body = JSON.stringify({ type: 'structured', id: 'json-17k', metadata: {}, sections: [{ text: sentencesText(17_000) }] });
        return (url) => fetch(`${url}/v2/corpora/h/documents`, { method: 'POST', headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' }, body }).then(answer);
      },
    },
    { name: `zip bomb .docx (${round(bombBytes / 1e6, 0)} MB entry)`, prepare: async () => { const file = await zipBombDocx(bombBytes); return (url) => upload(url, file, 'bomb.docx'); } },
    { name: 'PDF page bomb (10k shared pages)', prepare: async () => { const file = pageBombPdf(10, 4); return (url) => upload(url, file, 'pages.pdf'); } },
  ];
  await runProbedCases('hostile-uploads', cases);
}
