import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { referenceErrors } from './support/reference-openapi';
import { entryArgs } from './support/service-build';
import { startTestApp, TestApp } from './support/test-app';

type Json = Record<string, any>;

/** Agent traces (issue 44, docs/traces.md): real turns against a scripted model, read back as the reference's traces and spans. */
describe('agent traces', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const turns: Record<string, Json[]> = {};

  const say = async (session: string, text: string) => {
    const res = await app.call('POST', `/v2/agents/tr/sessions/${session}/events`, { messages: [{ type: 'text', content: text }] });
    return res.body.events as Json[];
  };
  const traces = (query = '', headers?: Record<string, string>) => app.call('GET', `/v2/agent_analytics/traces${query}`, undefined, headers);
  const spansOf = async (traceId: string, query = ''): Promise<Json[]> => (await app.call('GET', `/v2/agent_analytics/traces/${traceId}/spans${query}`)).body.spans;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/corpora', { key: 'docs', name: 'Docs' });
    await app.call('POST', '/v2/corpora/docs/documents', { id: 'refunds', type: 'core', document_parts: [{ text: 'Refunds are paid within 14 days of the return.' }] });
    for (const key of ['tr', 'other']) {
      const res = await app.call('POST', '/v2/agents', {
        key,
        name: `Agent ${key}`,
        model: { name: 'm' },
        tool_configurations: { docs: { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'docs', lexical_interpolation: 1 }], limit: 3 } } } },
        first_step_name: 'main',
        steps: { main: { instructions: [{ type: 'inline', template: 'Answer from the docs.' }] } },
      });
      if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    }
    for (const s of ['s1', 's2']) await app.call('POST', '/v2/agents/tr/sessions', { key: s });
    await app.call('POST', '/v2/agents/other/sessions', { key: 'o1' });
    upstream.enqueue({ content: 'Hello there.', usage: { prompt_tokens: 11, completion_tokens: 3 } });
    turns.plain = await say('s1', 'hi');
    upstream.enqueue({ toolCalls: [{ id: 'call_1', name: 'docs', arguments: '{"query":"refunds"}' }], usage: { prompt_tokens: 20, completion_tokens: 5 } }, { content: 'Within 14 days.', usage: { prompt_tokens: 30, completion_tokens: 7 } });
    turns.tool = await say('s1', 'when are refunds paid?');
    upstream.enqueue({ error: { status: 500, message: 'boom' } });
    turns.failed = await say('s2', 'fail please');
    upstream.enqueue({ content: 'Other.', usage: { prompt_tokens: 1, completion_tokens: 1 } });
    await app.call('POST', '/v2/agents/other/sessions/o1/events', { messages: [{ type: 'text', content: 'hi' }] });
    // The projection follows the log: wait until it has every turn.
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      if ((await traces('?limit=100')).body.traces?.length === 4) break;
    }
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('lists a trace per turn, newest first, with its status, duration and tokens', async () => {
    const res = await traces('?agent_key=tr');
    expect(res.status).toBe(200);
    expect(res.body.traces.map((t: Json) => [t.session_key, t.status, t.input_tokens, t.output_tokens])).toEqual([
      ['s2', 'error', 0, 0],
      ['s1', 'ok', 50, 12],
      ['s1', 'ok', 11, 3],
    ]);
    for (const t of res.body.traces) {
      expect(t).toMatchObject({ trace_id: expect.stringMatching(/^[0-9a-f]{32}$/), agent_key: 'tr', started_at: expect.any(String), duration_ms: expect.any(Number) });
      expect((await app.call('GET', `/v2/agent_analytics/traces/${t.trace_id}`)).body).toEqual(t);
    }
  });

  it('a plain turn is the invocation, one model call with the turn tokens, and its output', async () => {
    const [, , plain] = (await traces('?agent_key=tr')).body.traces;
    const spans = await spansOf(plain.trace_id);
    expect(spans.map((s) => s.operation)).toEqual(['invoke_agent', 'chat', 'output']);
    const [invoke, chat, output] = spans;
    expect(invoke).toMatchObject({ parent_span_id: null, trace_id: plain.trace_id, status: 'ok', has_children: true, step_name: 'main', attributes: { model: 'm', input_tokens: 11, output_tokens: 3, agent_name: 'Agent tr', depth: 0 } });
    expect(chat).toMatchObject({ parent_span_id: invoke.span_id, status: 'ok', has_children: false, attributes: { model: 'm', input_tokens: 11, output_tokens: 3 } });
    const answer = turns.plain.find((e) => e.type === 'agent_output')!;
    expect(output).toMatchObject({ parent_span_id: invoke.span_id, event_id: answer.id });
    expect(output.content).toBeUndefined();
    expect((await spansOf(plain.trace_id, '?include_content=true'))[2].content).toEqual({ output_text: 'Hello there.' });
  });

  it('a turn with a tool call has two model calls, the tool under the call that asked for it', async () => {
    const [, tool] = (await traces('?agent_key=tr')).body.traces;
    const spans = await spansOf(tool.trace_id, '?include_content=true');
    expect(spans.map((s) => s.operation)).toEqual(['invoke_agent', 'chat', 'execute_tool', 'chat', 'output']);
    const [invoke, firstChat, exec, secondChat] = spans;
    expect(invoke.attributes).toMatchObject({ input_tokens: 50, output_tokens: 12 });
    // Each model answer records its own tokens: the call that asked for the tool, then the one that answered.
    expect(firstChat.attributes).toMatchObject({ input_tokens: 20, output_tokens: 5 });
    expect(secondChat.attributes).toMatchObject({ input_tokens: 30, output_tokens: 7 });
    expect(firstChat.has_children).toBe(true);
    const called = turns.tool.find((e) => e.type === 'tool_input')!;
    const returned = turns.tool.find((e) => e.type === 'tool_output')!;
    expect(exec).toMatchObject({
      parent_span_id: firstChat.span_id,
      status: 'ok',
      attributes: { tool_name: 'docs', tool_key: 'docs', tool_type: 'corpora_search', tool_call_id: 'call_1', tool_input_event_id: called.id, tool_output_event_id: returned.id, corpus_keys: ['docs'] },
    });
    expect(JSON.parse(exec.content.tool_arguments)).toEqual({ query: 'refunds' });
    expect(exec.content.tool_result).toContain('14 days');
    expect(secondChat.parent_span_id).toBe(invoke.span_id);
    expect(Date.parse(secondChat.started_at)).toBeGreaterThanOrEqual(Date.parse(exec.started_at) + exec.duration_ms);
    const one = await app.call('GET', `/v2/agent_analytics/traces/${tool.trace_id}/spans/${exec.span_id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ ...exec, content: undefined });
    expect((await spansOf(tool.trace_id, `?parent_span_id=${firstChat.span_id}`)).map((s) => s.span_id)).toEqual([exec.span_id]);
    expect((await spansOf(tool.trace_id, '?operation=chat')).length).toBe(2);
  });

  it('a failed model call fails its chat span and the trace', async () => {
    const [failed] = (await traces('?agent_key=tr')).body.traces;
    const spans = await spansOf(failed.trace_id);
    expect(spans.map((s) => [s.operation, s.status])).toEqual([
      ['invoke_agent', 'error'],
      ['chat', 'error'],
    ]);
    expect(spans[0].error_message).toMatch(/^LLM "m"/);
    expect(spans[1].error_message).toBe(spans[0].error_message);
  });

  it('filters and pages as the reference says', async () => {
    const ids = (res: { body: Json }) => res.body.traces.map((t: Json) => t.trace_id);
    const all = ids(await traces('?agent_key=tr'));
    expect(ids(await traces('?agent_key=tr&status=error'))).toEqual([all[0]]);
    expect(ids(await traces('?agent_key=tr&session_key=s1'))).toEqual(all.slice(1));
    expect(ids(await traces('?tool_name=docs'))).toEqual([all[1]]);
    expect(ids(await traces('?agent_key=tr&operation=execute_tool'))).toEqual([all[1]]);
    expect(ids(await traces('?agent_key=tr&error_type=llm_generation_error'))).toEqual([all[0]]);
    expect(ids(await traces(`?agent_key=tr&started_after=${encodeURIComponent('2100-01-01T00:00:00Z')}`))).toEqual([]);
    expect(ids(await traces('?agent_key=tr&max_duration_ms=600000'))).toEqual(all);
    expect((await traces('?agent_key=nobody')).body.traces).toEqual([]);
    const seen: string[] = [];
    let pageKey = '';
    for (let i = 0; i < 5; i++) {
      const page = await traces(`?agent_key=tr&limit=1${pageKey ? `&page_key=${pageKey}` : ''}`);
      seen.push(...ids(page));
      pageKey = page.body.metadata?.page_key ?? '';
      if (!pageKey) break;
    }
    expect(seen).toEqual(all);
    const spans = await spansOf(all[1]);
    const first = await app.call('GET', `/v2/agent_analytics/traces/${all[1]}/spans?limit=3`);
    const rest = await app.call('GET', `/v2/agent_analytics/traces/${all[1]}/spans?limit=3&page_key=${first.body.metadata.page_key}`);
    expect([...first.body.spans, ...rest.body.spans]).toEqual(spans);
    expect(rest.body.metadata.page_key).toBeUndefined();
  });

  it("answers every operation in the reference's shapes (AgentTrace, AgentTraceSpan and its variants, NotFoundError)", async () => {
    const errors: string[] = [];
    const check = async (operationId: string, path: string, status = 200) => {
      const res = await app.call('GET', path);
      expect(res.status).toBe(status);
      errors.push(...referenceErrors(operationId, status, res.body).map((e) => `${operationId} ${path}: ${e}`));
      return res.body;
    };
    const list = await check('listTraces', '/v2/agent_analytics/traces?limit=100');
    for (const t of list.traces) {
      await check('getTrace', `/v2/agent_analytics/traces/${t.trace_id}`);
      const spans = await check('listTraceSpans', `/v2/agent_analytics/traces/${t.trace_id}/spans?include_content=true`);
      await check('listTraceSpans', `/v2/agent_analytics/traces/${t.trace_id}/spans`);
      for (const s of spans.spans) await check('getTraceSpan', `/v2/agent_analytics/traces/${t.trace_id}/spans/${s.span_id}?include_content=true`);
    }
    await check('getTrace', '/v2/agent_analytics/traces/0af7651916cd43dd8448eb211c80319c', 404);
    await check('getTraceSpan', `/v2/agent_analytics/traces/${list.traces[0].trace_id}/spans/b7ad6b7169203331`, 404);
    expect(errors).toEqual([]);
  });

  it('answers 404 for a missing trace or span and 400 with field errors for a bad filter', async () => {
    const missing = await app.call('GET', '/v2/agent_analytics/traces/0af7651916cd43dd8448eb211c80319c');
    expect(missing.status).toBe(404);
    expect(missing.body.messages[0]).toContain('not found');
    const [t] = (await traces('?agent_key=tr')).body.traces;
    expect((await app.call('GET', `/v2/agent_analytics/traces/${t.trace_id}/spans/b7ad6b7169203331`)).status).toBe(404);
    expect((await app.call('GET', '/v2/agent_analytics/traces/0af7651916cd43dd8448eb211c80319c/spans')).status).toBe(404);
    const bad = await traces('?status=done&started_after=yesterday&min_duration_ms=-1');
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['min_duration_ms', 'started_after', 'status']);
    expect(bad.body.request_id).toEqual(expect.any(String));
    expect((await traces('?limit=0')).status).toBe(400);
    expect((await traces('?page_key=nonsense')).body.field_errors).toHaveProperty('page_key');
    expect((await app.call('GET', `/v2/agent_analytics/traces/${t.trace_id}/spans?operation=nap`)).body.field_errors).toHaveProperty('operation');
  });

  it('shows a caller only the traces of agents it may view', async () => {
    const [t] = (await traces('?agent_key=tr')).body.traces;
    // A viewer of another agent: tr's traces do not exist for it.
    const otherViewer = asKey(await createUser(app, 'otherviewer', { agent_roles: [{ agent_key: 'other', role: 'agent_viewer' }] }));
    const theirs = await traces('', otherViewer);
    expect(theirs.status).toBe(200);
    expect(theirs.body.traces.map((x: Json) => x.agent_key)).toEqual(['other']);
    expect((await traces('?agent_key=tr', otherViewer)).body.traces).toEqual([]);
    expect((await app.call('GET', `/v2/agent_analytics/traces/${t.trace_id}`, undefined, otherViewer)).status).toBe(404);
    expect((await app.call('GET', `/v2/agent_analytics/traces/${t.trace_id}/spans`, undefined, otherViewer)).status).toBe(404);
    // A viewer of tr sees them.
    const trViewer = asKey(await createUser(app, 'trviewer', { agent_roles: [{ agent_key: 'tr', role: 'agent_viewer' }] }));
    expect((await traces('', trViewer)).body.traces).toHaveLength(3);
    // Agent users (no view role) and query-only keys read no traces, as the reference's roles say.
    const trUser = asKey(await createUser(app, 'truser', { agent_roles: [{ agent_key: 'tr', role: 'agent_user' }] }));
    expect((await traces('', trUser)).status).toBe(403);
    const queryKey = asKey((await createKey(app, { name: 'query only', api_key_role: 'serving', corpus_keys: ['docs'] })).secret_key);
    expect((await traces('', queryKey)).status).toBe(403);
    expect((await app.call('GET', `/v2/agent_analytics/traces/${t.trace_id}`, undefined, queryKey)).status).toBe(403);
  });

  it("a sub-agent call is a tool span of the parent, and the sub-agent's turn a trace of its own that names its parent", async () => {
    const agent = (key: string, tools: object) => app.call('POST', '/v2/agents', { key, name: key, model: { name: 'm' }, tool_configurations: tools, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: `I am ${key}.` }] } } });
    expect((await agent('expert', {})).status).toBe(201);
    expect((await agent('lead', { ask: { type: 'sub_agent', sub_agent_configuration: { agent_key: 'expert' } } })).status).toBe(201);
    await app.call('POST', '/v2/agents/lead/sessions', { key: 'l1' });
    upstream.enqueue({ toolCalls: [{ id: 'sub_1', name: 'ask', arguments: '{"message":"6 x 7?"}' }] }, { content: '42' }, { content: 'The expert says 42.' });
    const events = (await app.call('POST', '/v2/agents/lead/sessions/l1/events', { messages: [{ type: 'text', content: 'ask the expert' }] })).body.events as Json[];
    const childSession = events.find((e) => e.type === 'tool_output')!.tool_output.session_key;
    let lead: Json[] = [];
    let expert: Json[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && !(lead.length && expert.length); await new Promise((r) => setTimeout(r, 50))) {
      lead = (await traces('?agent_key=lead')).body.traces;
      expert = (await traces('?agent_key=expert')).body.traces;
    }
    expect(expert).toEqual([expect.objectContaining({ agent_key: 'expert', session_key: childSession, status: 'ok' })]);
    const leadSpans = await spansOf(lead[0].trace_id);
    expect(leadSpans.map((s) => s.operation)).toEqual(['invoke_agent', 'chat', 'execute_tool', 'chat', 'output']);
    expect(leadSpans[2].attributes).toMatchObject({ tool_name: 'ask', tool_type: 'sub_agent', tool_call_id: 'sub_1' });
    const [childInvoke] = await spansOf(expert[0].trace_id);
    expect(childInvoke.attributes).toMatchObject({ parent_agent_id: expect.stringMatching(/^agt_/), parent_session_id: 'l1', depth: 1, agent_name: 'expert' });
    expect(leadSpans[0].attributes).toMatchObject({ parent_agent_id: null, parent_session_id: null, depth: 0 });
  });

  it('a rebuild replays the log from its start and gives every trace and span the id it had', async () => {
    const before = (await traces('?limit=100')).body.traces;
    const spansBefore = await spansOf(before[1].trace_id);
    const { stdout } = await promisify(execFile)(process.execPath, [...entryArgs('apps/cli/projections.ts'), 'rebuild', 'agent_traces'], {
      cwd: join(__dirname, '..'),
      env: { ...process.env, DATA_DIR: app.dataDir, LOG_LEVEL: 'silent' },
    });
    expect(JSON.parse(stdout)).toMatchObject({ rebuilt: 'agent_traces', generation: 2 });
    expect((await traces('?limit=100')).body.traces).toEqual(before);
    expect(await spansOf(before[1].trace_id)).toEqual(spansBefore);
  }, 60_000);
});
