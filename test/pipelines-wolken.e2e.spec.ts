import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { recordIndexingReply } from './support/pipeline-harness';
import { ReferenceOpenApi } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';
import { KbArticle, WolkenServer } from './support/wolken-server';

/** Issue 17, the wolken_kb source (docs/pipelines.md): a Wolken KB API on 127.0.0.1, the scripted model as the indexing agent. */

const AUTH_CODE = 'Basic d29sa2VuOmF1dGgtY29kZS03YTE=';
const REFRESH = 'wolken-refresh-e41d';
const creds = { domain: 'acme', clientId: 'cl-acme-01', serviceAccount: 'kb-reader@acme.example', authCode: AUTH_CODE, refreshToken: REFRESH };

describe('pipelines: the wolken_kb source', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let kb: WolkenServer;
  let failing = new Set<string>();
  const got = new Map<string, string>();

  const agentReply = recordIndexingReply({ got, failing: () => failing, documentId: (id) => `kb-${id}`, done: 'Indexed the article.', refusal: 'the model refused this article' });

  const article = (articleId: number, catId: number, title: string, statusName: string | undefined, resolution: string, extra: Partial<KbArticle> = {}) =>
    kb.put({ articleId, articleNumber: String(340000 + articleId), catId, articleTitle: title, statusId: 2, ...(statusName ? { statusName } : {}), validationStatusId: 2, levelId: 3, sections: { introduction: `<p>About ${title}.</p>`, resolution: `<ol><li>${resolution}</li></ol>` }, ...extra });

  beforeAll(async () => {
    kb = await WolkenServer.start(creds);
    article(1, 1, 'VPN drops', 'Published', 'Update the VPN client.');
    article(2, 1, 'Wi-Fi slow', 'Published', 'Move closer to the access point.');
    article(3, 1, 'Old proxy', 'Retired', 'No longer applies.');
    article(4, 2, 'Mailbox full', 'Draft', 'Archive old mail.');
    article(5, 2, 'Calendar sync', undefined, 'Re-add the account.'); // Reports no status: always ingested.
    article(6, 3, 'Printer jam', 'Published', 'Open tray B.', { levelId: 9 });
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = agentReply;
    app = await startTestApp({ env: { WORKER_POLL_MS: '200' } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/corpora', { key: 'kb', name: 'KB' });
    const agent = await app.call('POST', '/v2/agents', { key: 'indexer', name: 'indexer', model: { name: 'm' }, tool_configurations: { index: { type: 'document_index', argument_override: { corpus_key: 'kb' } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    if (agent.status !== 201) throw new Error(JSON.stringify(agent.body));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await kb?.close();
  });

  const source = (extra: object = {}) => ({ type: 'wolken_kb', api_endpoint: kb.url, domain: 'acme', client_id: 'cl-acme-01', service_account: 'kb-reader@acme.example', auth_code: AUTH_CODE, refresh_token: REFRESH, level_id: 3, lifecycle_statuses: ['published'], article_url_template: 'https://acme.wolkenservicedesk.com/external/article?articleNumber={article_number}', ...extra });
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
  /** Requests the API answered (a 401 for an expired token, sent again after the refresh, counts once). */
  const answered = (from: number) => kb.requests.slice(from).filter((r) => r.status !== 401).map((r) => r.url);
  const details = (from: number) => answered(from).filter((u) => /\/api\/kb\/articles\/\d+$/.test(u)).map((u) => u.split('/').pop());

  it('exchanges the refresh token, pages through categories and articles with the filters, keeps published articles and those with no status; secrets masked and never in the log', async () => {
    kb.tokenCalls = 5; // The token expires mid-run: a 401 gets one new token and the call again.
    const created = await create('kb-pub', source());
    expect(new ReferenceOpenApi().check('createPipeline', 201, created)).toEqual([]);
    expect(created.source).toMatchObject({ type: 'wolken_kb', api_endpoint: kb.url, domain: 'acme', client_id: 'cl-acme-01', service_account: 'kb-reader@acme.example', auth_code: '****', refresh_token: '****', level_id: 3, update_upper_bound_operator: 'lte', lifecycle_statuses: ['published'] });
    const from = kb.requests.length;
    const tokensFrom = kb.tokenRequests.length;
    const first = await run('kb-pub');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 3, records_processed: 3, records_failed: 0 });
    expect(first.processed).toEqual(['340001', '340002', '340005']);
    // Token exchange: the auth code as the credential, the tenant in `domain`, the refresh-token grant; more than one (a 401 refreshed it).
    const tokens = kb.tokenRequests.slice(tokensFrom);
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens[0]).toEqual({ authorization: AUTH_CODE, domain: 'acme', body: `grant_type=refresh_token&refresh_token=${REFRESH}` });
    // Paging (two per answer, until an empty page) and the reference's level filter sent to the listing.
    const listings = answered(from).filter((u) => u.startsWith('/wolken-secure/api/kb/articles/1/'));
    expect(listings).toEqual(['/wolken-secure/api/kb/articles/1/100/0?levelId=3', '/wolken-secure/api/kb/articles/1/100/2?levelId=3', '/wolken-secure/api/kb/articles/1/100/3?levelId=3']);
    // Details read only for the articles kept (not the retired, the draft, or the level-9 one).
    expect(details(from).sort()).toEqual(['1', '2', '5']);

    const input = got.get('kb-pub/340001')!;
    expect(input).toContain('title: VPN drops');
    expect(input).toContain('Introduction\nAbout VPN drops.');
    expect(input).toContain('Resolution\nUpdate the VPN client.');
    const sessions = (await app.call('GET', '/v2/agents/indexer/sessions?limit=100')).body.sessions as { metadata: Record<string, any> }[];
    const meta = sessions.find((s) => s.metadata.pipeline?.source_record_id === '340001')!.metadata;
    expect(meta.url).toBe('https://acme.wolkenservicedesk.com/external/article?articleNumber=340001');
    expect(meta.wolken).toMatchObject({ article_id: '1', article_number: '340001', category: 'Network', status: 'published', level_id: 3 });
    expect(JSON.stringify((await app.call('GET', '/v2/corpora/kb/documents/kb-340001')).body)).toContain('Update the VPN client.');

    const log = JSON.stringify((await app.call('GET', '/v2/events?limit=1000')).body);
    expect(log).toContain('PipelineCreated');
    for (const secret of [REFRESH, AUTH_CODE, 'wat-1']) expect(log).not.toContain(secret);
  });

  it('incremental: only the article whose updatedTime moved is read again; one gone from the listing leaves the state', async () => {
    article(2, 1, 'Wi-Fi slow', 'Published', 'Use the 5 GHz network.');
    const from = kb.requests.length;
    const second = await run('kb-pub');
    expect(second.run).toMatchObject({ status: 'completed', records_fetched: 1, records_processed: 1 });
    expect(second.processed).toEqual(['340002']);
    expect(details(from)).toEqual(['2']);
    expect(got.get('kb-pub/340002')).toContain('Use the 5 GHz network.');

    const gone = kb.articles.get(5)!;
    kb.articles.delete(5);
    expect((await run('kb-pub')).run).toMatchObject({ status: 'completed', records_fetched: 0 });
    kb.articles.set(5, gone);
    const synced = (await app.call('GET', '/v2/events?category=pipeline&type=PipelineSourceSynced&limit=100')).body.events.filter((e: any) => e.data.key === 'kb-pub');
    expect(synced[synced.length - 1].data.gone).toEqual(['340005']);
  });

  it('full_refresh with no lifecycle filter reads every article of every status, each run', async () => {
    await create('kb-all', source({ lifecycle_statuses: undefined, level_id: undefined }), { sync_mode: 'full_refresh' });
    const all = ['340001', '340002', '340003', '340004', '340005', '340006'];
    expect((await run('kb-all')).processed).toEqual(all);
    expect((await run('kb-all')).processed).toEqual(all);
  });

  it('an article the agent keeps failing is dead-lettered; processing it reads just that article', async () => {
    failing = new Set(['340004']);
    await create('kb-fail', source({ lifecycle_statuses: ['draft', 'retired'], level_id: undefined }));
    const first = await run('kb-fail');
    expect(first.run).toMatchObject({ status: 'completed', records_fetched: 3, records_processed: 2, records_failed: 1 });
    expect(first.processed).toEqual(['340003', '340005']);
    expect(first.events.filter((e) => e.source_record_id === '340004').map((e) => [e.status, e.attempt])).toEqual([['failed', 1], ['failed', 2], ['failed', 3], ['dead_lettered', null]]);
    failing = new Set();
    const from = kb.requests.length;
    const retry = await app.call('POST', '/v2/pipelines/kb-fail/dead_letters/process', {});
    const retried = await until('the retry run to end', async () => {
      const r = (await app.call('GET', `/v2/pipelines/kb-fail/runs/${retry.body.id}`)).body;
      return r.status !== 'running' ? r : undefined;
    });
    expect(retried).toMatchObject({ status: 'completed', trigger_type: 'retry', records_fetched: 1, records_processed: 1 });
    expect(details(from)).toEqual(['4']);
    expect((await app.call('GET', '/v2/pipelines/kb-fail/dead_letters')).body.dead_letters).toEqual([]);
  });

  it('refuses bad fields with a 400 naming each; a wrong refresh token fails the run with Wolken’s answer; a PATCH keeps the secrets', async () => {
    const bad = async (src: object) => {
      const res = await app.call('POST', '/v2/pipelines', { key: 'bad', name: 'bad', source: src, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' } });
      return [res.status, Object.keys(res.body.field_errors ?? {})];
    };
    expect(await bad(source({ api_endpoint: undefined }))).toEqual([400, ['source.api_endpoint']]);
    expect(await bad(source({ domain: 'acme.wolkenservicedesk.com' }))).toEqual([400, ['source.domain']]);
    expect(await bad(source({ client_id: undefined }))).toEqual([400, ['source.client_id']]);
    expect(await bad(source({ refresh_token: undefined }))).toEqual([400, ['source.refresh_token']]);
    expect(await bad(source({ auth_code: '' }))).toEqual([400, ['source.auth_code']]);
    expect(await bad(source({ status_id: 'published' }))).toEqual([400, ['source.status_id']]);
    expect(await bad(source({ update_upper_bound_operator: 'gt' }))).toEqual([400, ['source.update_upper_bound_operator']]);
    expect(await bad(source({ article_url_template: 'https://acme.example/kb' }))).toEqual([400, ['source.article_url_template']]);
    expect(await bad(source({ lifecycle_statuses: ['published', 'archived'] }))).toEqual([400, ['source.lifecycle_statuses[1]']]);
    expect(await bad(source({ auth: { type: 'bearer', token: 'x' } }))).toEqual([400, ['source.auth']]);
    expect((await app.call('GET', '/v2/pipelines/bad')).status).toBe(404);

    await create('kb-wrong', source({ refresh_token: 'not-the-refresh-9c2e' }));
    const failed = await run('kb-wrong');
    expect(failed.run).toMatchObject({ status: 'failed', records_fetched: 0 });
    expect(failed.run.error).toContain('Invalid refresh token');
    expect(JSON.stringify(failed.run)).not.toContain('not-the-refresh-9c2e');
    const patched = await app.call('PATCH', '/v2/pipelines/kb-wrong', { source: { type: 'wolken_kb', lifecycle_statuses: ['draft'], auth_code: '****' } });
    expect(patched.body.source).toMatchObject({ api_endpoint: kb.url, lifecycle_statuses: ['draft'], auth_code: '****', refresh_token: '****' });
    await app.call('PATCH', '/v2/pipelines/kb-wrong', { source: { type: 'wolken_kb', refresh_token: REFRESH } });
    expect((await run('kb-wrong')).processed).toEqual(['340004', '340005']); // The draft, and the article reporting no status.
  });
});
