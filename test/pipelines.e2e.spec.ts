import { ReferenceOpenApi } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 17, pipelines (docs/pipelines.md): their definitions through `/v2/pipelines`. */
describe('pipelines', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
    await app.call('POST', '/v2/llms', { name: 'm', model: 'm', uri: 'http://127.0.0.1:9/v1/chat/completions' });
    await app.call('POST', '/v2/agents', { key: 'indexer', name: 'indexer', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
  });
  afterAll(async () => {
    await app?.close();
  });

  const web = (extra: Record<string, unknown> = {}) => ({ type: 'web', pages_source: { type: 'sitemap', sitemap_urls: ['https://docs.example.com/sitemap.xml'] }, ...extra });
  const pipeline = (extra: Record<string, unknown> = {}) => ({ name: 'Docs', source: web(), trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' }, ...extra });
  const log = async () => JSON.stringify((await app.call('GET', '/v2/events?category=pipeline&limit=1000')).body);

  it('creates a web pipeline with the reference defaults, reads and lists it', async () => {
    const created = await app.call('POST', '/v2/pipelines', pipeline({ key: 'docs', metadata: { team: 'search' }, source_record_metadata: { origin: 'docs' } }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      key: 'docs',
      name: 'Docs',
      source: { type: 'web', respect_robots_txt: true, requests_per_second: 2, max_concurrent_fetches: 2, max_pages: 10_000, pages_source: { type: 'sitemap', sitemap_urls: ['https://docs.example.com/sitemap.xml'] } },
      trigger: { type: 'manual' },
      transform: { type: 'agent', agent_key: 'indexer' },
      sync_mode: 'incremental',
      status: 'active',
      enabled: true,
      watermark: null,
      metadata: { team: 'search' },
      processing_options: { record_timeout_minutes: 30, max_concurrent_records: 4 },
      source_record_metadata: { origin: 'docs' },
    });
    expect((await app.call('GET', '/v2/pipelines/docs')).body).toEqual(created.body);
    const listed = await app.call('GET', '/v2/pipelines?source_type=web&enabled=true');
    const reference = new ReferenceOpenApi();
    expect(reference.check('createPipeline', 201, created.body)).toEqual([]);
    expect(reference.check('listPipelines', 200, listed.body)).toEqual([]);
    expect(listed.body.pipelines.map((p: { key: string }) => p.key)).toContain('docs');
    expect((await app.call('POST', '/v2/pipelines', pipeline({ key: 'docs' }))).status).toBe(409);
  });

  it('refuses a source type it does not know, naming the type, and stores nothing', async () => {
    for (const type of ['dropbox', 'sharepoint_online']) {
      const res = await app.call('POST', '/v2/pipelines', pipeline({ key: `p-${type}`, source: { type, bucket: 'b' } }));
      expect(res.status).toBe(400);
      expect(res.body.field_errors['source.type']).toContain(`"${type}"`);
      expect((await app.call('GET', `/v2/pipelines/p-${type}`)).status).toBe(404);
    }
  });

  it('refuses out-of-range settings naming the field, and accepts the deprecated max_concurrent without storing it', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ source: web({ max_concurrent_fetches: 5 }) }, 'source.max_concurrent_fetches'],
      [{ source: web({ requests_per_second: 51 }) }, 'source.requests_per_second'],
      [{ source: web({ pages_source: { type: 'crawl', urls: ['ftp://x'] } }) }, 'source.pages_source.urls[0]'],
      [{ source: web({ pages_source: { type: 'crawl', urls: ['https://x.test/'], pos_regex: ['('] } }) }, 'source.pages_source.pos_regex[0]'],
      // Matched on RE2's linear-time engine (issue 41 #6): what needs backtracking is refused when configured.
      [{ source: web({ pages_source: { type: 'crawl', urls: ['https://x.test/'], pos_regex: ['https://x\\.test/(?!private).*'] } }) }, 'source.pages_source.pos_regex[0]'],
      [{ source: web({ pages_source: { type: 'crawl', urls: ['https://x.test/'], neg_regex: ['.*', '(a)\\1'] } }) }, 'source.pages_source.neg_regex[1]'],
      [{ source: web({ js_rendering: true }) }, 'source.js_rendering'],
      [{ processing_options: { record_timeout_minutes: 181 } }, 'processing_options.record_timeout_minutes'],
      [{ processing_options: { max_concurrent_records: 65 } }, 'processing_options.max_concurrent_records'],
      [{ processing_options: { max_concurrent_records: 0 } }, 'processing_options.max_concurrent_records'],
      [{ trigger: { type: 'interval', duration: 'every hour' } }, 'trigger.duration'],
      [{ trigger: { type: 'interval', duration: 'PT1M' } }, 'trigger.duration'],
      [{ trigger: { type: 'cron', expression: '99 * * * *' } }, 'trigger.expression'],
      [{ trigger: { type: 'cron' } }, 'trigger.expression'],
      [{ trigger: { type: 'weekly' } }, 'trigger.type'],
      [{ transform: { type: 'agent', agent_key: 'nobody' } }, 'transform.agent_key'],
      [{ transform: { type: 'agent', agent_key: 'indexer', verification: { type: 'condition', expression: 'true' } } }, 'transform.verification'],
      [{ metadata: { n: 1 } }, 'metadata.n'],
    ];
    for (const [extra, field] of cases) {
      const res = await app.call('POST', '/v2/pipelines', pipeline({ key: 'bad', ...extra }));
      expect([res.status, Object.keys(res.body.field_errors ?? {})]).toEqual([400, [field]]);
    }
    expect((await app.call('GET', '/v2/pipelines/bad')).status).toBe(404);
    const ok = await app.call('POST', '/v2/pipelines', pipeline({ key: 'deprecated', source: web({ max_concurrent: 8, pages_source: { type: 'sitemap+crawl', sitemap_urls: ['https://docs.example.com/sitemap.xml'] } }) }));
    expect(ok.status).toBe(201);
    expect(ok.body.source.max_concurrent).toBeUndefined();
    expect(ok.body.source.pages_source).toEqual({ type: 'sitemap_crawl', urls: [], sitemap_urls: ['https://docs.example.com/sitemap.xml'], max_depth: 3, same_domain_only: true, pos_regex: [], neg_regex: [] });
  });

  it('PATCH merges: source_record_metadata and processing_options are replaced whole, omitted ones kept', async () => {
    await app.call('POST', '/v2/pipelines', pipeline({ key: 'merge', processing_options: { record_timeout_minutes: 10, max_concurrent_records: 8 }, source_record_metadata: { a: 1, b: 2 } }));
    const kept = await app.call('PATCH', '/v2/pipelines/merge', { name: 'Renamed' });
    expect(kept.body).toMatchObject({ name: 'Renamed', processing_options: { record_timeout_minutes: 10, max_concurrent_records: 8 }, source_record_metadata: { a: 1, b: 2 } });
    const replaced = await app.call('PATCH', '/v2/pipelines/merge', { processing_options: { max_concurrent_records: 16 }, source_record_metadata: { c: 3 } });
    expect(replaced.body.processing_options).toEqual({ record_timeout_minutes: 30, max_concurrent_records: 16 });
    expect(replaced.body.source_record_metadata).toEqual({ c: 3 });
    // Top-level source fields merge; a given pages_source replaces the stored one whole.
    const source = await app.call('PATCH', '/v2/pipelines/merge', { source: { type: 'web', requests_per_second: 10, pages_source: { type: 'crawl', urls: ['https://docs.example.com/'] } } });
    expect(source.body.source).toMatchObject({ requests_per_second: 10, max_concurrent_fetches: 2, pages_source: { type: 'crawl', urls: ['https://docs.example.com/'], max_depth: 3 } });
    expect(source.body.source.pages_source.sitemap_urls).toBeUndefined();
    const paused = await app.call('PATCH', '/v2/pipelines/merge', { enabled: false });
    expect(paused.body).toMatchObject({ enabled: false, status: 'paused' });
    expect((await app.call('PATCH', '/v2/pipelines/merge', { processing_options: { record_timeout_minutes: 0 } })).status).toBe(400);
    expect((await app.call('GET', '/v2/pipelines/merge')).body.processing_options).toEqual({ record_timeout_minutes: 30, max_concurrent_records: 16 });
    expect((await app.call('PATCH', '/v2/pipelines/nope', { name: 'x' })).status).toBe(404);
  });

  it('PUT replaces the whole definition', async () => {
    await app.call('POST', '/v2/pipelines', pipeline({ key: 'put', description: 'old', metadata: { a: 'b' }, source_record_metadata: { x: 1 } }));
    const res = await app.call('PUT', '/v2/pipelines/put', pipeline({ name: 'New', sync_mode: 'full_refresh' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'New', sync_mode: 'full_refresh', metadata: {}, source_record_metadata: {} });
    expect(res.body.description).toBeUndefined();
    expect((await app.call('PUT', '/v2/pipelines/put', { name: 'only a name' })).status).toBe(400);
  });

  it('seals a source credential: masked on every read, never in the log, kept by a PATCH that omits it', async () => {
    const secret = 'tok-7f3a9c-very-secret';
    const created = await app.call('POST', '/v2/pipelines', pipeline({ key: 'authd', source: web({ auth: { type: 'bearer', token: secret } }) }));
    expect(created.body.source.auth).toEqual({ type: 'bearer', token: '****' });
    const patched = await app.call('PATCH', '/v2/pipelines/authd', { source: { type: 'web', max_pages: 5 } });
    expect(patched.body.source).toMatchObject({ max_pages: 5, auth: { type: 'bearer', token: '****' } });
    const header = await app.call('PATCH', '/v2/pipelines/authd', { source: { type: 'web', auth: { type: 'header', header: 'X-Key', value: `${secret}-2` } } });
    expect(header.body.source.auth).toEqual({ type: 'header', header: 'X-Key', value: '****' });
    const listed = JSON.stringify((await app.call('GET', '/v2/pipelines?limit=100')).body);
    expect(listed).not.toContain(secret);
    expect(await log()).not.toContain(secret);
    expect(await log()).toContain('sealedAuth');
  });

  it('deletes a pipeline; its key may be used again', async () => {
    await app.call('POST', '/v2/pipelines', pipeline({ key: 'gone' }));
    expect((await app.call('DELETE', '/v2/pipelines/gone')).status).toBe(204);
    expect((await app.call('GET', '/v2/pipelines/gone')).status).toBe(404);
    expect((await app.call('DELETE', '/v2/pipelines/gone')).status).toBe(404);
    expect((await app.call('POST', '/v2/pipelines', pipeline({ key: 'gone', name: 'Again' }))).body.name).toBe('Again');
  });
});
