import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { ScimServer } from './support/scim-server';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';

/** Issue 17, the SCIM source (docs/pipelines.md): a SCIM 2.0 provider on 127.0.0.1, the scripted model as the indexing agent. */

describe('pipelines: the scim source', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let scim: ScimServer;

  /** The agent: indexes the user it is given (document id = the SCIM id, text = the record's text), then says so. */
  const agentReply = (req: CapturedRequest): ScriptedReply => {
    const messages = (req.body as { messages: { role: string; content: unknown }[] }).messages;
    if (messages[messages.length - 1].role === 'tool') return { content: 'Indexed the user.' };
    const text = JSON.stringify(messages);
    const id = /source_record_id: (\S+?)\\n/.exec(text)?.[1] ?? '';
    const title = /title: (.*?)\\n/.exec(text)?.[1] ?? '';
    const jobTitle = /\\ntitle: (.*?)(\\n|")/.exec(text.slice(text.indexOf('metadata: ')))?.[1] ?? '';
    return { toolCalls: [{ id: 'c1', name: 'index', arguments: JSON.stringify({ documents: [{ id, title, text: `${title} works as ${jobTitle}` }] }) }] };
  };

  beforeAll(async () => {
    scim = await ScimServer.start('s3cret-token');
    for (const [id, name, title] of [['u1', 'Ada Lovelace', 'Analyst'], ['u2', 'Alan Turing', 'Cryptographer'], ['u3', 'Grace Hopper', 'Admiral'], ['u4', 'Edsger Dijkstra', 'Professor']]) scim.put(id, { userName: `${id}@example.com`, displayName: name, title, emails: [{ value: `${id}@example.com`, type: 'work', primary: true }] });
    scim.put('u5', { displayName: 'Left Company', active: false, title: 'Former' });
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = agentReply;
    app = await startTestApp({ env: { WORKER_POLL_MS: '200' } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/corpora', { key: 'people', name: 'People' });
    const agent = await app.call('POST', '/v2/agents', { key: 'indexer', name: 'indexer', model: { name: 'm' }, tool_configurations: { index: { type: 'document_index', argument_override: { corpus_key: 'people' } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    if (agent.status !== 201) throw new Error(JSON.stringify(agent.body));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await scim?.close();
  });

  const source = (extra: object = {}) => ({ type: 'scim', base_url: scim.url, auth: { type: 'bearer', token: 's3cret-token' }, filter: 'active eq true', page_size: 2, ...extra });
  const create = async (key: string, src: object, extra: object = {}) => {
    const res = await app.call('POST', '/v2/pipelines', { key, name: key, source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' }, ...extra });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  /** Triggers a run, waits for its end; answers the run and the ids of the records it processed. */
  const run = async (key: string) => {
    const { body } = await app.call('POST', `/v2/pipelines/${key}/trigger`);
    const ended = await until(`run ${body.id} to end`, async () => {
      const r = (await app.call('GET', `/v2/pipelines/${key}/runs/${body.id}`)).body;
      return r.status !== 'running' ? r : undefined;
    });
    const events = (await app.call('GET', `/v2/pipelines/${key}/runs/${body.id}/events?order=asc&limit=200`)).body.events as { type: string; status?: string; source_record_id?: string }[];
    return { run: ended, processed: events.filter((e) => e.type === 'record_processing' && e.status === 'completed').map((e) => e.source_record_id).sort() };
  };
  const listFilters = (from: number) => scim.requests.slice(from).filter((r) => r.url.startsWith('/scim/v2/Users?')).map((r) => new URL(r.url, 'http://x').searchParams);

  it('reads the users page by page through the filter, one record each, indexed by the agent; the token is masked', async () => {
    const created = await create('people-lmf', source());
    expect(created.source).toMatchObject({ type: 'scim', base_url: scim.url, filter: 'active eq true', incremental_strategy: 'last_modified_filter', auth: { type: 'bearer', token: '****' } });
    const from = scim.requests.length;
    const first = await run('people-lmf');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 4, records_processed: 4, records_failed: 0 });
    expect(first.processed).toEqual(['u1', 'u2', 'u3', 'u4']);
    const pages = listFilters(from);
    expect(pages.map((q) => [q.get('startIndex'), q.get('count'), q.get('filter')])).toEqual([['1', '2', 'active eq true'], ['3', '2', 'active eq true']]);
    expect(scim.requests.slice(from).every((r) => r.accept?.includes('application/scim+json') && r.authorization === 'Bearer s3cret-token')).toBe(true);
    const doc = (await app.call('GET', '/v2/corpora/people/documents/u3')).body;
    expect(JSON.stringify(doc)).toContain('Grace Hopper works as Admiral');
    // The session got the resource in its metadata.
    const sessions = (await app.call('GET', '/v2/agents/indexer/sessions?limit=100')).body.sessions as { metadata: Record<string, any> }[];
    expect(sessions.find((s) => s.metadata.pipeline?.source_record_id === 'u3')?.metadata.scim).toMatchObject({ id: 'u3', displayName: 'Grace Hopper', meta: { version: 'W/"1"' } });
  });

  it('last_modified_filter: the second run asks only for users modified after the last one seen, and processes only those', async () => {
    const lastSeen = scim.users.get('u4')!.meta.lastModified; // The latest of the users the first run got (u5 is filtered out).
    scim.put('u2', { title: 'Mathematician' });
    const from = scim.requests.length;
    const second = await run('people-lmf');
    expect(second.run).toMatchObject({ status: 'completed', records_fetched: 1, records_processed: 1 });
    expect(second.processed).toEqual(['u2']);
    const filter = listFilters(from)[0].get('filter')!;
    expect(filter).toBe(`(active eq true) and meta.lastModified gt "${lastSeen}"`);
    // The agent got the changed user: its new title and version.
    const sessions = (await app.call('GET', '/v2/agents/indexer/sessions?limit=100')).body.sessions as { metadata: Record<string, any> }[];
    const u2 = sessions.filter((s) => s.metadata.pipeline?.pipeline_key === 'people-lmf' && s.metadata.pipeline.source_record_id === 'u2').map((s) => s.metadata.scim);
    expect(u2).toEqual(expect.arrayContaining([expect.objectContaining({ title: 'Mathematician', meta: expect.objectContaining({ version: 'W/"2"' }) })]));
    // Nothing changed since: a third run processes nothing.
    expect((await run('people-lmf')).run).toMatchObject({ status: 'completed', records_fetched: 0, records_processed: 0 });
  });

  it('client_side: every user is listed again and only those whose meta.version changed are processed', async () => {
    await create('people-cs', source({ incremental_strategy: 'client_side' }));
    expect((await run('people-cs')).processed).toEqual(['u1', 'u2', 'u3', 'u4']);
    scim.put('u4', { title: 'Author' });
    const from = scim.requests.length;
    const second = await run('people-cs');
    expect(second.run).toMatchObject({ status: 'completed', records_fetched: 1, records_processed: 1 });
    expect(second.processed).toEqual(['u4']);
    expect(listFilters(from).map((q) => q.get('filter'))).toEqual(['active eq true', 'active eq true']);
    // A user no longer listed leaves the sync state as gone (nothing is deleted from the corpus).
    const gone = scim.users.get('u1')!;
    scim.users.delete('u1');
    expect((await run('people-cs')).run).toMatchObject({ status: 'completed', records_fetched: 0 });
    scim.users.set('u1', gone);
    const synced = (await app.call('GET', '/v2/events?category=pipeline&type=PipelineSourceSynced&limit=100')).body.events.filter((e: any) => e.data.key === 'people-cs');
    expect(synced[synced.length - 1].data.gone).toEqual(['u1']);
    expect(Object.keys(synced[synced.length - 1].data.versions).sort()).toEqual(['u2', 'u3', 'u4']);
  });

  it('full_refresh re-reads and processes every user each run', async () => {
    await create('people-full', source(), { sync_mode: 'full_refresh' });
    expect((await run('people-full')).processed).toEqual(['u1', 'u2', 'u3', 'u4']);
    const from = scim.requests.length;
    expect((await run('people-full')).processed).toEqual(['u1', 'u2', 'u3', 'u4']);
    expect(listFilters(from)[0].get('filter')).toBe('active eq true');
  });

  it('refuses a bad URL or credential with a 400 naming the field, and a rejected token fails the run with the provider’s answer', async () => {
    const bad = async (src: object) => {
      const res = await app.call('POST', '/v2/pipelines', { key: 'bad', name: 'bad', source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' } });
      return [res.status, Object.keys(res.body.field_errors ?? {})];
    };
    expect(await bad(source({ base_url: 'ftp://example.com/scim' }))).toEqual([400, ['source.base_url']]);
    expect(await bad(source({ base_url: 'not a url' }))).toEqual([400, ['source.base_url']]);
    expect(await bad(source({ auth: { type: 'basic', username: 'a', password: 'b' } }))).toEqual([400, ['source.auth.type']]);
    expect(await bad(source({ auth: { type: 'bearer' } }))).toEqual([400, ['source.auth.token']]);
    expect(await bad(source({ incremental_strategy: 'etag' }))).toEqual([400, ['source.incremental_strategy']]);
    expect(await bad(source({ attributes: ['userName', 'bad attr'] }))).toEqual([400, ['source.attributes[1]']]);
    expect((await app.call('GET', '/v2/pipelines/bad')).status).toBe(404);

    await create('people-wrong', source({ auth: { type: 'bearer', token: 'not-the-token-7f3a' } }));
    const failed = await run('people-wrong');
    expect(failed.run).toMatchObject({ status: 'failed', records_fetched: 0 });
    expect(failed.run.error).toContain('401');
    expect(JSON.stringify(failed.run)).not.toContain('not-the-token-7f3a');
    // A PATCH of the same type merges: the URL and the credential are kept (masked), the strategy changes.
    const patched = await app.call('PATCH', '/v2/pipelines/people-wrong', { source: { type: 'scim', incremental_strategy: 'client_side' } });
    expect(patched.body.source).toMatchObject({ base_url: scim.url, incremental_strategy: 'client_side', filter: 'active eq true', auth: { type: 'bearer', token: '****' } });
    // Dead letters of a SCIM pipeline name resources by id, not URL.
    const letter = await app.call('POST', '/v2/pipelines/people-wrong/dead_letters', { source_record_id: 'u1' });
    expect([letter.status, letter.body.messages]).toEqual([201, undefined]);
    // With the right token, processing it reads just that user (GET /Users/u1) and the agent indexes it.
    await app.call('PATCH', '/v2/pipelines/people-wrong', { source: { type: 'scim', auth: { type: 'bearer', token: 's3cret-token' } } });
    const from = scim.requests.length;
    const retry = await app.call('POST', '/v2/pipelines/people-wrong/dead_letters/process', {});
    expect(retry.status).toBe(201);
    const retried = await until('the retry run to end', async () => {
      const r = (await app.call('GET', `/v2/pipelines/people-wrong/runs/${retry.body.id}`)).body;
      return r.status !== 'running' ? r : undefined;
    });
    expect(retried).toMatchObject({ status: 'completed', trigger_type: 'retry', records_fetched: 1, records_processed: 1 });
    expect(scim.requests.slice(from).map((r) => r.url)).toEqual(['/scim/v2/Users/u1']);
    expect((await app.call('GET', '/v2/pipelines/people-wrong/dead_letters')).body.dead_letters).toEqual([]);
  });
});
