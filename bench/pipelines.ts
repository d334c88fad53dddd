import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/platform';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { now, serviceEnv, report, round } from './common';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';

async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/**
 * Records per second through a pipeline whose agent answers at once (`max_concurrent_records` 16): the fetch
 * phase (politeness-bound) and the processing phase (session, turn, events per record) are timed apart from
 * the run's events; the site counts the requests it received per second during the fetch.
 */
export async function pipelinesBench(args: string[]): Promise<void> {
  const pages = Number(args[0] ?? 500);
  const rps = Number(args[1] ?? 50);
  const fetchers = Number(args[2] ?? 4);
  const hits: number[] = [];
  const site = createServer((req, res) => {
    if (req.url === '/sitemap.xml') return void res.writeHead(200, { 'content-type': 'application/xml' }).end(`<urlset>${Array.from({ length: pages }, (_, i) => `<url><loc>${base}/p${i}</loc></url>`).join('')}</urlset>`);
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    hits.push(now());
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Page ${req.url}</title><p>Text of ${req.url}.</p>`);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const upstream = await ScriptedOpenAIServer.start();
  upstream.fallback = { content: 'Done.', usage: { prompt_tokens: 40, completion_tokens: 2 } };
  const dir = mkdtempSync(join(tmpdir(), 'bench-pipelines-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: KEY, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_TOOLS_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_PIPELINES_ALLOWED_HOSTS: '127.0.0.1', WORKER_POLL_MS: '200', SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS ?? 'FULL', ...serviceEnv() });
  const { app, url } = await startApp(config, 'all', createLogger('silent'), () => undefined);
  try {
    if ((await call(url, 'POST', '/v2/llms', { name: 'bench', model: 'm', uri: `${upstream.baseURL}/chat/completions` })).status !== 201) throw new Error('register failed');
    if ((await call(url, 'POST', '/v2/agents', { key: 'bench', name: 'Bench', model: { name: 'bench' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } })).status !== 201) throw new Error('agent failed');
    const created = await call(url, 'POST', '/v2/pipelines', { key: 'bench', name: 'Bench', source: { type: 'web', requests_per_second: rps, max_concurrent_fetches: fetchers, pages_source: { type: 'sitemap', sitemap_urls: [`${base}/sitemap.xml`] } }, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'bench' }, processing_options: { max_concurrent_records: 16 } });
    if (created.status !== 201) throw new Error(`pipeline: ${JSON.stringify(created.json)}`);
    const runId = (await call(url, 'POST', '/v2/pipelines/bench/trigger')).json.id as string;
    let run: any;
    do {
      await new Promise((r) => setTimeout(r, 200));
      run = (await call(url, 'GET', `/v2/pipelines/bench/runs/${runId}`)).json;
    } while (run.status === 'running');
    // One of each per run: when the store recorded it.
    const at = async (type: string) => Date.parse((await call(url, 'GET', `/v2/events?category=pipelinerun&type=${type}&limit=1`)).json.events[0].recorded_at);
    const fetchSeconds = ((await at('PipelineRunFetchEnded')) - (await at('PipelineRunStarted'))) / 1000;
    const processSeconds = ((await at('PipelineRunEnded')) - (await at('PipelineRunFetchEnded'))) / 1000;
    const fetchWindow = (hits[hits.length - 1] - hits[0]) / 1000;
    report('pipelines', [
      { phase: 'fetch', records: run.records_fetched, seconds: round(fetchSeconds), per_second: round(run.records_fetched / fetchSeconds), allowed_per_second: rps * fetchers, site_saw_per_second: round((hits.length - 1) / fetchWindow) },
      { phase: 'process (16 at a time)', records: run.records_processed, seconds: round(processSeconds), per_second: round(run.records_processed / processSeconds) },
    ], { status: run.status, failed: run.records_failed, synchronous: process.env.SQLITE_SYNCHRONOUS ?? 'FULL', writer: process.env.EVENT_STORE_WRITER ?? 'inline' });
    // A run that fetched or processed less than the site holds says why, so a figure is never read without it.
    const fetchEnd = (await call(url, 'GET', '/v2/events?category=pipelinerun&type=PipelineRunFetchEnded&limit=1')).json.events[0];
    if (fetchEnd?.data.error) console.log(`fetch stopped: ${fetchEnd.data.error}`);
    const attempts = (await call(url, 'GET', '/v2/events?category=pipelinerun&type=PipelineRecordAttempted&limit=1000')).json.events as { data: { status: string; reason?: string } }[];
    const reasons = new Set(attempts.filter((e) => e.data.status === 'failed').map((e) => e.data.reason));
    for (const reason of reasons) console.log(`record failed: ${reason}`);
  } finally {
    await app.close();
    await upstream.close();
    site.closeAllConnections();
    await new Promise((r) => site.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
}
