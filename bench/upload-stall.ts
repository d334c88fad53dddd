import { now, percentile, report, round } from './common';
import { BENCH_KEY, startBenchService } from './service';

/**
 * How much a large upload stalls everyone else: `GET /health` sent one after another (5 ms apart) while 3 MB
 * Markdown files (headings, paragraphs, a table per section) are uploaded one at a time. Parsing runs on the
 * extraction thread; chunking, embedding and indexing stay on the event loop.
 */
export async function uploadStallBench(args: string[]): Promise<void> {
  const uploads = Number(args[0] ?? 6);
  const service = await startBenchService('upload-stall');
  const { url } = service.started;
  try {
    await service.call('POST', '/v2/corpora', { key: 'u', name: 'u' });
    let markdown = '';
    for (let i = 0; markdown.length < 3e6; i++) {
      markdown += `## Section ${i}\n\n${'Otters eat urchins in kelp forests near the coast. '.repeat(20)}\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n`;
    }
    let done = false;
    const pings: number[] = [];
    const pinger = (async () => {
      while (!done) {
        const t = now();
        await (await fetch(`${url}/health`)).text();
        pings.push(now() - t);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const took: number[] = [];
    for (let i = 0; i < uploads; i++) {
      const form = new FormData();
      form.append('file', new Blob([markdown]), `big-${i}.md`);
      const t = now();
      const res = await fetch(`${url}/v2/corpora/u/upload_file`, { method: 'POST', headers: { 'x-api-key': BENCH_KEY }, body: form });
      await res.text();
      if (res.status !== 201) throw new Error(`upload: ${res.status}`);
      took.push(now() - t);
    }
    done = true;
    await pinger;
    report('upload-stall', [
      {
        uploads,
        'upload p50 ms': round(percentile(took, 50), 0),
        'health answered': pings.length,
        'health p50 ms': round(percentile(pings, 50), 2),
        'health p99 ms': round(percentile(pings, 99), 2),
        'health max ms': round(Math.max(...pings), 1),
      },
    ]);
  } finally {
    await service.close();
  }
}
