import { referenceErrors } from './support/reference-openapi';
import { fixture } from './support/extraction-fixtures';
import { GraphServer } from './support/graph-server';
import { PipelineHarness, startPipelineHarness } from './support/pipeline-harness';

/** Issue 17, the SharePoint source (docs/pipelines.md): Microsoft identity platform and Graph on 127.0.0.1, the scripted model as the indexing agent. */

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const CLIENT = '0a1b2c3d-4e5f-6789-abcd-ef0123456789';
const SECRET = 'sp-secret-Q9v~7f3a';

describe('pipelines: the sharepoint source', () => {
  let h: PipelineHarness;
  let graph: GraphServer;

  beforeAll(async () => {
    graph = await GraphServer.start(TENANT, CLIENT, SECRET);
    graph.put('f-contracts', 'Contracts', 'root');
    graph.put('f-2026', '2026', 'f-contracts');
    graph.put('f-sub', 'Signed', 'f-2026');
    graph.put('d-docx', 'Lease.docx', 'f-2026', fixture('sample.docx'));
    graph.put('d-pdf', 'Offer.pdf', 'f-sub', fixture('sample.pdf'));
    graph.put('d-txt', 'Notes.txt', 'f-2026', Buffer.from('The first note says hello.'));
    graph.put('d-png', 'Scan.png', 'f-2026', Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    graph.put('d-out', 'Memo.txt', 'root', Buffer.from('Outside the folder.'));
    h = await startPipelineHarness({ SHAREPOINT_LOGIN_URL: graph.url, MICROSOFT_GRAPH_URL: `${graph.url}/v1.0` });
  });
  afterAll(async () => {
    await h?.close();
    await graph?.close();
  });

  const source = (extra: object = {}) => ({ type: 'sharepoint', site_url: 'https://contoso.sharepoint.com/sites/legal', tenant_id: TENANT, client_id: CLIENT, client_secret: SECRET, folder_path: '/Contracts/2026', ...extra });
  const deltaCalls = (from: number) => graph.requests.slice(from).filter((r) => r.url.includes('/root/delta')).map((r) => r.url);

  it('reads the folder’s files through delta with a client-credentials token, as text through the extraction library; the secret is masked', async () => {
    const created = await h.create('legal', source());
    expect(created.source).toEqual({ type: 'sharepoint', site_url: 'https://contoso.sharepoint.com/sites/legal', tenant_id: TENANT, client_id: CLIENT, folder_path: '/Contracts/2026', client_secret: '****' });
    expect(referenceErrors('createPipeline', 201, created)).toEqual([]);
    expect((await h.app.call('GET', '/v2/pipelines/legal')).body.source.client_secret).toBe('****');
    graph.throttle = 1; // The first Graph call is throttled: waited out, not a failure.
    const from = graph.requests.length;
    const first = await h.run('legal');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 3, records_processed: 3, records_failed: 0 });
    expect(first.processed).toEqual(['d-docx', 'd-pdf', 'd-txt']); // Not the PNG (unreadable type), not the file outside the folder.
    // Delta paged by nextLink to its deltaLink; every Graph call carried the issued token.
    expect(deltaCalls(from).length).toBeGreaterThan(2);
    expect(graph.requests.slice(from).filter((r) => r.url.startsWith('/v1.0/')).every((r) => r.authorization?.startsWith('Bearer eyJ0eXAi.fake.'))).toBe(true);
    expect(await h.indexed('d-docx')).toContain('daxomere');
    expect(h.app.logLines.some((l) => l.includes('file d-png skipped: Scan.png: a type the extraction library does not read'))).toBe(true);
    expect(await h.indexed('d-pdf')).toContain('pendrake');
    const sessions = (await h.app.call('GET', '/v2/agents/indexer/sessions?limit=100')).body.sessions as { metadata: Record<string, any> }[];
    expect(sessions.find((s) => s.metadata.pipeline?.source_record_id === 'd-txt')?.metadata.sharepoint).toMatchObject({ item_id: 'd-txt', name: 'Notes.txt', drive_id: graph.driveId, etag: '"{d-txt},1"' });
    // The secret is in no event and no log line.
    const events = await h.app.call('GET', '/v2/events?limit=1000');
    expect(JSON.stringify(events.body)).not.toContain(SECRET);
    expect(h.app.logLines.join('\n')).not.toContain(SECRET);
  });

  it('incremental: the next run asks delta from the kept deltaLink and processes only what changed; a deleted file is gone', async () => {
    graph.put('d-txt', 'Notes.txt', 'f-2026', Buffer.from('The second note says goodbye.'));
    graph.remove('d-pdf');
    graph.put('d-out', 'Memo.txt', 'root', Buffer.from('Still outside.'));
    const from = graph.requests.length;
    const second = await h.run('legal');
    expect(second.run).toMatchObject({ status: 'completed', records_fetched: 1, records_processed: 1 });
    expect(second.processed).toEqual(['d-txt']);
    expect(deltaCalls(from)[0]).toMatch(/\/root\/delta\?token=\d+$/);
    expect(h.given.get('d-txt')?.at(-1)).toBe('The second note says goodbye.');
    const synced = (await h.app.call('GET', '/v2/events?category=pipeline&type=PipelineSourceSynced&limit=100')).body.events.filter((e: any) => e.data.key === 'legal');
    expect(synced[synced.length - 1].data.gone).toEqual(['d-pdf']);
    expect((await h.run('legal')).run).toMatchObject({ status: 'completed', records_fetched: 0 });
    // A delta token Graph no longer knows (410) is a full listing compared with the kept versions: nothing changed, nothing processed.
    graph.expiredBefore = Number.MAX_SAFE_INTEGER;
    expect((await h.run('legal')).run).toMatchObject({ status: 'completed', records_fetched: 0 });
    graph.expiredBefore = 0;
  });

  it('full_refresh reads every file of the folder each run', async () => {
    await h.create('legal-full', source(), { sync_mode: 'full_refresh' });
    expect((await h.run('legal-full')).processed).toEqual(['d-docx', 'd-txt']);
    expect((await h.run('legal-full')).processed).toEqual(['d-docx', 'd-txt']);
  });

  it('a file the agent fails is retried, dead-lettered, read again by the next incremental run, and by a dead-letter retry', async () => {
    h.failing.add('d-docx');
    await h.create('legal-dl', source({ folder_path: null }));
    const first = await h.run('legal-dl');
    expect(first.processed).toEqual(['d-out', 'd-txt']);
    const docx = first.events.filter((e) => e.source_record_id === 'd-docx').map((e) => [e.status, e.attempt]);
    expect(docx).toEqual([['failed', 1], ['failed', 2], ['failed', 3], ['dead_lettered', null]]);
    expect((await h.app.call('GET', '/v2/pipelines/legal-dl/dead_letters')).body.dead_letters.map((d: any) => d.source_record_id)).toEqual(['d-docx']);
    // Unchanged since, but it never went through: the next incremental run reads it again.
    h.failing.clear();
    expect((await h.run('legal-dl')).processed).toEqual(['d-docx']);
    // A dead letter processed by hand reads that one item by id.
    h.failing.add('d-txt');
    graph.put('d-txt', 'Notes.txt', 'f-2026', Buffer.from('The third note.'));
    expect((await h.run('legal-dl')).run).toMatchObject({ records_failed: 1 });
    h.failing.clear();
    const from = graph.requests.length;
    const retry = await h.app.call('POST', '/v2/pipelines/legal-dl/dead_letters/process', {});
    expect(await h.ended('legal-dl', retry.body.id)).toMatchObject({ status: 'completed', trigger_type: 'retry', records_processed: 1 });
    expect(graph.requests.slice(from).filter((r) => r.url.startsWith('/v1.0/drives/')).map((r) => r.url)).toEqual([`/v1.0/drives/${graph.driveId}/items/d-txt`, `/v1.0/drives/${graph.driveId}/items/d-txt/content`]);
    expect(h.given.get('d-txt')?.at(-1)).toBe('The third note.');
  });

  it('refuses bad settings with a 400 naming the field; a wrong secret fails the run with the platform’s error code', async () => {
    const bad = async (src: object) => {
      const res = await h.app.call('POST', '/v2/pipelines', { key: 'bad', name: 'bad', source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' } });
      return [res.status, Object.keys(res.body.field_errors ?? {})];
    };
    expect(await bad(source({ site_url: undefined }))).toEqual([400, ['source.site_url']]);
    expect(await bad(source({ site_url: 'http://contoso.sharepoint.com/sites/legal' }))).toEqual([400, ['source.site_url']]);
    expect(await bad(source({ tenant_id: 'not a tenant' }))).toEqual([400, ['source.tenant_id']]);
    expect(await bad(source({ client_id: 'abc' }))).toEqual([400, ['source.client_id']]);
    expect(await bad(source({ client_secret: undefined }))).toEqual([400, ['source.client_secret']]);
    expect(await bad(source({ folder_path: '/a/../b' }))).toEqual([400, ['source.folder_path']]);
    expect(await bad(source({ site: 'x' }))).toEqual([400, ['source.site']]);
    expect((await h.app.call('GET', '/v2/pipelines/bad')).status).toBe(404);

    await h.create('legal-wrong', source({ client_secret: 'wrong-secret-55aa' }));
    const failed = await h.run('legal-wrong');
    expect(failed.run).toMatchObject({ status: 'failed', records_fetched: 0 });
    expect(failed.run.error).toContain('401: invalid_client');
    // A PATCH of the same type keeps the other fields and, without client_secret, the stored secret.
    const patched = await h.app.call('PATCH', '/v2/pipelines/legal-wrong', { source: { type: 'sharepoint', folder_path: '/Contracts' } });
    expect(patched.body.source).toMatchObject({ tenant_id: TENANT, folder_path: '/Contracts', client_secret: '****' });
    await h.app.call('PATCH', '/v2/pipelines/legal-wrong', { source: { type: 'sharepoint', client_secret: SECRET } });
    expect((await h.run('legal-wrong')).processed).toEqual(['d-docx', 'd-txt']);
  });
});
