import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { ReferenceOpenApi } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';
import { sleep, until } from './support/wait';

/** Issue 17, pipeline runs (docs/pipelines.md): a small site on 127.0.0.1, the scripted model as the indexing agent. */

const page = (title: string, body: string, links: string[] = []) => `<html><head><title>${title}</title><script>var hidden = 1;</script></head><body><p>${body}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join('')}</body></html>`;
const PAGES: Record<string, string> = {
  '/a': page('Alpha', 'Cats purr when they are content.', ['/c', '/broken', '/private/secret#frag']),
  '/b': page('Beta', 'Dogs bark at the postman.'),
  '/c': page('Gamma', 'Parrots repeat what they hear.'),
  '/broken': page('Broken', 'This page makes the agent fail.'),
  '/private/secret': page('Secret', 'Never to be fetched.'),
};

describe('pipeline runs', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let site: Server;
  let siteUrl = '';
  const hits: string[] = [];
  /** The Authorization header each site got, by path. */
  const auths: Record<string, string | undefined> = {};
  let other: Server;
  let otherUrl = '';
  let failBroken = true;
  /** Page versions (their ETag); a page set to 0 is gone (404). */
  const versions: Record<string, number> = {};
  let delayMs = 0;

  /** The agent: indexes the record it is given with the document-index tool, then says so. */
  const agentReply = (req: CapturedRequest): ScriptedReply => {
    const messages = (req.body as { messages: { role: string; content: unknown }[] }).messages;
    if (messages[messages.length - 1].role === 'tool') return { content: 'Indexed the page.' };
    const text = JSON.stringify(messages);
    const url = /source_record_id: (\S+?)\\n/.exec(text)?.[1] ?? '';
    if (failBroken && url.endsWith('/broken')) return { error: { status: 400, message: 'the model refused this page' } };
    const title = /title: (.*?)\\n/.exec(text)?.[1] ?? '';
    const id = new URL(url).pathname.replace(/\W+/g, '-').replace(/^-/, '');
    return { firstByteDelayMs: delayMs, toolCalls: [{ id: 'c1', name: 'index', arguments: JSON.stringify({ documents: [{ id, title, text: `${title}: ${url}` }] }) }] };
  };

  beforeAll(async () => {
    site = createServer((req, res) => {
      const path = req.url ?? '/';
      hits.push(path);
      auths[path] = req.headers['x-key'] as string | undefined;
      if (path === '/out') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page('Out', 'Links elsewhere.', [`${otherUrl}/elsewhere`, '/hop']));
      if (path === '/hop') return void res.writeHead(302, { location: `${otherUrl}/landing` }).end();
      if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n');
      if (path === '/sitemap.xml') return void res.writeHead(200, { 'content-type': 'application/xml' }).end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${['/a', '/b', '/private/secret'].map((p) => `<url><loc>${siteUrl}${p}</loc></url>`).join('')}</urlset>`);
      const body = PAGES[path];
      const version = versions[path] ?? 1;
      if (!body || version === 0) return void res.writeHead(404).end();
      const etag = `"${path}-${version}"`;
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag }).end(body);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    other = createServer((req, res) => {
      auths[`other:${req.url}`] = req.headers['x-key'] as string | undefined;
      res.writeHead(200, { 'content-type': 'text/html' }).end(page('Elsewhere', 'Another site.'));
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = agentReply;
    app = await startTestApp({ env: { WORKER_POLL_MS: '200', SCHEDULE_MIN_INTERVAL_SECONDS: '1' } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/corpora', { key: 'site', name: 'Site' });
    const agent = await app.call('POST', '/v2/agents', { key: 'indexer', name: 'indexer', model: { name: 'm' }, tool_configurations: { index: { type: 'document_index', argument_override: { corpus_key: 'site' } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    if (agent.status !== 201) throw new Error(JSON.stringify(agent.body));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    site?.closeAllConnections();
    await new Promise((r) => site?.close(r));
    other?.closeAllConnections();
    await new Promise((r) => other?.close(r));
  });

  const create = async (key: string, pagesSource: object, extra: object = {}) => {
    const res = await app.call('POST', '/v2/pipelines', { key, name: key, source: { type: 'web', requests_per_second: 50, pages_source: pagesSource }, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' }, ...extra });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  };
  const finished = (key: string, runId: string) =>
    until(`run ${runId} to end`, async () => {
      const run = (await app.call('GET', `/v2/pipelines/${key}/runs/${runId}`)).body;
      return run.status !== 'running' ? run : undefined;
    });
  const events = async (key: string, runId: string) => (await app.call('GET', `/v2/pipelines/${key}/runs/${runId}/events?order=asc&limit=200`)).body.events as any[];
  const docs = async () => ((await app.call('GET', '/v2/corpora/site/documents?limit=100')).body.documents as { id: string }[]).map((d) => d.id).sort();

  it('a sitemap run fetches the pages robots.txt allows and indexes each through its own agent session', async () => {
    await create('sitemap', { type: 'sitemap', sitemap_urls: [`${siteUrl}/sitemap.xml`] });
    const triggered = await app.call('POST', '/v2/pipelines/sitemap/trigger');
    expect(triggered.status).toBe(201);
    expect(triggered.body).toMatchObject({ pipeline_key: 'sitemap', agent_key: 'indexer', trigger_type: 'manual', status: 'running' });
    const run = await finished('sitemap', triggered.body.id);
    expect(run).toMatchObject({ status: 'completed', records_fetched: 2, records_processed: 2, records_failed: 0 });
    expect(hits).not.toContain('/private/secret');
    expect(await docs()).toEqual(['a', 'b']);
    const evs = await events('sitemap', run.id);
    const reference = new ReferenceOpenApi();
    expect(reference.check('triggerPipeline', 201, triggered.body)).toEqual([]);
    expect(reference.check('getPipelineRun', 200, run)).toEqual([]);
    expect(reference.check('listPipelineRunEvents', 200, { events: evs, metadata: {} })).toEqual([]);
    expect(evs.map((e) => [e.type, e.status])).toEqual([['run_started', undefined], ['record_processing', 'completed'], ['record_processing', 'completed'], ['watermark_advanced', undefined], ['run_completed', 'completed']]);
    // The run that synced the whole site says so, with the watermark the pipeline now shows.
    expect(evs.find((e) => e.type === 'watermark_advanced')?.watermark).toBe((await app.call('GET', '/v2/pipelines/sitemap')).body.watermark.value);
    for (const e of evs.filter((x) => x.status === 'completed' && x.type === 'record_processing')) {
      expect(e).toMatchObject({ attempt: 1, reason: 'Indexed the page.', error: null, session_key: expect.stringMatching(/^pl-/), duration_ms: expect.any(Number) });
      const session = await app.call('GET', `/v2/agents/indexer/sessions/${e.session_key}`);
      expect(session.body.metadata.pipeline).toMatchObject({ pipeline_key: 'sitemap', run_id: run.id, source_record_id: e.source_record_id });
    }
    expect((await app.call('GET', '/v2/pipelines/sitemap/runs')).body.runs.map((r: { id: string }) => r.id)).toEqual([run.id]);
    // The run's stored events are on the service's event log (and so on /v2/events/stream) as they happen.
    const logged = (await app.call('GET', `/v2/events?category=pipelinerun&limit=1000`)).body.events.filter((e: any) => e.stream_id === `pipelinerun-${run.id}`).map((e: any) => e.type);
    expect(logged).toEqual(['PipelineRunCreated', 'PipelineRunStarted', 'PipelineRecordFetched', 'PipelineRecordFetched', 'PipelineRunFetchEnded', 'PipelineRecordAttempted', 'PipelineRecordAttempted', 'PipelineRunWatermarkAdvanced', 'PipelineRunEnded']);
  });

  it('a record that keeps failing is retried, then dead-lettered once; processing the dead letters re-runs it', async () => {
    await create('crawl', { type: 'crawl', urls: [`${siteUrl}/a`], max_depth: 1 });
    const { body } = await app.call('POST', '/v2/pipelines/crawl/trigger');
    expect((await app.call('POST', '/v2/pipelines/crawl/trigger')).status).toBe(409);
    const run = await finished('crawl', body.id);
    expect(run).toMatchObject({ status: 'completed', records_fetched: 3, records_processed: 2, records_failed: 1 });
    const broken = (await events('crawl', run.id)).filter((e) => e.source_record_id === `${siteUrl}/broken`);
    expect(broken.map((e) => [e.status, e.attempt, e.dead_lettered])).toEqual([
      ['failed', 1, false],
      ['failed', 2, false],
      ['failed', 3, true],
      ['dead_lettered', null, true],
    ]);
    expect(broken[0]).toMatchObject({ reason: expect.stringContaining('answered 400'), error: expect.stringContaining('answered 400'), duration_ms: expect.any(Number), session_key: expect.stringMatching(/^pl-/) });
    expect(new Set(broken.slice(0, 3).map((e) => e.session_key)).size).toBe(3);
    const letters = (await app.call('GET', '/v2/pipelines/crawl/dead_letters')).body.dead_letters;
    expect(letters).toEqual([expect.objectContaining({ source_record_id: `${siteUrl}/broken`, status: 'pending', origin: 'pipeline', attempt_count: 3, last_run_id: run.id })]);
    expect((await app.call('GET', `/v2/pipelines/crawl/dead_letters/${letters[0].id}`)).body.id).toBe(letters[0].id);
    expect(new ReferenceOpenApi().check('listPipelineDeadLetterEntries', 200, { dead_letters: letters, metadata: {} })).toEqual([]);

    failBroken = false;
    const retry = await app.call('POST', '/v2/pipelines/crawl/dead_letters/process', {});
    expect(retry.status).toBe(201);
    expect(retry.body.trigger_type).toBe('retry');
    expect(await finished('crawl', retry.body.id)).toMatchObject({ status: 'completed', records_fetched: 1, records_processed: 1, records_failed: 0 });
    expect((await app.call('GET', '/v2/pipelines/crawl/dead_letters')).body.dead_letters).toEqual([]);
    expect(await docs()).toEqual(expect.arrayContaining(['a', 'broken', 'c']));
    expect((await app.call('POST', '/v2/pipelines/crawl/dead_letters/process', {})).status).toBe(400);
  });

  it('dead letters can be added by hand and removed', async () => {
    await create('by-hand', { type: 'sitemap', sitemap_urls: [`${siteUrl}/sitemap.xml`] });
    const added = await app.call('POST', '/v2/pipelines/by-hand/dead_letters', { source_record_id: `${siteUrl}/c`, error_message: 'the agent misfiled it' });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ source_record_id: `${siteUrl}/c`, origin: 'manual', status: 'pending', attempt_count: 0, error_message: 'the agent misfiled it' });
    expect((await app.call('DELETE', `/v2/pipelines/by-hand/dead_letters/${added.body.id}`)).status).toBe(204);
    const notUrl = await app.call('POST', '/v2/pipelines/by-hand/dead_letters', { source_record_id: 'page-7' });
    expect([notUrl.status, Object.keys(notUrl.body.field_errors)]).toEqual([400, ['source_record_id']]);
    expect((await app.call('GET', `/v2/pipelines/by-hand/dead_letters/${added.body.id}`)).status).toBe(404);
  });

  it('cancel: the record in progress finishes, queued ones are not dispatched, the run ends cancelled', async () => {
    await create('slow', { type: 'crawl', urls: [`${siteUrl}/a`], max_depth: 1 }, { processing_options: { max_concurrent_records: 1 } });
    delayMs = 1500;
    const { body } = await app.call('POST', '/v2/pipelines/slow/trigger');
    await until('a record in progress', async () => (upstream.requests.some((r) => JSON.stringify(r.body).includes('pipeline \\"slow\\"')) ? true : undefined));
    expect((await app.call('POST', `/v2/pipelines/slow/runs/${body.id}/cancel`)).status).toBe(204);
    expect((await app.call('POST', `/v2/pipelines/slow/runs/${body.id}/cancel`)).status).toBe(409);
    const run = await finished('slow', body.id);
    delayMs = 0;
    expect(run).toMatchObject({ status: 'cancelled', records_fetched: 3, records_processed: 1 });
    const evs = await events('slow', body.id);
    expect(evs.filter((e) => e.type === 'record_processing').map((e) => e.status)).toEqual(['completed']);
    expect(evs[evs.length - 1]).toMatchObject({ type: 'run_completed', status: 'cancelled' });
    expect((await app.call('POST', '/v2/pipelines/slow/trigger')).status).toBe(201);
  });

  it('an interval trigger starts a scheduled run at each due time; disabling the pipeline stops it', async () => {
    await create('beat', { type: 'sitemap', sitemap_urls: [`${siteUrl}/sitemap.xml`] }, { trigger: { type: 'interval', duration: 'PT1S' }, sync_mode: 'full_refresh' });
    const runs = async () => (await app.call('GET', '/v2/pipelines/beat/runs?limit=100')).body.runs as any[];
    const two = await until('two scheduled runs ended', async () => {
      const ended = (await runs()).filter((r) => r.status === 'completed');
      return ended.length >= 2 ? ended : undefined;
    });
    for (const r of two) expect(r).toMatchObject({ trigger_type: 'scheduled', records_fetched: 2, records_processed: 2 });
    expect(new Set(two.map((r) => r.id)).size).toBe(two.length);
    await app.call('PATCH', '/v2/pipelines/beat', { enabled: false });
    await until('no run in progress', async () => ((await runs()).every((r) => r.status !== 'running') ? true : undefined));
    const count = (await runs()).length;
    await sleep(2_500);
    expect((await runs()).length).toBe(count);
  });

  it('incremental sync: a second run reads only changed pages, a page gone from the site leaves the sync state; full_refresh reads all', async () => {
    await create('inc', { type: 'sitemap', sitemap_urls: [`${siteUrl}/sitemap.xml`] });
    const runOnce = async () => finished('inc', (await app.call('POST', '/v2/pipelines/inc/trigger')).body.id);
    expect(await runOnce()).toMatchObject({ status: 'completed', records_fetched: 2, records_processed: 2 });
    const watermark = (await app.call('GET', '/v2/pipelines/inc')).body.watermark;
    expect(watermark).toEqual({ value: expect.any(String), updated_at: expect.any(String) });
    expect(await runOnce()).toMatchObject({ status: 'completed', records_fetched: 0, records_processed: 0 });
    versions['/b'] = 2;
    const changed = await runOnce();
    expect(changed).toMatchObject({ records_fetched: 1, records_processed: 1 });
    expect((await events('inc', changed.id)).filter((e) => e.status === 'completed').map((e) => e.source_record_id)).toEqual([`${siteUrl}/b`]);
    versions['/a'] = 0;
    await runOnce();
    const synced = (await app.call('GET', '/v2/events?category=pipeline&type=PipelineSourceSynced&limit=100')).body.events.filter((e: any) => e.data.key === 'inc');
    expect(synced[synced.length - 1].data.gone).toEqual([`${siteUrl}/a`]);
    expect(Object.keys(synced[synced.length - 1].data.versions)).toEqual([`${siteUrl}/b`]);
    versions['/a'] = 1;
    await app.call('PATCH', '/v2/pipelines/inc', { sync_mode: 'full_refresh' });
    expect(await runOnce()).toMatchObject({ records_fetched: 2, records_processed: 2 });
  });

  it('sends the source credential only to the hosts the pipeline names, not to sites it links or redirects to', async () => {
    await create('authd', { type: 'crawl', urls: [`${siteUrl}/out`], max_depth: 1, same_domain_only: false }, {});
    await app.call('PATCH', '/v2/pipelines/authd', { source: { type: 'web', auth: { type: 'header', header: 'X-Key', value: 'sekret-token' } } });
    const run = await finished('authd', (await app.call('POST', '/v2/pipelines/authd/trigger')).body.id);
    expect(run).toMatchObject({ status: 'completed', records_fetched: 3 });
    expect([auths['/out'], auths['/hop']]).toEqual(['sekret-token', 'sekret-token']);
    expect('other:/elsewhere' in auths && 'other:/landing' in auths).toBe(true);
    expect([auths['other:/elsewhere'], auths['other:/landing']]).toEqual([undefined, undefined]);
    const ids = (await events('authd', run.id)).filter((e) => e.status === 'completed').map((e) => e.source_record_id).sort();
    expect(ids).toEqual([`${otherUrl}/elsewhere`, `${otherUrl}/landing`, `${siteUrl}/out`].sort());
  });
});
