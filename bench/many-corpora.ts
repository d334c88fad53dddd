import Database from 'better-sqlite3';
import { join } from 'node:path';
import { median, now, percentile, report, round } from './common';
import { runClients } from './http-clients';
import { startHealthPinger } from './health-pinger';
import { BENCH_KEY, startBenchService } from './service';

/**
 * What the count of corpora costs the embedded default (docs/deployment.md, "How many corpora"): each corpus has its
 * own SQLite tables (16 schema entries), and SQLite's schema work grows with the count. Creates corpora in steps
 * (MAX_CORPORA off) and after each step reports: a corpus creation's time and the event loop's stall meanwhile
 * (`/health` timed from another thread while 20 are created one at a time), and the time a new connection takes to
 * load the schema (every thread's connection pays it at start and after each schema change, on its own thread).
 * `npm run bench -- many-corpora [corpora=2000] [step=250]`
 */
export async function manyCorporaBench(args: string[]): Promise<void> {
  const total = Number(args[0] ?? 2000);
  const step = Number(args[1] ?? 250);
  const service = await startBenchService('many-corpora', { MAX_CORPORA: '0' });
  const { url } = service.started;
  const rows: Record<string, unknown>[] = [];
  try {
    let made = 0;
    while (made < total) {
      const batch = Array.from({ length: step }, (_, i) => ({ method: 'POST', path: '/v2/corpora', body: { key: `c${made + i}`, name: `c${made + i}` } }));
      await runClients(url, BENCH_KEY, batch, 4);
      made += step;
      const pinger = startHealthPinger(url);
      const probe = Array.from({ length: 20 }, (_, i) => ({ method: 'POST', path: '/v2/corpora', body: { key: `p${made}-${i}`, name: 'probe' } }));
      const created = await runClients(url, BENCH_KEY, probe, 1);
      const { latencies } = await pinger.stop();
      await runClients(url, BENCH_KEY, probe.map((p) => ({ method: 'DELETE', path: `/v2/corpora/${p.body.key}` })), 1);
      const t = now();
      const db = new Database(join(service.dataDir, 'service.db'), { readonly: true });
      db.prepare('SELECT count(*) FROM sqlite_master').pluck().get();
      const loadMs = now() - t;
      db.close();
      rows.push({
        corpora: made,
        'create p50 / max ms': [round(median(created), 1), round(Math.max(...created), 1)],
        '/health p50 / p99 / max ms while creating': [round(median(latencies), 1), round(percentile(latencies, 99), 1), round(Math.max(...latencies), 1)],
        'schema load ms (a new connection)': round(loadMs, 1),
        'RSS MB': Math.round(process.memoryUsage().rss / 2 ** 20),
      });
      process.stderr.write(`${JSON.stringify(rows[rows.length - 1])}\n`);
    }
    report('many-corpora', rows, { bar: 'none set: what MAX_CORPORA (default 1,000 with the embedded index) is chosen from' });
  } finally {
    await service.close();
  }
}
