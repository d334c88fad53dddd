import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract } from '@lib/extraction';
import { median, now, report, round } from './common';

/**
 * Issue 4: parse throughput per format, on the committed fixtures (test/fixtures/files/sample.*), each parsed
 * repeatedly for a fixed time, with and without table extraction. Small files: this is the per-file cost
 * (parser start-up, container unzip, layout), not a large-document rate.
 */
export async function parseBench(args: string[]): Promise<void> {
  const seconds = Number(args[0] ?? 2);
  const dir = join(process.cwd(), 'test', 'fixtures', 'files');
  const rows: Record<string, unknown>[] = [];
  for (const name of readdirSync(dir).filter((f) => f.startsWith('sample.')).sort()) {
    const file = readFileSync(join(dir, name));
    const times: number[] = [];
    let chars = 0;
    const end = now() + seconds * 1000;
    while (now() < end || times.length < 5) {
      const t = now();
      const doc = await extract(file, name, { extractTables: true });
      times.push(now() - t);
      if (!chars) chars = JSON.stringify(doc.sections).length;
    }
    const ms = median(times);
    rows.push({ format: name.slice('sample.'.length), 'file KB': round(file.length / 1024, 1), parses: times.length, 'median ms': round(ms, 3), 'files/s': round(1000 / ms, 0), 'MB/s': round(file.length / 2 ** 20 / (ms / 1000), 2) });
  }
  report('parse', rows, { rss: `${round(process.memoryUsage().rss / 2 ** 20, 0)} MB` });
}
