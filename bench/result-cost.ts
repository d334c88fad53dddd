import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { now, percentile, round } from './common';
import { runClients } from './http-clients';
import { loadSciFact } from './scifact';
import { LAYOUTS, Layout } from './scifact-layouts';
import { BENCH_KEY, startBenchService, untilSearchable } from './service';

/**
 * The cost of a returned result (issue 19): SciFact's test queries over HTTP at limit 10 and 100, lexical and the
 * default hybrid, each query's two limits back to back. Reported per request: the p50 wall time (client to client),
 * the p50 server time (request to the answer handed to the socket) and the mean CPU time of the whole process
 * (server and client: they share it). CPU time is what a shared, loaded machine distorts least, so two builds are
 * compared by it; run them one after the other on the same kept data dir.
 * `npm run bench -- result-cost [a|b] [rounds=1] [dir=/tmp/result-cost-<layout>]` (indexes the layout once into dir).
 */
export async function resultCostBench(args: string[]): Promise<void> {
  const layout = (args[0] === 'a' ? 'a' : 'b') as Layout;
  const rounds = Number(args[1] ?? 1);
  const dir = args[2] ?? `/tmp/result-cost-${layout}`;
  const fresh = !existsSync(dir);
  const service = await startBenchService('result-cost', {}, dir);
  const key = `scifact_${layout}`;
  const data = loadSciFact('test');
  try {
    if (fresh) {
      await service.call('POST', '/v2/corpora', { key, name: key });
      const requests = data.corpus.map((d) => ({ method: 'POST', path: `/v2/corpora/${key}/documents?wait_for=indexed`, body: LAYOUTS[layout].body(d) }));
      await runClients(service.started.url, BENCH_KEY, requests, 8);
      await untilSearchable(service.started, 900_000);
    }
    let server: number[] = [];
    (service.started.app.getHttpServer() as Server).prependListener('request', (_req, res) => {
      const started = now();
      res.once('finish', () => server.push(now() - started));
    });
    for (let r = 0; r < rounds; r++) {
      for (const lambda of [1, 0.005]) {
        const wall: Record<number, number[]> = { 10: [], 100: [] };
        const cpu: Record<number, number[]> = { 10: [], 100: [] };
        const served: Record<number, number[]> = { 10: [], 100: [] };
        let i = 0;
        for (const query of data.queries.values()) {
          for (const limit of i++ % 2 ? [10, 100] : [100, 10]) {
            server = [];
            const started = now();
            const before = process.cpuUsage();
            await service.call('POST', `/v2/corpora/${key}/query`, { query, search: { limit, lexical_interpolation: lambda } });
            const used = process.cpuUsage(before);
            wall[limit].push(now() - started);
            cpu[limit].push((used.user + used.system) / 1000);
            served[limit].push(...server);
          }
        }
        const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
        const row = (limit: number) => ({ p50: round(percentile(wall[limit], 50)), server: round(percentile(served[limit], 50)), cpu: round(mean(cpu[limit])) });
        const [at10, at100] = [row(10), row(100)];
        console.log(JSON.stringify({ layout, run: lambda === 1 ? 'lexical' : 'default hybrid', limit10: at10, limit100: at100, 'extra cpu ms for 90 results': round(at100.cpu - at10.cpu), 'p50 100 / 10': round(at100.p50 / at10.p50) }));
      }
    }
  } finally {
    await service.close();
  }
}
