import { ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { referenceErrors, schemaErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

type Json = Record<string, any>;
const MINUTE = 60_000;

/** The reference's CustomerMetrics (issue 44, docs/metrics.md): real traffic, read back as metric series. */
describe('metrics API', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  // A window of whole minutes around the traffic: 20 one-minute bins ending a few minutes from now.
  const end = new Date(Math.ceil((Date.now() + 5 * MINUTE) / MINUTE) * MINUTE);
  const start = new Date(end.getTime() - 20 * MINUTE);
  const window = `start=${start.toISOString()}&end=${end.toISOString()}`;

  const metric = async (name: string, query = '', headers?: Record<string, string>) => {
    const res = await app.call('GET', `/v2/metrics/${name}?${window}${query}`, undefined, headers);
    if (res.status === 200) expect(referenceErrors('getMetric', 200, res.body)).toEqual([]);
    return res;
  };
  const total = async (name: string, query = '') => ((await metric(name, query)).body.points as Json[]).reduce((n, p) => n + p.value, 0);

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    for (const key of ['docs', 'other']) await app.call('POST', '/v2/corpora', { key, name: key });
    await app.call('POST', '/v2/corpora/docs/documents', { id: 'refunds', type: 'core', document_parts: [{ text: 'Refunds are paid within 14 days of the return.' }] });
    for (const key of ['docs', 'docs', 'other']) {
      const asked = await app.call('POST', '/v2/query', { query: 'refunds', search: { corpora: [{ corpus_key: key }] }, save_history: true });
      if (asked.status !== 200) throw new Error(JSON.stringify(asked.body));
    }
    for (const key of ['a', 'b']) {
      await app.call('POST', '/v2/agents', {
        key,
        name: `Agent ${key}`,
        model: { name: 'm' },
        tool_configurations: { docs: { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'docs', lexical_interpolation: 1 }], limit: 3 } } } },
        first_step_name: 'main',
        steps: { main: { instructions: [{ type: 'inline', template: 'Answer from the docs.' }] } },
      });
      await app.call('POST', `/v2/agents/${key}/sessions`, { key: 's' });
    }
    const say = (agent: string, text: string) => app.call('POST', `/v2/agents/${agent}/sessions/s/events`, { messages: [{ type: 'text', content: text }] });
    upstream.enqueue({ content: 'Hello.', usage: { prompt_tokens: 11, completion_tokens: 3 } });
    await say('a', 'hi');
    upstream.enqueue({ toolCalls: [{ id: 'call_1', name: 'docs', arguments: '{"query":"refunds"}' }], usage: { prompt_tokens: 20, completion_tokens: 5 } }, { content: 'Within 14 days.', usage: { prompt_tokens: 30, completion_tokens: 7 } });
    await say('a', 'when are refunds paid?');
    upstream.enqueue({ error: { status: 500, message: 'boom' } });
    await say('a', 'fail please');
    upstream.enqueue({ content: 'B.', usage: { prompt_tokens: 2, completion_tokens: 1 } });
    await say('b', 'hi');
    upstream.enqueue({ content: 'Done.', usage: { prompt_tokens: 4, completion_tokens: 2 } });
    expect((await app.call('POST', '/v2/llms/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    // The projection follows the log: wait until it has every turn and every model call's usage.
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const recorded = (await app.call('GET', '/v2/audit?category=llmusage&limit=1000')).body.entries.length;
      if ((await total('agent.turn.count')) === 4 && (await total('llm.chat_completion.count')) === recorded) break;
    }
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('lists the catalogue in the reference shape, filtered by category', async () => {
    const all = await app.call('GET', '/v2/metrics');
    expect(all.status).toBe(200);
    expect(referenceErrors('listMetrics', 200, all.body)).toEqual([]);
    expect(all.body.metrics.map((m: Json) => m.name)).toEqual(expect.arrayContaining(['query.count', 'query.latency_ms', 'agent.turn.count', 'agent.turn.failed_count', 'agent.tool_call.count', 'llm.chat_completion.input_tokens', 'corpus.document.indexed_count', 'pipeline.run.failed_count']));
    expect(all.body.metrics.find((m: Json) => m.name === 'agent.turn.count')).toMatchObject({ type: 'counter', category: 'agent', labels: ['agent_keys'] });
    expect(all.body.metrics.find((m: Json) => m.name === 'query.latency_ms').bins[0]).toEqual({ label: 'lt_50', range_min: 0, range_max: 50 });
    const some = await app.call('GET', '/v2/metrics?category=agent&category=llm');
    expect(new Set(some.body.metrics.map((m: Json) => m.category))).toEqual(new Set(['agent', 'llm']));
  });

  it('counts agent turns, failures, tokens and tool calls, in total and per agent', async () => {
    const turns = await metric('agent.turn.count', '&max_bins=20');
    expect(turns.status).toBe(200);
    expect(turns.body).toMatchObject({ type: 'counter', metric_name: 'agent.turn.count', labels: {}, bin_size_seconds: 60 });
    expect(turns.body.points).toHaveLength(20);
    expect(turns.body.points[0].bin_start).toBe(start.toISOString());
    expect(turns.body.points[19].bin_start).toBe(new Date(end.getTime() - MINUTE).toISOString());
    expect(turns.body.points.reduce((n: number, p: Json) => n + p.value, 0)).toBe(4);
    const onlyA = await metric('agent.turn.count', '&labels[agent_keys]=a');
    expect(onlyA.body.labels).toEqual({ agent_keys: ['a'] });
    expect(onlyA.body.points.reduce((n: number, p: Json) => n + p.value, 0)).toBe(3);
    expect(await total('agent.turn.count', '&labels[agent_keys]=a&labels[agent_keys]=b')).toBe(4);
    expect(await total('agent.turn.failed_count', '&labels[agent_keys]=a')).toBe(1);
    expect(await total('agent.turn.failed_count', '&labels[agent_keys]=b')).toBe(0);
    expect(await total('agent.turn.input_tokens', '&labels[agent_keys]=a')).toBe(61);
    expect(await total('agent.turn.output_tokens')).toBe(16);
    expect(await total('agent.tool_call.count', '&labels[agent_keys]=a')).toBe(1);
    expect(await total('agent.tool_call.error_count')).toBe(0);
  });

  it('re-bins to max_bins with a wider bin, keeping the totals', async () => {
    const res = await metric('agent.turn.count', '&max_bins=3');
    expect(res.body.bin_size_seconds).toBe(420);
    expect(res.body.points).toHaveLength(3);
    expect(res.body.points[2].bin_start).toBe(new Date(end.getTime() - 7 * MINUTE).toISOString());
    expect(res.body.points.reduce((n: number, p: Json) => n + p.value, 0)).toBe(4);
  });

  it('counts queries and their latency per corpus, documents indexed and chat completions', async () => {
    expect(await total('query.count')).toBe(3);
    expect(await total('query.count', '&labels[corpus_keys]=docs')).toBe(2);
    const latency = await metric('query.latency_ms', '&labels[corpus_keys]=other');
    expect(latency.body.type).toBe('distribution');
    expect(latency.body.points.flatMap((p: Json) => p.bins).reduce((n: number, b: Json) => n + b.value, 0)).toBe(1);
    expect(await total('corpus.document.indexed_count', '&labels[corpus_keys]=docs')).toBe(1);
    expect(await total('corpus.document.indexed_count', '&labels[corpus_keys]=other')).toBe(0);
    // What the log recorded for model m (the completion asked directly and the agents' model calls), as it recorded it.
    const usage = (await app.call('GET', '/v2/audit?category=llmusage&limit=1000')).body.entries.map((e: Json) => e.data).filter((d: Json) => d.llmName === 'm');
    // Every answered model call is recorded once, both calls of the turn with a tool call too (its second call was
    // dropped as a duplicate of the first before: 37 input tokens recorded of 67).
    expect(usage.filter((d: Json) => d.outcome === 'completed').map((d: Json) => d.input).sort((x: number, y: number) => x - y)).toEqual([2, 4, 11, 20, 30]);
    expect(await total('llm.chat_completion.count', '&labels[llm_names]=m')).toBe(usage.length);
    expect(await total('llm.chat_completion.input_tokens')).toBe(usage.reduce((n: number, d: Json) => n + d.input, 0));
    expect(await total('llm.chat_completion.count', '&labels[llm_names]=other')).toBe(0);
  });

  it('gives the same series after a rebuild from the log, as a deployment adding the projection to an old log does', async () => {
    const names = ['agent.turn.count', 'agent.turn.input_tokens', 'query.count', 'query.latency_ms', 'llm.chat_completion.count', 'corpus.document.indexed_count'];
    const before = await Promise.all(names.map(async (n) => (await metric(n, '&max_bins=20')).body));
    await app.started.infra.runtime!.rebuild('metrics');
    const after = await Promise.all(names.map(async (n) => (await metric(n, '&max_bins=20')).body));
    expect(after).toEqual(before);
    expect(after[0].points.reduce((n: number, p: Json) => n + p.value, 0)).toBe(4);
  });

  it('refuses bad parameters with 400 and field errors, an unknown metric with 404', async () => {
    const old = new Date(Date.now() - 31 * 24 * 60 * MINUTE).toISOString();
    const bad: [string, string][] = [
      ['', 'start'],
      [`start=${start.toISOString()}`, 'end'],
      [`start=yesterday&end=${end.toISOString()}`, 'start'],
      [`start=${end.toISOString()}&end=${start.toISOString()}`, 'end'],
      [`start=${old}&end=${end.toISOString()}`, 'start'],
      [`${window}&max_bins=0`, 'max_bins'],
      [`${window}&max_bins=1001`, 'max_bins'],
      [`${window}&max_bins=ten`, 'max_bins'],
      [`${window}&labels[corpus_keys]=docs`, 'labels[corpus_keys]'],
      [`${window}&labels[agent_keys]=`, 'labels[agent_keys]'],
      [`${window}&${Array.from({ length: 11 }, (_, i) => `labels[agent_keys]=k${i}`).join('&')}`, 'labels[agent_keys]'],
      // Nested or unclosed names filter nothing: refused, not ignored.
      [`${window}&labels[agent_keys][x][y]=a`, 'labels[agent_keys][x][y]'],
      [`${window}&labels[agent_keys=a`, 'labels[agent_keys'],
    ];
    for (const [query, field] of bad) {
      const res = await app.call('GET', `/v2/metrics/agent.turn.count?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.body.field_errors).toHaveProperty([field]);
      expect(schemaErrors('BadRequestError', res.body)).toEqual([]);
    }
    const missing = await app.call('GET', `/v2/metrics/agent.turn.nope?${window}`);
    expect(missing.status).toBe(404);
    expect(schemaErrors('NotFoundError', missing.body)).toEqual([]);
  });

  it('only the account-wide viewer, administrator and owner read metrics: their totals span every corpus and agent', async () => {
    const viewer = await createUser(app, 'metrics-viewer', { api_roles: ['viewer'] });
    expect((await metric('agent.turn.count', '', asKey(viewer))).status).toBe(200);
    expect((await app.call('GET', '/v2/metrics', undefined, asKey(viewer))).status).toBe(200);
    const narrow = {
      corpusViewer: await createUser(app, 'metrics-corpus', { corpus_roles: [{ corpus_key: 'docs', role: 'viewer' }] }),
      agentViewer: await createUser(app, 'metrics-agent', { agent_roles: [{ agent_key: 'a', role: 'agent_viewer' }] }),
      corpusViewerRole: await createUser(app, 'metrics-corpora', { api_roles: ['corpus_viewer', 'agent_viewer'] }),
      queryKey: (await createKey(app, { name: 'q', api_key_role: 'serving', corpus_keys: ['docs'] })).secret_key,
    };
    for (const [who, key] of Object.entries(narrow)) {
      for (const path of ['/v2/metrics', `/v2/metrics/agent.turn.count?${window}&labels[agent_keys]=a`]) {
        const res = await app.call('GET', path, undefined, asKey(key));
        expect([who, path, res.status, JSON.stringify(res.body)]).toEqual([who, path, 403, expect.not.stringContaining('"points"')]);
      }
    }
  });
});
