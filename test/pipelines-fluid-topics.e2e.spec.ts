import { ScriptedOpenAIServer } from '@lib/testing';
import { fixture } from './support/extraction-fixtures';
import { FluidTopicsServer } from './support/fluid-topics-server';
import { registerScripted } from './support/llm-fixtures';
import { recordIndexingReply } from './support/pipeline-harness';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';

/** Issue 17, the document portal source `fluid_topics` (docs/pipelines.md): a Fluid Topics portal on 127.0.0.1, the scripted model as the indexing agent. */

const KEY = 'ft-api-key-83d0';

describe('pipelines: the document portal (fluid_topics) source', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let portal: FluidTopicsServer;
  let failing = new Set<string>();
  const got = new Map<string, string>();

  const agentReply = recordIndexingReply({ got, failing: () => failing, documentId: (id) => id.replace(/\//g, '-'), done: 'Indexed it.', refusal: 'the model refused this topic' });

  beforeAll(async () => {
    portal = await FluidTopicsServer.start(KEY);
    const t = (contentId: string, title: string, body: string, children: any[] = []) => ({ contentId, title, html: `<h1>${title}</h1><p>${body}</p>`, edition: '2026-03-01', children });
    portal.maps.push(
      { id: 'm1', title: 'Gizmo guide', metadata: { product: ['Gizmo'] }, topics: [t('c1', 'Install Gizmo', 'Unpack and install the unit.', [t('c2', 'Install the bracket', 'Screw the bracket to the wall.')]), t('c3', 'Clean Gizmo', 'Wipe with a dry cloth.')] },
      { id: 'm2', title: 'Widget guide', metadata: { product: ['Widget'] }, topics: [t('c4', 'Install Widget', 'Plug it in.'), t('c5', 'Widget safety', 'Keep away from water.')] },
    );
    portal.documents.push(
      { documentId: 'd1', title: 'Field survey', filename: 'survey.docx', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', edition: '2026-03-01', metadata: { product: ['Gizmo'] }, data: fixture('sample.docx') },
      { documentId: 'd2', title: 'Release notes', filename: 'notes.html', mimeType: 'text/html', edition: '2026-03-01', metadata: { product: ['Gizmo'] }, data: Buffer.from('<html><body><p>Version 2 adds quiet mode.</p></body></html>') },
      { documentId: 'd3', title: 'Firmware', filename: 'firmware.bin', mimeType: 'application/octet-stream', edition: '2026-03-01', metadata: { product: ['Gizmo'] }, data: Buffer.alloc(64) },
    );
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = agentReply;
    app = await startTestApp({ env: { WORKER_POLL_MS: '200' } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/corpora', { key: 'docs', name: 'Docs' });
    const agent = await app.call('POST', '/v2/agents', { key: 'indexer', name: 'indexer', model: { name: 'm' }, tool_configurations: { index: { type: 'document_index', argument_override: { corpus_key: 'docs' } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    if (agent.status !== 201) throw new Error(JSON.stringify(agent.body));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await portal?.close();
  });

  const source = (extra: object = {}) => ({ type: 'fluid_topics', base_url: portal.url, api_key: KEY, content_scope: 'topics', query: 'install', filters: { product: ['Gizmo', 'Widget'] }, content_locale: 'en-US', ...extra });
  const create = async (key: string, src: object, extra: object = {}) => {
    const res = await app.call('POST', '/v2/pipelines', { key, name: key, source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' }, ...extra });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  const run = async (key: string) => {
    const { body } = await app.call('POST', `/v2/pipelines/${key}/trigger`);
    const ended = await until(`run ${body.id} to end`, async () => {
      const r = (await app.call('GET', `/v2/pipelines/${key}/runs/${body.id}`)).body;
      return r.status !== 'running' ? r : undefined;
    });
    const events = (await app.call('GET', `/v2/pipelines/${key}/runs/${body.id}/events?order=asc&limit=200`)).body.events as { type: string; status?: string; source_record_id?: string; attempt?: number | null }[];
    return { run: ended, events, processed: events.filter((e) => e.type === 'record_processing' && e.status === 'completed').map((e) => e.source_record_id).sort() };
  };
  const contents = (from: number) => portal.requests.slice(from).map((r) => r.url).filter((u) => u.endsWith('/content'));

  it('topics: the clustered search with the query, filters and locale, paged; each topic’s HTML one record; the API key masked and never in the log', async () => {
    const created = await create('topics', source());
    expect(created.source).toEqual({ type: 'fluid_topics', base_url: portal.url, api_key: '****', content_scope: 'topics', query: 'install', filters: { product: ['Gizmo', 'Widget'] }, content_locale: 'en-US' });
    const from = portal.requests.length;
    const first = await run('topics');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 3, records_processed: 3 });
    expect(first.processed).toEqual(['m1/c1', 'm1/c2', 'm2/c4']);
    const searches = portal.requests.slice(from).filter((r) => r.url === '/api/khub/clustered-search').map((r) => r.body);
    expect(searches).toEqual([1, 2].map((page) => ({ query: 'install', contentLocale: 'en-US', filters: [{ key: 'product', values: ['Gizmo', 'Widget'] }], paging: { page, perPage: 100 } })));
    expect(got.get('topics/m1/c2')).toContain('Screw the bracket to the wall.');
    const sessions = (await app.call('GET', '/v2/agents/indexer/sessions?limit=100')).body.sessions as { metadata: Record<string, any> }[];
    const meta = sessions.find((s) => s.metadata.pipeline?.source_record_id === 'm1/c2')!.metadata;
    expect(meta.fluid_topics).toMatchObject({ scope: 'topics', map_id: 'm1', content_id: 'c2', map_title: 'Gizmo guide', edition: '2026-03-01', metadata: { product: ['Gizmo'] } });
    expect(meta.url).toBe(`${portal.url}/r/m1/c2`);
    expect(JSON.stringify((await app.call('GET', '/v2/corpora/docs/documents/m2-c4')).body)).toContain('Plug it in.');
    const log = JSON.stringify((await app.call('GET', '/v2/events?limit=1000')).body);
    expect(log).toContain('PipelineCreated');
    expect(log).not.toContain(KEY);
  });

  it('incremental: only the topic whose edition moved has its content read again', async () => {
    Object.assign(portal.topic('m1', 'c2'), { html: '<p>Use the long screws.</p><p>Install carefully.</p>', edition: '2026-04-01' });
    const from = portal.requests.length;
    const second = await run('topics');
    expect(second.run).toMatchObject({ status: 'completed', records_fetched: 1 });
    expect(second.processed).toEqual(['m1/c2']);
    expect(contents(from)).toEqual(['/api/khub/maps/m1/topics/c2/content']);
    expect(got.get('topics/m1/c2')).toContain('Use the long screws.');
  });

  it('maps: the query is ignored, the reserved filter key id picks maps, each map one record of its topics in table-of-contents order', async () => {
    await create('maps', source({ content_scope: 'maps', query: 'nothing matches this', filters: { id: ['m1'] } }), { sync_mode: 'full_refresh' });
    const first = await run('maps');
    expect(first.processed).toEqual(['m1']);
    const text = got.get('maps/m1')!;
    const order = ['Unpack and install the unit.', 'Use the long screws.', 'Wipe with a dry cloth.'].map((s) => text.indexOf(s));
    expect(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]))).toBe(true);
    // Metadata filters apply to maps too: none is both m1 and a Widget.
    await create('maps-none', source({ content_scope: 'maps', filters: { id: ['m1'], product: ['Widget'] } }));
    expect((await run('maps-none')).run).toMatchObject({ status: 'completed', records_fetched: 0 });
  });

  it('documents: files through the extraction parsers, HTML as text, a file of an unreadable type skipped', async () => {
    await create('files', source({ content_scope: 'documents', query: undefined, filters: { product: ['Gizmo'] } }));
    const first = await run('files');
    expect(first.processed).toEqual(['d1', 'd2']);
    expect(got.get('files/d1')).toContain('Otter');
    expect(got.get('files/d2')).toContain('Version 2 adds quiet mode.');
  });

  it('a topic the agent keeps failing is dead-lettered; processing it reads just that topic', async () => {
    failing = new Set(['m2/c4']);
    await create('topics-fail', source());
    const first = await run('topics-fail');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 3, records_processed: 2, records_failed: 1 });
    expect(first.events.filter((e) => e.source_record_id === 'm2/c4').map((e) => [e.status, e.attempt])).toEqual([['failed', 1], ['failed', 2], ['failed', 3], ['dead_lettered', null]]);
    failing = new Set();
    const from = portal.requests.length;
    const retry = await app.call('POST', '/v2/pipelines/topics-fail/dead_letters/process', {});
    const retried = await until('the retry run to end', async () => {
      const r = (await app.call('GET', `/v2/pipelines/topics-fail/runs/${retry.body.id}`)).body;
      return r.status !== 'running' ? r : undefined;
    });
    expect(retried).toMatchObject({ status: 'completed', trigger_type: 'retry', records_fetched: 1, records_processed: 1 });
    expect(contents(from)).toEqual(['/api/khub/maps/m2/topics/c4/content']);
  });

  it('refuses bad fields with a 400 naming each; a wrong API key fails the run with the portal’s answer', async () => {
    const bad = async (src: object) => {
      const res = await app.call('POST', '/v2/pipelines', { key: 'bad', name: 'bad', source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' } });
      return [res.status, Object.keys(res.body.field_errors ?? {})];
    };
    expect(await bad(source({ base_url: undefined }))).toEqual([400, ['source.base_url']]);
    expect(await bad(source({ content_scope: 'pages' }))).toEqual([400, ['source.content_scope']]);
    expect(await bad(source({ content_scope: 'documents', filters: { id: ['m1'] } }))).toEqual([400, ['source.filters.id']]);
    expect(await bad(source({ filters: { product: 'Gizmo' } }))).toEqual([400, ['source.filters.product']]);
    expect(await bad(source({ query: 'x'.repeat(1025) }))).toEqual([400, ['source.query']]);
    expect(await bad(source({ content_locale: 'english please' }))).toEqual([400, ['source.content_locale']]);
    expect(await bad(source({ spaces: ['x'] }))).toEqual([400, ['source.spaces']]);
    expect((await app.call('GET', '/v2/pipelines/bad')).status).toBe(404);

    await create('wrong-key', source({ api_key: 'not-the-key-51aa' }));
    const failed = await run('wrong-key');
    expect(failed.run).toMatchObject({ status: 'failed', records_fetched: 0 });
    expect(failed.run.error).toContain('401');
    expect(JSON.stringify(failed.run)).not.toContain('not-the-key-51aa');
    const patched = await app.call('PATCH', '/v2/pipelines/wrong-key', { source: { type: 'fluid_topics', api_key: KEY, query: 'safety' } });
    expect(patched.body.source).toMatchObject({ api_key: '****', query: 'safety', content_scope: 'topics' });
    expect((await run('wrong-key')).processed).toEqual(['m2/c5']);
  });
});
