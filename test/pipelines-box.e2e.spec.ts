import { referenceErrors } from './support/reference-openapi';
import { BoxServer } from './support/box-server';
import { fixture } from './support/extraction-fixtures';
import { PipelineHarness, startPipelineHarness } from './support/pipeline-harness';

/** Issue 17, the Box source (docs/pipelines.md): Box's API on 127.0.0.1, the scripted model as the indexing agent. */

const CREDS = { clientId: 'n3xq8r2v9k5m1p7t4w6yj0zb3c5d7f9g', secret: 'box-secret-Zq81', enterprise: '1234567' };
const user = (id: string, name: string) => ({ id, name, login: `${name.toLowerCase()}@example.com` });

describe('pipelines: the box source', () => {
  let h: PipelineHarness;
  let box: BoxServer;

  beforeAll(async () => {
    box = await BoxServer.start(CREDS);
    box.put('100', 'Legal', '0');
    box.put('110', 'Signed', '100');
    box.put('201', 'Lease.docx', '100', fixture('sample.docx'));
    box.put('202', 'Notes.txt', '100', Buffer.from('The first note says hello.'));
    box.put('203', 'Offer.pdf', '110', fixture('sample.pdf'));
    box.put('204', 'photo.jpg', '100', Buffer.from([0xff, 0xd8, 0xff]));
    box.put('300', 'Other', '0');
    box.put('301', 'memo.txt', '300', Buffer.from('Outside.'));
    box.collabs.push({ on: '100', user: user('11', 'Alice'), role: 'editor', status: 'accepted' }, { on: '100', user: user('13', 'Carol'), role: 'viewer', status: 'pending' });
    box.collabs.push({ on: '110', user: user('12', 'Bob'), role: 'viewer', status: 'accepted' }, { on: '202', user: user('14', 'Dave'), role: 'previewer', status: 'accepted' });
    h = await startPipelineHarness({ BOX_API_URL: box.url });
  });
  afterAll(async () => {
    await h?.close();
    await box?.close();
  });

  const source = (extra: object = {}, auth: object = {}) => ({ type: 'box', folder_id: 'https://app.box.com/folder/100', auth: { type: 'ccg', client_id: CREDS.clientId, client_secret: CREDS.secret, enterprise_id: CREDS.enterprise, ...auth }, ...extra });
  /** The `box` metadata each session of the record got (of one run, when given). */
  const sessionMeta = async (key: string, id: string, runId?: string) => {
    const sessions = (await h.app.call('GET', '/v2/agents/indexer/sessions?limit=100')).body.sessions as { metadata: Record<string, any> }[];
    return sessions.filter((s) => s.metadata.pipeline?.pipeline_key === key && s.metadata.pipeline.source_record_id === id && (!runId || s.metadata.pipeline.run_id === runId)).map((s) => s.metadata.box);
  };
  const who = (meta: any) => (meta.collaborations as { name: string; role: string }[]).map((c) => `${c.name}:${c.role}`).sort();

  it('walks the folder and its subfolders with a CCG token, files as text, collaborations inherited as ACL metadata; the secret is masked', async () => {
    const created = await h.create('box', source());
    expect(created.source).toEqual({ type: 'box', folder_id: '100', auth: { type: 'ccg', client_id: CREDS.clientId, enterprise_id: CREDS.enterprise, client_secret: '****' } });
    expect(referenceErrors('createPipeline', 201, created)).toEqual([]);
    box.throttle = 1;
    const from = box.requests.length;
    const first = await h.run('box');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 3, records_processed: 3, records_failed: 0 });
    expect(first.processed).toEqual(['201', '202', '203']); // Not the JPEG, not the file of another folder.
    const listings = box.requests.slice(from).filter((r) => r.url.startsWith('/2.0/folders/100/items'));
    expect(listings.map((r) => new URL(r.url, 'http://x').searchParams.get('marker'))).toEqual([null, '2']);
    expect(box.requests.slice(from).filter((r) => r.url.startsWith('/2.0/')).every((r) => r.authorization?.startsWith('Bearer box-token-'))).toBe(true);
    expect(await h.indexed('201')).toContain('daxomere');
    expect(await h.indexed('203')).toContain('pendrake');
    expect(who((await sessionMeta('box', '203'))[0])).toEqual(['Alice:editor', 'Bob:viewer']);
    expect(who((await sessionMeta('box', '202'))[0])).toEqual(['Alice:editor', 'Dave:previewer']);
    expect((await sessionMeta('box', '203'))[0]).toMatchObject({ file_id: '203', name: 'Offer.pdf', path: '/Signed/Offer.pdf' });
    const events = await h.app.call('GET', '/v2/events?limit=1000');
    expect(JSON.stringify(events.body)).not.toContain(CREDS.secret);
    expect(h.app.logLines.join('\n')).not.toContain(CREDS.secret);
  });

  it('incremental: only files whose sha1 changed, or whose folders’ collaborations changed, are processed again', async () => {
    box.put('202', 'Notes.txt', '100', Buffer.from('The second note says goodbye.'));
    box.collabs.push({ on: '110', user: user('15', 'Erin'), role: 'editor', status: 'accepted' });
    const second = await h.run('box');
    expect(second.processed).toEqual(['202', '203']);
    expect(h.given.get('202')?.at(-1)).toBe('The second note says goodbye.');
    expect(who((await sessionMeta('box', '203', second.run.id))[0])).toEqual(['Alice:editor', 'Bob:viewer', 'Erin:editor']);
    // A renamed-only file keeps its sha1: not processed again; a removed one is gone.
    box.put('201', 'Lease (old).docx', '100', fixture('sample.docx'));
    box.nodes.delete('203');
    expect((await h.run('box')).run).toMatchObject({ status: 'completed', records_fetched: 0 });
    const synced = (await h.app.call('GET', '/v2/events?category=pipeline&type=PipelineSourceSynced&limit=100')).body.events.filter((e: any) => e.data.key === 'box');
    expect(synced[synced.length - 1].data.gone).toEqual(['203']);
  });

  it('full_refresh reads every file each run', async () => {
    await h.create('box-full', source(), { sync_mode: 'full_refresh' });
    expect((await h.run('box-full')).processed).toEqual(['201', '202']);
    expect((await h.run('box-full')).processed).toEqual(['201', '202']);
  });

  it('a file the agent fails is dead-lettered after its attempts, and a dead-letter retry reads just that file', async () => {
    h.failing.add('202');
    await h.create('box-dl', source({ folder_id: '0' }));
    const first = await h.run('box-dl');
    expect(first.processed).toEqual(['201', '301']);
    expect(first.events.filter((e) => e.source_record_id === '202').map((e) => [e.status, e.attempt])).toEqual([['failed', 1], ['failed', 2], ['failed', 3], ['dead_lettered', null]]);
    h.failing.clear();
    const from = box.requests.length;
    const retry = await h.app.call('POST', '/v2/pipelines/box-dl/dead_letters/process', {});
    expect(await h.ended('box-dl', retry.body.id)).toMatchObject({ status: 'completed', trigger_type: 'retry', records_processed: 1 });
    expect(box.requests.slice(from).filter((r) => r.url.startsWith('/2.0/files/')).map((r) => r.url.split('?')[0])).toEqual(['/2.0/files/202', '/2.0/files/202/collaborations', '/2.0/files/202/content']);
    const retried = (await sessionMeta('box-dl', '202', retry.body.id))[0];
    expect(retried).toMatchObject({ path: '/Legal/Notes.txt' });
    expect(who(retried)).toEqual(['Alice:editor', 'Dave:previewer']);
    expect((await h.app.call('GET', '/v2/pipelines/box-dl/dead_letters')).body.dead_letters).toEqual([]);
  });

  it('refuses bad settings with a 400 naming the field; wrong credentials fail the run with Box’s error code', async () => {
    const bad = async (src: object) => {
      const res = await h.app.call('POST', '/v2/pipelines', { key: 'bad', name: 'bad', source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' } });
      return [res.status, Object.keys(res.body.field_errors ?? {})];
    };
    expect(await bad(source({ folder_id: 'https://example.com/folder/1' }))).toEqual([400, ['source.folder_id']]);
    expect(await bad({ type: 'box', folder_id: '1' })).toEqual([400, ['source.auth.client_secret']]);
    expect(await bad(source({}, { type: 'jwt' }))).toEqual([400, ['source.auth.type']]);
    expect(await bad(source({}, { enterprise_id: undefined }))).toEqual([400, ['source.auth.enterprise_id']]);
    expect(await bad(source({}, { client_secret: undefined }))).toEqual([400, ['source.auth.client_secret']]);
    expect(await bad(source({}, { public_key_id: 'x' }))).toEqual([400, ['source.auth.public_key_id']]);
    expect(await bad(source({ recursive: true }))).toEqual([400, ['source.recursive']]);
    expect((await h.app.call('GET', '/v2/pipelines/bad')).status).toBe(404);

    await h.create('box-wrong', source({}, { client_secret: 'wrong-secret-77' }));
    const failed = await h.run('box-wrong');
    expect(failed.run).toMatchObject({ status: 'failed', records_fetched: 0 });
    expect(failed.run.error).toContain('400: invalid_client');
    // A PATCH merges the auth fields and keeps the stored secret when it is left out or sent as ****.
    const patched = await h.app.call('PATCH', '/v2/pipelines/box-wrong', { source: { type: 'box', folder_id: '300', auth: { client_secret: '****' } } });
    expect(patched.body.source).toEqual({ type: 'box', folder_id: '300', auth: { type: 'ccg', client_id: CREDS.clientId, enterprise_id: CREDS.enterprise, client_secret: '****' } });
    await h.app.call('PATCH', '/v2/pipelines/box-wrong', { source: { type: 'box', auth: { client_secret: CREDS.secret } } });
    expect((await h.run('box-wrong')).processed).toEqual(['301']);
  });
});
