import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '@lib/testing';
import { spawnService, ServiceProcess } from './support/service-process';
import { until } from './support/wait';

/**
 * Issue 17, durable runs (docs/pipelines.md): two worker processes and an API process on one store; both
 * workers are killed mid-run, a new one resumes the run: every record completes once, none is lost.
 */

const PAGES = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];

describe('pipeline runs across a crash', () => {
  const KEY = 'zut_test_bootstrap_key_0123456789abcdef';
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-pipelines-'));
  let upstream: ScriptedOpenAIServer;
  let site: Server;
  let siteUrl = '';
  const processes: ServiceProcess[] = [];
  let api: ServiceProcess;

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api.url}${path}`, { method, headers: { 'x-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  /**
   * Indexes the page it is given, slowly enough that a crash lands mid-run: the first two records in 0.7 s, the
   * others in 5 s until the workers are killed (a loaded machine once took longer than the run's last 1.4 s to go
   * from "two done" to the kill), then quickly.
   */
  let asked = 0;
  let resumed = false;
  const agentReply = (req: CapturedRequest): ScriptedReply => {
    const messages = (req.body as { messages: { role: string; content: unknown }[] }).messages;
    if (messages[messages.length - 1].role === 'tool') return { content: 'Indexed.' };
    const url = /source_record_id: (\S+?)\\n/.exec(JSON.stringify(messages))?.[1] ?? '';
    const id = new URL(url).pathname.slice(1);
    asked += 1;
    return { firstByteDelayMs: resumed ? 300 : asked <= 2 ? 700 : 5_000, toolCalls: [{ id: 'c1', name: 'index', arguments: JSON.stringify({ documents: [{ id, text: `Page ${id}.` }] }) }] };
  };

  beforeAll(async () => {
    site = createServer((req, res) => {
      if (req.url === '/sitemap.xml') return void res.writeHead(200, { 'content-type': 'application/xml' }).end(`<urlset>${PAGES.map((p) => `<url><loc>${siteUrl}/${p}</loc></url>`).join('')}</urlset>`);
      if (PAGES.includes((req.url ?? '').slice(1))) return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>${req.url}</title><p>Text of ${req.url}.</p>`);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = agentReply;
    const env = { DATA_DIR: dataDir, ADMIN_API_KEY: KEY, SQLITE_SYNCHRONOUS: 'NORMAL', LEASE_TTL_MS: '1500', LEASE_RENEW_MS: '300', WORKER_POLL_MS: '300', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' };
    processes.push(await spawnService(env, 45_000, [], ['--role=worker']));
    const [second, apiProcess] = await Promise.all([spawnService(env, 45_000, [], ['--role=worker']), spawnService(env, 45_000, [], ['--role=api'])]);
    processes.push(second, apiProcess);
    api = apiProcess;
    await until('the owner key', async () => ((await call('GET', '/v2/corpora')).status === 200 ? true : undefined));
    expect((await call('POST', '/v2/llms', { type: 'openai-compatible', name: 'm', model: 'm-upstream', uri: `${upstream.baseURL}/chat/completions` })).status).toBe(201);
    expect((await call('POST', '/v2/corpora', { key: 'site', name: 'Site' })).status).toBe(201);
    expect((await call('POST', '/v2/agents', { key: 'indexer', name: 'indexer', model: { name: 'm' }, tool_configurations: { index: { type: 'document_index', argument_override: { corpus_key: 'site' } } }, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
    const res = await call('POST', '/v2/pipelines', { key: 'docs', name: 'Docs', source: { type: 'web', requests_per_second: 50, pages_source: { type: 'sitemap', sitemap_urls: [`${siteUrl}/sitemap.xml`] } }, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' }, processing_options: { max_concurrent_records: 2 } });
    expect(res.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await upstream?.close();
    site?.closeAllConnections();
    await new Promise((r) => site?.close(r));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a run whose workers were killed mid-run is resumed by a new worker: each record completes once, none lost', async () => {
    const { body } = await call('POST', '/v2/pipelines/docs/trigger');
    const runId = body.id as string;
    await until('two records done', async () => ((await call('GET', `/v2/pipelines/docs/runs/${runId}`)).body.records_processed >= 2 ? true : undefined));
    // Two workers were up: one of them holds the run (its lease), so each record is dispatched by one process.
    const holders = async () => {
      const leases = (await call('GET', '/v2/events?category=lease&type=LeaseAcquired&limit=1000')).body.events as any[];
      return leases.filter((e) => String(e.data.lease).startsWith('pipeline_run-')).map((e) => e.data.holder as string);
    };
    expect(new Set(await holders()).size).toBe(1);
    const workers = processes.filter((p) => p !== api);
    for (const w of workers) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    resumed = true;
    const before = (await call('GET', `/v2/pipelines/docs/runs/${runId}`)).body;
    expect(before.status).toBe('running');
    expect(before.records_processed).toBeLessThan(PAGES.length);

    processes.push(await spawnService({ DATA_DIR: dataDir, ADMIN_API_KEY: KEY, SQLITE_SYNCHRONOUS: 'NORMAL', LEASE_TTL_MS: '1500', LEASE_RENEW_MS: '300', WORKER_POLL_MS: '300', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' }, 45_000, [], ['--role=worker']));
    const run = await until('the run to end', async () => {
      const r = (await call('GET', `/v2/pipelines/docs/runs/${runId}`)).body;
      return r.status !== 'running' ? r : undefined;
    });
    expect(run).toMatchObject({ status: 'completed', records_fetched: PAGES.length, records_processed: PAGES.length, records_failed: 0 });
    expect(new Set(await holders()).size).toBe(2);
    const events = (await call('GET', `/v2/pipelines/docs/runs/${runId}/events?limit=200&order=asc`)).body.events as any[];
    const completed = events.filter((e) => e.type === 'record_processing' && e.status === 'completed').map((e) => e.source_record_id);
    expect(completed.sort()).toEqual(PAGES.map((p) => `${siteUrl}/${p}`).sort());
    expect(events.filter((e) => e.status === 'dead_lettered')).toEqual([]);
    const docs = (await call('GET', '/v2/corpora/site/documents?limit=100')).body.documents.map((d: { id: string }) => d.id).sort();
    expect(docs).toEqual(PAGES);
    // The slot is free again once the run has ended.
    await until('the slot freed', async () => ((await call('POST', '/v2/pipelines/docs/trigger')).status === 201 ? true : undefined), 10_000);
  }, 120_000);
});
