import { ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/**
 * The `filter` of list routes (issue 41 #6): a regular expression on RE2's linear-time engine, one helper for
 * every route. `^(\w+\w?)+@` backtracked for 8 s over a 23-character tool name in JavaScript, holding the event loop.
 */
const EVIL = '^(\\w+\\w?)+@';
const LONG_WORD = 'a'.repeat(23);
/** Corpora are matched more cheaply per character (2.5 s at 23 in JavaScript): a longer name for the same stall. */
const LONGER_WORD = 'a'.repeat(24);

/** Every list route that takes `filter` (the sessions and dead letters of an agent or pipeline that need not exist: the filter is read first). */
const LIST_ROUTES = [
  '/v2/agents',
  '/v2/agents/helper/sessions',
  '/v2/instructions',
  '/v2/glossaries',
  '/v2/tools',
  '/v2/tool_servers',
  '/v2/tool_configurations',
  '/v2/pipelines',
  '/v2/pipelines/nothing/dead_letters',
  '/v2/app_clients',
  '/v2/llms',
  '/v2/hallucination_correctors',
  '/v2/generation_presets',
  '/v2/corpora',
  '/v2/rerankers',
  '/v2/encoders',
];

describe('list filters', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let agentViewer: Record<string, string>;
  let queryKey: Record<string, string>;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    const agent = await app.call('POST', '/v2/agents', { key: 'helper', name: 'helper', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Be brief.' }] } } });
    expect(agent.status).toBe(201);
    for (const [name, description] of [
      [LONG_WORD, 'a client tool whose name is one long word'],
      ['mailer', 'ops@example.com sends the mail'],
    ]) {
      expect((await app.call('POST', '/v2/tools', { type: 'client', name, description })).status).toBe(201);
    }
    for (const [key, name] of [
      ['long', LONGER_WORD],
      ['team', 'team@corp'],
    ]) {
      expect((await app.call('POST', '/v2/corpora', { key, name })).status).toBe(201);
    }
    agentViewer = asKey(await createUser(app, 'viewer', { agent_roles: [{ agent_key: 'helper', role: 'agent_viewer' }] }));
    queryKey = asKey((await createKey(app, { name: 'query only', api_key_role: 'serving', corpus_keys: ['long', 'team'] })).secret_key);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  /** Calls `path` while a second client asks /health back to back; the slowest /health answer meanwhile. */
  async function withHealthPings(path: string, headers: Record<string, string>) {
    let done = false;
    let slowestHealthMs = 0;
    const pinger = (async () => {
      while (!done) {
        const started = performance.now();
        const res = await fetch(`${app.url}/health`);
        await res.arrayBuffer();
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
      }
    })();
    // Let the pinger's first request be in flight before the filter arrives.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const res = await app.call('GET', path, undefined, headers);
    done = true;
    await pinger;
    return { res, slowestHealthMs };
  }

  it("answers an agent viewer's catastrophic-backtracking filter on /v2/tools correctly, /health answering meanwhile", async () => {
    const { res, slowestHealthMs } = await withHealthPings(`/v2/tools?limit=100&filter=${encodeURIComponent(EVIL)}`, agentViewer);
    expect(res.status).toBe(200);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(['mailer']);
    // A generous sanity bound on a shared machine; the bench measures (docs/benchmarks/2026-12-02-issue-41-agent-attacks.md).
    expect(slowestHealthMs).toBeLessThan(3_000);
    const ordinary = await app.call('GET', '/v2/tools?limit=100&filter=^a%2B$', undefined, agentViewer);
    expect(ordinary.body.tools.map((t: { name: string }) => t.name)).toEqual([LONG_WORD]);
  });

  it("answers a query-only key's catastrophic-backtracking filter on /v2/corpora correctly, /health answering meanwhile", async () => {
    const { res, slowestHealthMs } = await withHealthPings(`/v2/corpora?filter=${encodeURIComponent(EVIL)}`, queryKey);
    expect(res.status).toBe(200);
    expect(res.body.corpora.map((c: { key: string }) => c.key)).toEqual(['team']);
    expect(slowestHealthMs).toBeLessThan(3_000);
    const ordinary = await app.call('GET', '/v2/corpora?filter=^team', undefined, queryKey);
    expect(ordinary.body.corpora.map((c: { key: string }) => c.key)).toEqual(['team']);
  });

  it('answers 400 with a field error on filter, on every list route, for a pattern RE2 does not take', async () => {
    for (const filter of ['(', '(?=a)b', '(a)\\1', 'a'.repeat(1001)]) {
      for (const path of LIST_ROUTES) {
        const res = await app.call('GET', `${path}?filter=${encodeURIComponent(filter)}`);
        expect({ path, filter: filter.slice(0, 10), status: res.status }).toEqual({ path, filter: filter.slice(0, 10), status: 400 });
        expect(res.body).toMatchObject({ messages: [expect.stringContaining('filter')], request_id: expect.any(String), field_errors: { filter: expect.stringContaining('invalid regular expression') } });
      }
    }
  });

  it('answers 400 with a field error on page_key, on every paged list route, for a key no list returned (it restarted at the first page)', async () => {
    for (const path of ['/v2/corpora', '/v2/agents', '/v2/agents/helper/sessions', '/v2/tools', '/v2/api_keys', '/v2/users', '/v2/llms']) {
      const res = await app.call('GET', `${path}?limit=1&page_key=not-a-key`);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body).toMatchObject({ request_id: expect.any(String), field_errors: { page_key: 'unknown page key' } });
    }
  });

  it('filters every list route by the same ordinary pattern as before', async () => {
    for (const path of LIST_ROUTES) {
      const res = await app.call('GET', `${path}?filter=${encodeURIComponent('^zz-no-such-name$')}`);
      expect({ path, status: res.status }).toEqual({ path, status: path.includes('/nothing/') ? 404 : 200 });
      if (res.status === 200) {
        const lists = Object.values(res.body as Record<string, unknown>).filter(Array.isArray);
        expect({ path, lists }).toEqual({ path, lists: [[]] });
      }
    }
  });

  it("refuses a tool schema's pattern that needs backtracking, as the filter does, and creates nothing", async () => {
    const res = await app.call('POST', '/v2/tools', { type: 'client', name: 'lookahead', description: 'd', input_schema: { type: 'object', properties: { q: { type: 'string', pattern: '^(?!admin).*$' } } } });
    expect(res.status).toBe(400);
    expect(res.body.field_errors).toEqual({ input_schema: 'not a JSON Schema' });
    expect((await app.call('GET', '/v2/tools?filter=^lookahead$')).body.tools).toEqual([]);
    const plain = await app.call('POST', '/v2/tools', { type: 'client', name: 'plain_pattern', description: 'd', input_schema: { type: 'object', properties: { q: { type: 'string', pattern: '^[a-z]+$' } } } });
    expect(plain.status).toBe(201);
  });
});
