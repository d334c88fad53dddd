import { ScriptedOpenAIServer } from '@lib/testing';
import { ConfluenceServer } from './support/confluence-server';
import { fixture } from './support/extraction-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { recordIndexingReply } from './support/pipeline-harness';
import { ReferenceOpenApi } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';

/** Issue 17, the Confluence source (docs/pipelines.md): a Confluence Cloud site on 127.0.0.1, the scripted model as the indexing agent. */

const TOKEN = 'atl-token-5c1f9e';
const page = (text: string, extra = '') => `<h1>Overview</h1><p>${text}</p>${extra}<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash</ac:parameter><ac:plain-text-body><![CDATA[make deploy]]></ac:plain-text-body></ac:structured-macro>`;
const image = (file: string, alt: string) => `<ac:image ac:alt="${alt}"><ri:attachment ri:filename="${file}" /></ac:image>`;

describe('pipelines: the confluence source', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let wiki: ConfluenceServer;
  let dc: ConfluenceServer;
  let failing = new Set<string>();
  /** The last input the agent got for each `pipeline/page id`: what a run handed over, whatever the corpus already held. */
  const got = new Map<string, string>();

  /** The agent: indexes the page it is given (document id = the page id, text = the record's text), or fails for the ids in `failing`. */
  const agentReply = recordIndexingReply({ got, failing: () => failing, documentId: (id) => id, done: 'Indexed the page.', refusal: 'the model refused this page' });

  beforeAll(async () => {
    wiki = await ConfluenceServer.start('bot@example.com', TOKEN);
    wiki.put('1', 'ENG', 'Deploying', page('Run the deploy script after review.', image('arch.png', 'Architecture') + image('huge.png', 'Poster')), [
      { id: 'att1', title: 'runbook.docx', mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', data: fixture('sample.docx') },
      { id: 'att2', title: 'demo.mp4', mediaType: 'video/mp4', data: Buffer.alloc(2048) },
      { id: 'att3', title: 'backup.zip', mediaType: 'application/zip', data: Buffer.alloc(10) },
      { id: 'att4', title: 'arch.png', mediaType: 'image/png', data: Buffer.alloc(1000) },
      { id: 'att5', title: 'huge.png', mediaType: 'image/png', data: Buffer.alloc(6000) },
    ]);
    wiki.put('2', 'ENG', 'On call', page('Page the on-call engineer.'));
    wiki.put('3', 'ENG', 'Postmortems', page('Blameless reviews within a week.'));
    wiki.put('9', 'HR', 'Holidays', page('Twenty-five days.'));
    dc = await ConfluenceServer.startDataCenter('dc-pat-77e1');
    dc.put('41', 'ENG', 'Runbook', page('Restart the node.'), [{ id: 'a41', title: 'steps.docx', mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', data: fixture('sample.docx') }]);
    dc.put('42', 'ENG', 'Escalation', page('Call the duty manager.'));
    dc.put('43', 'ENG', 'Glossary', page('SLO: service level objective.'));
    dc.put('49', 'HR', 'Leave', page('Ask your manager.'));
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = agentReply;
    app = await startTestApp({ env: { WORKER_POLL_MS: '200' } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/corpora', { key: 'wiki', name: 'Wiki' });
    const agent = await app.call('POST', '/v2/agents', { key: 'indexer', name: 'indexer', model: { name: 'm' }, tool_configurations: { index: { type: 'document_index', argument_override: { corpus_key: 'wiki' } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    if (agent.status !== 201) throw new Error(JSON.stringify(agent.body));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await wiki?.close();
    await dc?.close();
  });

  const basic = (token = TOKEN) => ({ type: 'header', header: 'Authorization', value: `Basic ${Buffer.from(`bot@example.com:${token}`).toString('base64')}` });
  const source = (extra: object = {}) => ({ type: 'confluence', base_url: `${wiki.url}/wiki`, space_keys: ['ENG'], auth: basic(), attachments: { enabled: true, neg_regex: ['.*\\.zip'], max_bytes: 1_000_000 }, embedded_images: { mode: 'inline', max_bytes: 5000 }, ...extra });
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
  const paths = (from: number) => wiki.requests.slice(from).map((r) => r.url);

  it('reads the chosen space page by page: page text, images inlined as references, attachments’ text; the credential masked and never stored in clear', async () => {
    const created = await create('eng', source());
    expect(new ReferenceOpenApi().check('createPipeline', 201, created)).toEqual([]);
    expect(created.source).toMatchObject({ type: 'confluence', base_url: wiki.url, deployment: 'cloud', space_keys: ['ENG'], auth: { type: 'header', header: 'Authorization', value: '****' }, attachments: { enabled: true, pos_regex: [], neg_regex: ['.*\\.zip'], max_bytes: 1_000_000 }, embedded_images: { mode: 'inline', max_bytes: 5000 } });
    const from = wiki.requests.length;
    const first = await run('eng');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 3, records_processed: 3, records_failed: 0 });
    expect(first.processed).toEqual(['1', '2', '3']);
    // Cursor paging (two pages per answer): the space's three pages took two listing requests, with the bodies.
    expect(paths(from).filter((p) => p.startsWith('/wiki/api/v2/spaces/101/pages'))).toEqual(['/wiki/api/v2/spaces/101/pages?limit=250&status=current&body-format=storage', expect.stringContaining('cursor=')]);
    expect(wiki.requests.slice(from).every((r) => r.authorization === basic().value)).toBe(true);
    // The attachment went through the media host's redirect without the credential.
    expect(wiki.mediaRequests.length).toBeGreaterThan(0);
    expect(wiki.mediaRequests.every((r) => r.authorization === undefined)).toBe(true);

    const doc = JSON.stringify((await app.call('GET', '/v2/corpora/wiki/documents/1')).body);
    expect(doc).toContain('Run the deploy script after review.');
    expect(doc).toContain('make deploy');
    expect(doc).not.toContain('bash'); // A macro's parameter is not the page's text.
    expect(doc).toContain('[image: arch.png: Architecture]');
    expect(doc).toContain('[image huge.png not inlined: larger than embedded_images.max_bytes]');
    expect(doc).toContain('Attachment: runbook.docx');
    expect(doc).toContain('Otter'); // From the docx, through the extraction library.
    const sessions = (await app.call('GET', '/v2/agents/indexer/sessions?limit=100')).body.sessions as { metadata: Record<string, any> }[];
    const meta = sessions.find((s) => s.metadata.pipeline?.pipeline_key === 'eng' && s.metadata.pipeline.source_record_id === '1')!.metadata;
    expect(meta.confluence).toMatchObject({ page_id: '1', space_key: 'ENG', version: 1 });
    expect(meta.url).toBe(`${wiki.url}/wiki/spaces/ENG/pages/1`);
    expect(meta.images).toEqual([expect.objectContaining({ filename: 'arch.png', alt: 'Architecture', size: 1000 })]);
    expect(meta.attachments_skipped).toEqual([expect.objectContaining({ filename: 'demo.mp4' }), expect.objectContaining({ filename: 'arch.png' }), expect.objectContaining({ filename: 'huge.png' })]);
    expect(JSON.stringify(meta)).not.toContain('backup.zip'); // Filtered out by neg_regex: not even listed as skipped.

    const log = JSON.stringify((await app.call('GET', '/v2/events?limit=1000')).body);
    expect(log).toContain('PipelineCreated');
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain(basic().value);
  });

  it('incremental: the second run lists versions without bodies and reads only the edited page (or the one with a new attachment); a page deleted is gone from the state', async () => {
    wiki.put('2', 'ENG', 'On call', page('Page the on-call engineer, then the lead.'));
    const from = wiki.requests.length;
    const second = await run('eng');
    expect(second.run).toMatchObject({ status: 'completed', records_fetched: 1, records_processed: 1 });
    expect(second.processed).toEqual(['2']);
    expect(paths(from).some((p) => p.includes('body-format=storage') && p.includes('/spaces/'))).toBe(false);
    expect(paths(from)).toContain('/wiki/api/v2/pages/2?body-format=storage');
    expect(got.get('eng/2')).toContain('then the lead');

    // A new upload leaves the page's version as it was; with attachments read, it still counts as a change.
    wiki.pages.get('3')!.attachments.push({ id: 'att9', title: 'faq.txt', mediaType: 'text/plain', data: Buffer.from('Postmortems are due in five days.') });
    const third = await run('eng');
    expect(third.processed).toEqual(['3']);
    expect(got.get('eng/3')).toContain('Postmortems are due in five days.');

    const gone = wiki.pages.get('3')!;
    wiki.pages.delete('3');
    expect((await run('eng')).run).toMatchObject({ status: 'completed', records_fetched: 0 });
    wiki.pages.set('3', gone);
    const synced = (await app.call('GET', '/v2/events?category=pipeline&type=PipelineSourceSynced&limit=100')).body.events.filter((e: any) => e.data.key === 'eng');
    expect(synced[synced.length - 1].data.gone).toEqual(['3']);
  });

  it('full_refresh reads every page of every global space (no space_keys), honouring a 429’s Retry-After', async () => {
    await create('all', source({ space_keys: undefined, attachments: undefined, embedded_images: { mode: 'omit' } }), { sync_mode: 'full_refresh' });
    wiki.throttle = 1;
    const first = await run('all');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 4 });
    expect(first.processed).toEqual(['1', '2', '3', '9']);
    expect((await run('all')).processed).toEqual(['1', '2', '3', '9']);
    expect(got.get('all/1')).toContain('Run the deploy script after review.');
    expect(got.get('all/1')).not.toContain('[image'); // omit: images leave no trace in the text.
    expect(got.get('all/1')).not.toContain('Otter'); // attachments disabled by default.
  });

  it('a page the agent keeps failing is retried then dead-lettered; processing the dead letter reads just that page', async () => {
    failing = new Set(['2']);
    await create('eng-fail', source({ attachments: undefined }));
    const first = await run('eng-fail');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 3, records_processed: 2, records_failed: 1 });
    expect(first.events.filter((e) => e.source_record_id === '2').map((e) => [e.status, e.attempt])).toEqual([['failed', 1], ['failed', 2], ['failed', 3], ['dead_lettered', null]]);
    const letters = (await app.call('GET', '/v2/pipelines/eng-fail/dead_letters')).body.dead_letters;
    expect(letters.map((l: { source_record_id: string }) => l.source_record_id)).toEqual(['2']);
    failing = new Set();
    const from = wiki.requests.length;
    const retry = await app.call('POST', '/v2/pipelines/eng-fail/dead_letters/process', {});
    const retried = await until('the retry run to end', async () => {
      const r = (await app.call('GET', `/v2/pipelines/eng-fail/runs/${retry.body.id}`)).body;
      return r.status !== 'running' ? r : undefined;
    });
    expect(retried).toMatchObject({ status: 'completed', trigger_type: 'retry', records_fetched: 1, records_processed: 1 });
    expect(paths(from)).toEqual(['/wiki/api/v2/pages/2?body-format=storage', '/wiki/api/v2/pages/2/attachments?limit=250']);
    expect((await app.call('GET', '/v2/pipelines/eng-fail/dead_letters')).body.dead_letters).toEqual([]);
  });

  it('data_center: the v1 REST API under the site’s context path, start/limit paging, a personal access token; incremental by version', async () => {
    const created = await create('dc', source({ base_url: dc.url, deployment: 'data_center', auth: { type: 'bearer', token: 'dc-pat-77e1' }, embedded_images: { mode: 'omit' } }));
    expect(created.source).toMatchObject({ base_url: dc.url, deployment: 'data_center', auth: { type: 'bearer', token: '****' } });
    const from = dc.requests.length;
    const first = await run('dc');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 3, records_processed: 3 });
    expect(first.processed).toEqual(['41', '42', '43']);
    const listings = dc.requests.slice(from).map((r) => r.url).filter((u) => u.startsWith('/confluence/rest/api/content?'));
    expect(listings.map((u) => new URL(u, dc.url).searchParams.get('start'))).toEqual([null, '2']);
    expect(listings[0]).toContain('spaceKey=ENG&type=page&status=current&limit=100&expand=version,space,body.storage');
    expect(got.get('dc/41')).toContain('Restart the node.');
    expect(got.get('dc/41')).toContain('Otter'); // The attachment, downloaded from the site itself.
    const meta = JSON.parse(/\nmetadata: (.*)\n/.exec(got.get('dc/41')!)![1]); // The record's metadata, as the agent read it.
    expect(meta).toMatchObject({ url: `${dc.url}/display/ENG/Runbook`, confluence: { page_id: '41', space_key: 'ENG', version: 1 } });

    dc.put('43', 'ENG', 'Glossary', page('SLO: service level objective. SLA: agreement.'));
    const again = dc.requests.length;
    const second = await run('dc');
    expect(second.processed).toEqual(['43']);
    expect(dc.requests.slice(again).map((r) => r.url)).toContain('/confluence/rest/api/content/43?expand=version,space,body.storage');
    expect(got.get('dc/43')).toContain('SLA: agreement.');
  });

  it('refuses bad fields with a 400 naming each; a wrong token fails the run with the site’s answer; a PATCH keeps the credential', async () => {
    const bad = async (src: object) => {
      const res = await app.call('POST', '/v2/pipelines', { key: 'bad', name: 'bad', source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' } });
      return [res.status, Object.keys(res.body.field_errors ?? {})];
    };
    expect(await bad(source({ base_url: undefined }))).toEqual([400, ['source.base_url']]);
    expect(await bad(source({ base_url: 'ftp://wiki.example.com' }))).toEqual([400, ['source.base_url']]);
    expect(await bad(source({ deployment: 'server' }))).toEqual([400, ['source.deployment']]);
    expect(await bad(source({ space_keys: ['ENG', 'bad key'] }))).toEqual([400, ['source.space_keys[1]']]);
    expect(await bad(source({ attachments: { enabled: true, max_bytes: 500_000_000 } }))).toEqual([400, ['source.attachments.max_bytes']]);
    expect(await bad(source({ attachments: { pos_regex: ['('] } }))).toEqual([400, ['source.attachments.pos_regex[0]']]);
    expect(await bad(source({ embedded_images: { mode: 'link' } }))).toEqual([400, ['source.embedded_images.mode']]);
    expect(await bad(source({ embedded_images: { mode: 'inline', max_bytes: 21 * 1024 * 1024 } }))).toEqual([400, ['source.embedded_images.max_bytes']]);
    expect(await bad(source({ cql: 'space = ENG' }))).toEqual([400, ['source.cql']]);
    expect(await bad(source({ auth: { type: 'bearer' } }))).toEqual([400, ['source.auth.token']]);
    expect((await app.call('GET', '/v2/pipelines/bad')).status).toBe(404);

    await create('eng-wrong', source({ auth: basic('not-the-token-2b9d') }));
    const failed = await run('eng-wrong');
    expect(failed.run).toMatchObject({ status: 'failed', records_fetched: 0 });
    expect(failed.run.error).toContain('401');
    expect(failed.run.error).toContain('Unauthorized');
    const patched = await app.call('PATCH', '/v2/pipelines/eng-wrong', { source: { type: 'confluence', space_keys: ['HR'] } });
    expect(patched.body.source).toMatchObject({ base_url: wiki.url, space_keys: ['HR'], auth: { type: 'header', value: '****' }, attachments: { enabled: true } });
    await app.call('PATCH', '/v2/pipelines/eng-wrong', { source: { type: 'confluence', auth: basic() } });
    expect((await run('eng-wrong')).processed).toEqual(['9']);
  });
});
