import { referenceErrors } from './support/reference-openapi';
import { makeServiceAccountKey } from '@lib/testing';
import { DriveServer, FOLDER, GDOC } from './support/drive-server';
import { fixture } from './support/extraction-fixtures';
import { PipelineHarness, startPipelineHarness } from './support/pipeline-harness';

/** Issue 17, the Google Drive source (docs/pipelines.md): Google's token endpoint and Drive v3 on 127.0.0.1, the scripted model as the indexing agent. */

const DRIVE = 'drive0AHk_z9_Bcg';
const ADA = 'ada@example.com';

describe('pipelines: the google_drive source', () => {
  let h: PipelineHarness;
  let drive: DriveServer;
  let key: ReturnType<typeof makeServiceAccountKey>;

  beforeAll(async () => {
    drive = await DriveServer.start([ADA]);
    key = makeServiceAccountKey({ email: 'drive-ingest@proj.iam.gserviceaccount.com', tokenUri: `${drive.url}/token` });
    drive.trust(key.email, key.publicKeyPem);
    const shared = { driveId: DRIVE };
    drive.put({ id: DRIVE, name: 'Legal', mimeType: FOLDER, parent: '', ...shared });
    drive.put({ id: 'gLease00001', name: 'Lease.docx', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', parent: DRIVE, content: fixture('sample.docx'), ...shared });
    drive.put({ id: 'gPolicy0001', name: 'Policy', mimeType: GDOC, parent: DRIVE, content: Buffer.from('\uFEFFRemote work is allowed.'), ...shared });
    drive.put({ id: 'gPhoto00001', name: 'photo.png', mimeType: 'image/png', parent: DRIVE, content: Buffer.from([0x89, 0x50]), ...shared });
    drive.put({ id: 'gSub0000001', name: 'Signed', mimeType: FOLDER, parent: DRIVE, ...shared });
    drive.put({ id: 'gOffer00001', name: 'Offer', mimeType: 'application/pdf', parent: 'gSub0000001', content: fixture('sample.pdf'), ...shared });
    drive.put({ id: 'rootAda0001', name: 'My Drive', mimeType: FOLDER, parent: '', owner: ADA });
    drive.put({ id: 'projAda0001', name: 'Projects', mimeType: FOLDER, parent: 'rootAda0001', owner: ADA });
    drive.put({ id: 'gPlan000001', name: 'plan.txt', mimeType: 'text/plain', parent: 'projAda0001', content: Buffer.from('The plan is to ship.'), owner: ADA });
    drive.put({ id: 'gPrivate001', name: 'private.txt', mimeType: 'text/plain', parent: 'rootAda0001', content: Buffer.from('Not in scope.'), owner: ADA });
    h = await startPipelineHarness({ GOOGLE_OAUTH_TOKEN_URL: `${drive.url}/token`, GOOGLE_DRIVE_API_URL: `${drive.url}/drive/v3` });
  });
  afterAll(async () => {
    await h?.close();
    await drive?.close();
  });

  const scopes = [{ type: 'shared', url: `https://drive.google.com/drive/folders/${DRIVE}` }, { type: 'my_drive', subject_email: ADA, url: 'https://drive.google.com/drive/u/0/folders/projAda0001?usp=sharing' }];
  const source = (extra: object = {}) => ({ type: 'google_drive', scopes, client_email: key.email, private_key: key.privateKeyPem, ...extra });
  const ALL = ['gLease00001', 'gOffer00001', 'gPlan000001', 'gPolicy0001'];

  it('reads a shared drive and a delegated My Drive folder with service-account tokens; files through extraction, Google Docs exported; the key is masked', async () => {
    const created = await h.create('gd', source());
    expect(created.source).toEqual({ type: 'google_drive', scopes, client_email: key.email, private_key: '****' });
    expect(referenceErrors('createPipeline', 201, created)).toEqual([]);
    drive.rateLimit = 1; // Drive's rate limit (a 403) is backed off, not a failure.
    const from = drive.requests.length;
    const first = await h.run('gd');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 4, records_processed: 4, records_failed: 0 });
    expect(first.processed).toEqual(ALL); // Not the PNG, not the My Drive file outside the folder.
    expect(drive.rateLimit).toBe(0);
    // The shared drive was read as the service account, the My Drive folder as Ada (domain-wide delegation).
    expect(new Set(drive.subjects)).toEqual(new Set([null, ADA]));
    const lists = drive.requests.slice(from).filter((r) => r.url.startsWith('/drive/v3/files?'));
    expect(lists.some((r) => new URL(r.url, 'http://x').searchParams.get('pageToken') === '2')).toBe(true);
    expect(lists.filter((r) => r.url.includes(`driveId=${DRIVE}`)).every((r) => r.identity === key.email)).toBe(true);
    expect(await h.indexed('gLease00001')).toContain('daxomere');
    expect(await h.indexed('gOffer00001')).toContain('pendrake'); // A PDF named without its extension: read by its mimeType.
    expect(h.given.get('gPolicy0001')).toEqual(['Remote work is allowed.']);
    const sessions = (await h.app.call('GET', '/v2/agents/indexer/sessions?limit=100')).body.sessions as { metadata: Record<string, any> }[];
    expect(sessions.find((s) => s.metadata.pipeline?.source_record_id === 'gOffer00001')?.metadata.google_drive).toMatchObject({ path: '/Signed/Offer', drive_id: DRIVE, mime_type: 'application/pdf' });
    const events = JSON.stringify((await h.app.call('GET', '/v2/events?limit=1000')).body);
    expect(events).not.toContain('PRIVATE KEY');
    expect(h.app.logLines.join('\n')).not.toContain('PRIVATE KEY');
  });

  it('incremental: a changed file (md5) or Google Doc (version) is processed again, a renamed file is not, a trashed one is gone', async () => {
    drive.put({ ...drive.nodes.get('gPlan000001')!, content: Buffer.from('The plan changed.') });
    drive.put({ ...drive.nodes.get('gPolicy0001')!, content: Buffer.from('Remote work is allowed twice a week.') });
    drive.put({ ...drive.nodes.get('gLease00001')!, name: 'Lease (2025).docx' });
    const second = await h.run('gd');
    expect(second.processed).toEqual(['gPlan000001', 'gPolicy0001']);
    expect(h.given.get('gPlan000001')?.at(-1)).toBe('The plan changed.');
    drive.nodes.delete('gOffer00001');
    expect((await h.run('gd')).run).toMatchObject({ status: 'completed', records_fetched: 0 });
    const synced = (await h.app.call('GET', '/v2/events?category=pipeline&type=PipelineSourceSynced&limit=100')).body.events.filter((e: any) => e.data.key === 'gd');
    expect(synced[synced.length - 1].data.gone).toEqual(['gOffer00001']);
  });

  it('full_refresh reads every file each run', async () => {
    await h.create('gd-full', source(), { sync_mode: 'full_refresh' });
    expect((await h.run('gd-full')).processed).toEqual(['gLease00001', 'gPlan000001', 'gPolicy0001']);
    expect((await h.run('gd-full')).processed).toEqual(['gLease00001', 'gPlan000001', 'gPolicy0001']);
  });

  it('a file the agent fails is dead-lettered after its attempts, and a dead-letter retry reads just that file', async () => {
    h.failing.add('gPlan000001');
    await h.create('gd-dl', source());
    const first = await h.run('gd-dl');
    expect(first.events.filter((e) => e.source_record_id === 'gPlan000001').map((e) => [e.status, e.attempt])).toEqual([['failed', 1], ['failed', 2], ['failed', 3], ['dead_lettered', null]]);
    h.failing.clear();
    const from = drive.requests.length;
    const retry = await h.app.call('POST', '/v2/pipelines/gd-dl/dead_letters/process', {});
    expect(await h.ended('gd-dl', retry.body.id)).toMatchObject({ status: 'completed', trigger_type: 'retry', records_processed: 1 });
    // Not visible to the service account (a My Drive file): found with the delegated scope's token.
    expect(drive.requests.slice(from).map((r) => [r.url.split('?')[0], r.identity])).toEqual([['/drive/v3/files/gPlan000001', key.email], ['/drive/v3/files/gPlan000001', ADA], ['/drive/v3/files/gPlan000001', ADA]]);
    expect((await h.app.call('GET', '/v2/pipelines/gd-dl/dead_letters')).body.dead_letters).toEqual([]);
  });

  it('refuses bad settings with a 400 naming the field; a key Google does not trust fails the run with its error code', async () => {
    const bad = async (src: object) => {
      const res = await h.app.call('POST', '/v2/pipelines', { key: 'bad', name: 'bad', source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' } });
      return [res.status, Object.keys(res.body.field_errors ?? {})];
    };
    expect(await bad(source({ scopes: [] }))).toEqual([400, ['source.scopes']]);
    expect(await bad(source({ scopes: [{ type: 'team' }] }))).toEqual([400, ['source.scopes[0].type']]);
    expect(await bad(source({ scopes: [{ type: 'shared', url: 'https://example.com/folders/x' }] }))).toEqual([400, ['source.scopes[0].url']]);
    expect(await bad(source({ scopes: [scopes[0], { type: 'my_drive' }] }))).toEqual([400, ['source.scopes[1].subject_email']]);
    expect(await bad(source({ client_email: 'nobody' }))).toEqual([400, ['source.client_email']]);
    expect(await bad(source({ private_key: undefined }))).toEqual([400, ['source.private_key']]);
    expect((await h.app.call('GET', '/v2/pipelines/bad')).status).toBe(404);

    const other = makeServiceAccountKey({ tokenUri: `${drive.url}/token` });
    await h.create('gd-wrong', source({ private_key: other.privateKeyPem }));
    const failed = await h.run('gd-wrong');
    expect(failed.run).toMatchObject({ status: 'failed', records_fetched: 0 });
    expect(failed.run.error).toContain('400: invalid_grant');
    // A key that is not a PEM private key is refused at the edge, naming the field, and the stored one is kept.
    expect(await bad(source({ private_key: 'not a key' }))).toEqual([400, ['source.private_key']]);
    const garbled = await h.app.call('PATCH', '/v2/pipelines/gd-wrong', { source: { type: 'google_drive', private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' } });
    expect([garbled.status, Object.keys(garbled.body.field_errors ?? {})]).toEqual([400, ['source.private_key']]);
    // A PATCH keeps the stored key when it is left out; the scopes it gives replace the list.
    await h.app.call('PATCH', '/v2/pipelines/gd-wrong', { source: { type: 'google_drive', private_key: key.privateKeyPem } });
    const patched = await h.app.call('PATCH', '/v2/pipelines/gd-wrong', { source: { type: 'google_drive', scopes: [scopes[1]] } });
    expect(patched.body.source).toEqual({ type: 'google_drive', scopes: [scopes[1]], client_email: key.email, private_key: '****' });
    expect((await h.run('gd-wrong')).processed).toEqual(['gPlan000001']);
  });
});
