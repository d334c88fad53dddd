import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '@lib/testing';
import { ReferenceOpenApi } from './support/reference-openapi';
import { registerScripted } from './support/llm-fixtures';
import { S3Server } from './support/s3-server';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';

/** Issue 17, the s3 source (docs/pipelines.md, The S3 source): an S3-compatible store on 127.0.0.1 checking SigV4, the scripted model as the indexing agent. */

const KEY_ID = 'AKIAEXAMPLE7Q2X';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq3v9s';

describe('pipelines: the s3 source', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let s3: S3Server;
  /** What the agent was given, record by record. */
  const given: { id: string; text: string }[] = [];

  /** The agent: indexes the record (document id = the key with `/` as `_`) unless its text holds POISON-PILL. */
  const agentReply = (req: CapturedRequest): ScriptedReply => {
    const messages = (req.body as { messages: { role: string; content: unknown }[] }).messages;
    if (messages[messages.length - 1].role === 'tool') return { content: 'Indexed the file.' };
    const input = messages.filter((m) => m.role === 'user').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
    if (input.includes('POISON-PILL')) return { error: { status: 400, message: 'the model refused this file' } };
    const id = /source_record_id: (.+)\n/.exec(input)?.[1] ?? '';
    const text = input.slice(input.indexOf('\n\n') + 2);
    given.push({ id, text });
    return { toolCalls: [{ id: 'c1', name: 'index', arguments: JSON.stringify({ documents: [{ id: id.replace(/\//g, '_'), text }] }) }] };
  };

  beforeAll(async () => {
    s3 = await S3Server.start('team-docs', { accessKeyId: KEY_ID, secretAccessKey: SECRET, region: 'eu-west-1' });
    s3.maxKeys = 2; // Listings come in pages of two: paging is exercised.
    s3.put('docs/handbook.md', '# Handbook\n\nThe vacation policy grants 30 days.');
    s3.put('docs/setup.txt', 'Install the agent with the setup script.');
    s3.put('docs/guide.html', '<html><head><title>Guide</title></head><body><p>Ask the helpdesk first.</p></body></html>');
    s3.put('docs/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    s3.put('docs/sub dir/notes (old).txt', 'Old notes with spaces in the key.');
    s3.put('notes/meeting.txt', 'The meeting moved to Thursday.');
    s3.put('private/salaries.txt', 'Not under a listed prefix.');
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = agentReply;
    app = await startTestApp({ env: { WORKER_POLL_MS: '200' } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/corpora', { key: 'files', name: 'Files' });
    const agent = await app.call('POST', '/v2/agents', { key: 'indexer', name: 'indexer', model: { name: 'm' }, tool_configurations: { index: { type: 'document_index', argument_override: { corpus_key: 'files' } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    if (agent.status !== 201) throw new Error(JSON.stringify(agent.body));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await s3?.close();
  });

  const source = (extra: object = {}) => ({ type: 's3', bucket: 'team-docs', region: 'eu-west-1', endpoint_url: s3.url, access_key_id: KEY_ID, secret_access_key: SECRET, prefixes: ['docs/', 'notes/'], ...extra });
  const create = async (key: string, src: object, extra: object = {}) => {
    const res = await app.call('POST', '/v2/pipelines', { key, name: key, source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' }, ...extra });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  const ended = (key: string, id: string) =>
    until(`run ${id} to end`, async () => {
      const r = (await app.call('GET', `/v2/pipelines/${key}/runs/${id}`)).body;
      return r.status !== 'running' ? r : undefined;
    });
  /** Triggers a run, waits for its end; answers the run, its events and the ids of the records completed. */
  const run = async (key: string) => {
    const { body } = await app.call('POST', `/v2/pipelines/${key}/trigger`);
    const done = await ended(key, body.id);
    const events = (await app.call('GET', `/v2/pipelines/${key}/runs/${body.id}/events?order=asc&limit=200`)).body.events as { type: string; status?: string; attempt?: number | null; source_record_id?: string }[];
    return { run: done, events, processed: events.filter((e) => e.type === 'record_processing' && e.status === 'completed').map((e) => e.source_record_id).sort() };
  };
  const gets = (from: number) => s3.requests.slice(from).filter((r) => !r.query.has('list-type')).map((r) => r.path);
  const lists = (from: number) => s3.requests.slice(from).filter((r) => r.query.has('list-type'));

  it('lists the prefixes page by page, reads the files it can parse, and the agent indexes them; the keys are masked and never in the log', async () => {
    const created = await create('files-inc', source());
    expect(new ReferenceOpenApi().check('getPipeline', 200, (await app.call('GET', '/v2/pipelines/files-inc')).body)).toEqual([]);
    expect(created.source).toEqual({ type: 's3', bucket: 'team-docs', region: 'eu-west-1', endpoint_url: s3.url, prefixes: ['docs/', 'notes/'], pos_regex: [], neg_regex: [], access_key_id: '****', secret_access_key: '****' });
    const from = s3.requests.length;
    const first = await run('files-inc');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 5, records_processed: 5, records_failed: 0 });
    expect(first.processed).toEqual(['docs/guide.html', 'docs/handbook.md', 'docs/setup.txt', 'docs/sub dir/notes (old).txt', 'notes/meeting.txt']);
    // ListObjectsV2 followed by continuation token: docs/ has five keys (three pages), notes/ one.
    expect(lists(from).map((r) => [r.query.get('prefix'), r.query.has('continuation-token')])).toEqual([['docs/', false], ['docs/', true], ['docs/', true], ['notes/', false]]);
    // The png is not downloaded (not a type the parser reads), nor anything outside the prefixes; every request was signed.
    expect(gets(from).sort()).toEqual(['/team-docs/docs/guide.html', '/team-docs/docs/handbook.md', '/team-docs/docs/setup.txt', '/team-docs/docs/sub dir/notes (old).txt', '/team-docs/notes/meeting.txt']);
    expect(s3.requests.slice(from).every((r) => r.status === 200)).toBe(true);
    expect(JSON.stringify((await app.call('GET', '/v2/corpora/files/documents/docs_handbook.md')).body)).toContain('vacation policy grants 30 days');
    expect(JSON.stringify((await app.call('GET', '/v2/corpora/files/documents/docs_guide.html')).body)).toContain('Ask the helpdesk first');
    const sessions = (await app.call('GET', '/v2/agents/indexer/sessions?limit=100')).body.sessions as { metadata: Record<string, any> }[];
    expect(sessions.find((s) => s.metadata.pipeline?.source_record_id === 'notes/meeting.txt')?.metadata.s3).toEqual({ bucket: 'team-docs', key: 'notes/meeting.txt', etag: s3.objects.get('notes/meeting.txt')!.etag, size: 30, last_modified: s3.objects.get('notes/meeting.txt')!.lastModified });
    const log = JSON.stringify((await app.call('GET', '/v2/events?category=pipeline&limit=1000')).body) + JSON.stringify((await app.call('GET', '/v2/events?category=pipelinerun&limit=1000')).body);
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain(KEY_ID);
    expect(app.logLines.join('\n')).not.toContain(SECRET);
    expect(app.logLines.some((l) => l.includes('docs/logo.png') && l.includes('not a file type'))).toBe(true);
  });

  it('incremental: a second run lists again and downloads only the object whose ETag changed', async () => {
    s3.put('docs/setup.txt', 'Install the agent with the new installer.');
    const from = s3.requests.length;
    const second = await run('files-inc');
    expect(second.run).toMatchObject({ status: 'completed', records_fetched: 1, records_processed: 1 });
    expect(second.processed).toEqual(['docs/setup.txt']);
    expect(gets(from)).toEqual(['/team-docs/docs/setup.txt']);
    expect(given[given.length - 1]).toEqual({ id: 'docs/setup.txt', text: 'Install the agent with the new installer.' });
    expect((await run('files-inc')).run).toMatchObject({ status: 'completed', records_fetched: 0 });
  });

  it('full_refresh reads every object each run; the deprecated prefix and the regexes scope the keys', async () => {
    await create('files-full', source({ prefixes: undefined, prefix: 'docs/', neg_regex: ['.*\\.html'] }), { sync_mode: 'full_refresh' });
    expect((await app.call('GET', '/v2/pipelines/files-full')).body.source.prefixes).toEqual(['docs/']);
    const expected = ['docs/handbook.md', 'docs/setup.txt', 'docs/sub dir/notes (old).txt'];
    expect((await run('files-full')).processed).toEqual(expected);
    expect((await run('files-full')).processed).toEqual(expected);
  });

  it('honours throttling (503 SlowDown with Retry-After) and goes on', async () => {
    await create('files-slow', source({ prefixes: ['notes/'] }));
    s3.throttle.push({ status: 503, retryAfter: '0' }, { status: 429, retryAfter: '1' });
    const from = s3.requests.length;
    const r = await run('files-slow');
    expect(r.run).toMatchObject({ status: 'completed', records_processed: 1 });
    expect(s3.requests.slice(from).map((x) => x.status)).toEqual([503, 429, 200, 200]);
  });

  it('a record the agent keeps failing is retried then dead-lettered; processing the dead letter reads just that object', async () => {
    s3.put('trial/bad.txt', 'This file is a POISON-PILL to the model.');
    s3.put('trial/good.txt', 'This file is fine.');
    await create('files-poison', source({ prefixes: ['trial/'] }));
    const r = await run('files-poison');
    expect(r.run).toMatchObject({ status: 'completed', records_fetched: 2, records_processed: 1, records_failed: 1 });
    expect(r.events.filter((e) => e.source_record_id === 'trial/bad.txt').map((e) => [e.status, e.attempt])).toEqual([['failed', 1], ['failed', 2], ['failed', 3], ['dead_lettered', null]]);
    expect((await app.call('GET', '/v2/pipelines/files-poison/dead_letters')).body.dead_letters.map((d: any) => d.source_record_id)).toEqual(['trial/bad.txt']);
    s3.put('trial/bad.txt', 'This file is now fine.');
    const from = s3.requests.length;
    const retry = await app.call('POST', '/v2/pipelines/files-poison/dead_letters/process', {});
    expect(await ended('files-poison', retry.body.id)).toMatchObject({ status: 'completed', trigger_type: 'retry', records_fetched: 1, records_processed: 1 });
    expect(s3.requests.slice(from).map((x) => x.path)).toEqual(['/team-docs/trial/bad.txt']);
    expect((await app.call('GET', '/v2/pipelines/files-poison/dead_letters')).body.dead_letters).toEqual([]);
  });

  it('an object the store fails to serve fails the run by name after retries; the others are processed', async () => {
    await create('files-broken', source({ prefixes: ['docs/'], pos_regex: ['docs/[a-z]+\\.(md|txt)'] }));
    s3.broken.add('docs/handbook.md');
    const r = await run('files-broken');
    s3.broken.clear();
    expect(r.processed).toEqual(['docs/setup.txt']);
    expect(r.run.error).toMatch(/docs\/handbook\.md answered 500 InternalError/);
  });

  it('refuses bad fields with a 400 naming them; a wrong secret fails the run with the store’s 403; a PATCH keeps the keys', async () => {
    const bad = async (src: object) => {
      const res = await app.call('POST', '/v2/pipelines', { key: 'bad', name: 'bad', source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' } });
      return [res.status, Object.keys(res.body.field_errors ?? {})];
    };
    expect(await bad(source({ bucket: undefined }))).toEqual([400, ['source.bucket']]);
    expect(await bad(source({ bucket: 'Bad_Bucket' }))).toEqual([400, ['source.bucket']]);
    expect(await bad(source({ region: undefined }))).toEqual([400, ['source.region']]);
    expect(await bad(source({ endpoint_url: 'ftp://store.example.com' }))).toEqual([400, ['source.endpoint_url']]);
    expect(await bad(source({ secret_access_key: undefined }))).toEqual([400, ['source.secret_access_key']]);
    expect(await bad(source({ access_key_id: undefined }))).toEqual([400, ['source.access_key_id']]);
    expect(await bad(source({ prefix: 'docs/' }))).toEqual([400, ['source.prefix']]);
    expect(await bad(source({ prefixes: ['docs/', 7] }))).toEqual([400, ['source.prefixes[1]']]);
    expect(await bad(source({ pos_regex: ['(unclosed'] }))).toEqual([400, ['source.pos_regex[0]']]);
    expect(await bad(source({ recursive: true }))).toEqual([400, ['source.recursive']]);
    expect((await app.call('GET', '/v2/pipelines/bad')).status).toBe(404);
    // This server lists no PIPELINE_FILE_SHARE_ROOTS: the file-share source is off (test/pipelines-file-share covers it on).
    const share = await app.call('POST', '/v2/pipelines', { key: 'share', name: 'share', source: { type: 'file_share', path: '/srv/share' }, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' } });
    expect([share.status, share.body.field_errors?.['source.type']]).toEqual([400, expect.stringContaining('not enabled on this server')]);

    // The store is reached through the guarded outbound client: an address the policy refuses is not called.
    await create('files-metadata', source({ endpoint_url: 'http://169.254.169.254' }));
    const refused = await run('files-metadata');
    expect(refused.run).toMatchObject({ status: 'failed', records_fetched: 0 });
    expect(refused.run.error).toContain('not allowed by the outbound policy');

    await create('files-wrong', source({ secret_access_key: 'not-the-secret-9d1c', prefixes: ['notes/'] }));
    const failed = await run('files-wrong');
    expect(failed.run).toMatchObject({ status: 'failed', records_fetched: 0 });
    expect(failed.run.error).toContain('403 SignatureDoesNotMatch');
    expect(JSON.stringify(failed.run)).not.toContain('not-the-secret-9d1c');
    // A PATCH of the same type merges: sending the mask back keeps the key id, a new secret replaces the old one.
    const patched = await app.call('PATCH', '/v2/pipelines/files-wrong', { source: { type: 's3', access_key_id: '****', secret_access_key: SECRET } });
    expect(patched.body.source).toMatchObject({ bucket: 'team-docs', prefixes: ['notes/'], access_key_id: '****', secret_access_key: '****' });
    expect((await run('files-wrong')).processed).toEqual(['notes/meeting.txt']);
  });
});
