import { ScriptedOpenAIServer } from '@lib/testing';
import { asBearer, asKey, createClient, createUser, endUserTokenFor } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Json = Record<string, any>;

/**
 * Memory blocks (issue 46, docs/agents.md "Memory"): the agent edits its blocks with memory_replace/memory_append
 * through the scripted model, the next session's prompt holds them, history names the session and turn, reverts
 * restore them, end users' blocks stay theirs, and every bad input is refused field by field with nothing stored.
 */
describe('agent memory blocks', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let viewer: Record<string, string>;
  const memory = {
    blocks: [
      { key: 'persona', scope: 'agent', description: 'Who you are', read_only: true, initial_value: 'I am Coach, a patient tutor.' },
      { key: 'facts', scope: 'agent', description: 'What you learnt about the users', limit_chars: 60 },
      { key: 'prefs', scope: 'end_user', description: "This user's preferences", limit_chars: 100 },
      { key: 'scratch', scope: 'session', description: 'Notes for this conversation' },
    ],
  };
  const coach = {
    key: 'coach',
    name: 'Coach',
    model: { name: 'm' },
    tool_configurations: {},
    memory,
    first_step_name: 'main',
    steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'You coach. Known facts: [${memory.facts}]' }] } },
  };
  const say = (session: string, text: string, headers?: Record<string, string>, base = '/v2/agents/coach/sessions') => app.call('POST', `${base}/${session}/events`, { messages: [{ type: 'text', content: text }] }, headers);
  const systemOf = (request: Json): string => request.messages[0].content;
  const callsSince = (before: number): Json[] => upstream.chatRequests().slice(before).map((r) => r.body as Json);
  const call = (id: string, name: string, args: Json) => ({ id, name, arguments: JSON.stringify(args) });
  const block = async (name: string) => (await app.call('GET', `/v2/agents/coach/memory/${name}`)).body;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    const created = await app.call('POST', '/v2/agents', coach);
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    viewer = asKey(await createUser(app, 'memviewer', { agent_roles: [{ agent_key: 'coach', role: 'agent_viewer' }] }));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('refuses a bad memory configuration field by field, and stores nothing', async () => {
    const blocks = [
      { key: 'Bad Key', scope: 'agent' },
      { key: 'ok', scope: 'galaxy' },
      { key: 'big', scope: 'agent', limit_chars: 20_001 },
      { key: 'small', scope: 'agent', limit_chars: 5, initial_value: 'too long' },
      { key: 'ok2', scope: 'agent', colour: 'red' },
      { key: 'ok2', scope: 'session' },
    ];
    const res = await app.call('POST', '/v2/agents', { ...coach, key: 'broken', memory: { blocks } });
    expect(res.status).toBe(400);
    expect(res.body.field_errors).toEqual({
      'memory.blocks[0].key': expect.stringContaining('lower-case'),
      'memory.blocks[1].scope': 'must be agent, end_user or session',
      'memory.blocks[2].limit_chars': 'must be an integer from 1 to 20000',
      'memory.blocks[3].initial_value': expect.stringContaining('over the block'),
      'memory.blocks[4].colour': expect.stringContaining('is not a field'),
      'memory.blocks[5].key': expect.stringContaining('unique'),
    });
    expect(res.body.request_id).toBeTruthy();
    expect((await app.call('GET', '/v2/agents/broken')).status).toBe(404);
    const many = await app.call('POST', '/v2/agents', { ...coach, key: 'broken', memory: { blocks: Array.from({ length: 21 }, (_, i) => ({ key: `b${i}`, scope: 'agent' })) } });
    expect([many.status, many.body.field_errors]).toEqual([400, { 'memory.blocks': 'at most 20 blocks' }]);
    const named = await app.call('POST', '/v2/agents', { ...coach, key: 'broken', tool_configurations: { memory_append: { type: 'scratch_pad' } } });
    expect(named.body.field_errors).toEqual({ 'tool_configurations.memory_append': expect.stringContaining('built-in') });
    const patched = await app.call('PATCH', '/v2/agents/coach', { memory: { blocks: [{ key: 'x', scope: 'agent', limit_chars: 0 }] } });
    expect([patched.status, patched.body.field_errors]).toEqual([400, { 'memory.blocks[0].limit_chars': 'must be an integer from 1 to 20000' }]);
    expect((await app.call('GET', '/v2/agents/coach')).body.memory).toEqual(memory);
  });

  it('offers the memory tools for writable blocks, applies a tool call, and the next session’s prompt holds the block', async () => {
    await app.call('POST', '/v2/agents/coach/sessions', { key: 's1' });
    upstream.enqueue({ toolCalls: [call('c1', 'memory_append', { block: 'facts', text: 'Ada likes tea.' }), call('c2', 'memory_append', { block: 'scratch', text: 'asked about tea' })] }, { content: 'Noted.' });
    const before = upstream.chatRequests().length;
    const res = await say('s1', 'Remember that I like tea. I am Ada.');
    expect(res.status).toBe(201);
    expect(res.body.events.map((e: Json) => e.type)).toEqual(['input_message', 'tool_input', 'tool_input', 'tool_output', 'tool_output', 'agent_output']);
    expect(res.body.events.filter((e: Json) => e.type === 'tool_output').every((e: Json) => !e.error)).toBe(true);
    const [first, second] = callsSince(before);
    const tools = first.tools.map((t: Json) => t.function.name);
    expect(tools).toEqual(['memory_replace', 'memory_append']);
    // Writable blocks in scope only: not the read-only persona, not an end user's block (no end user here).
    expect(first.tools[1].function.parameters.properties.block.enum).toEqual(['facts', 'scratch']);
    expect(systemOf(first)).toContain('You coach. Known facts: []');
    expect(systemOf(first)).toContain('<memory_block key="persona" scope="agent" chars="28/2000" read_only="true">');
    expect(systemOf(first)).toContain('I am Coach, a patient tutor.');
    expect(systemOf(first)).not.toContain('key="prefs"');
    // Within the turn, the next call already shows the edit.
    expect(systemOf(second)).toContain('Known facts: [Ada likes tea.]');

    expect(await block('facts')).toMatchObject({ key: 'facts', scope: 'agent', value: 'Ada likes tea.', chars: 14, limit_chars: 60, read_only: false, revision: 1 });
    await app.call('POST', '/v2/agents/coach/sessions', { key: 's2' });
    upstream.enqueue({ content: 'Tea, of course.' });
    const next = upstream.chatRequests().length;
    await say('s2', 'What do I like?');
    const [other] = callsSince(next);
    expect(systemOf(other)).toContain('Known facts: [Ada likes tea.]');
    expect(systemOf(other)).toContain('<memory_block key="facts" scope="agent" chars="14/60">');
    // A session's own block stays in that session.
    expect(systemOf(other)).not.toContain('asked about tea');
    expect((await app.call('GET', '/v2/agents/coach/sessions/s1/memory')).body.blocks).toEqual([expect.objectContaining({ key: 'scratch', value: 'asked about tea', revision: 1 })]);
    expect((await app.call('GET', '/v2/agents/coach/sessions/s2/memory')).body.blocks).toEqual([expect.objectContaining({ key: 'scratch', value: '', revision: 0 })]);
  });

  it('names the session, turn and tool call of each change in the history', async () => {
    const events = (await app.call('GET', '/v2/agents/coach/sessions/s1/events?limit=100')).body.events as Json[];
    const input = events.find((e) => e.type === 'tool_input' && e.tool_input?.block === 'facts')!;
    const history = await app.call('GET', '/v2/agents/coach/memory/facts/history');
    expect(history.status).toBe(200);
    expect(history.body.changes).toEqual([{ revision: 1, operation: 'append', value: 'Ada likes tea.', changed_at: expect.any(String), changed_by: { session_key: 's1', turn_id: expect.any(String), event_id: input.id } }]);
    const changes = (await app.call('GET', '/v2/agents/coach/sessions/s1/memory_changes')).body.changes;
    expect(changes).toEqual([expect.objectContaining({ block: 'facts', scope: 'agent', revision: 1, value: 'Ada likes tea.' })]);
  });

  it('gives the model a tool error for a bad edit, and the turn goes on', async () => {
    await app.call('POST', '/v2/agents/coach/sessions', { key: 's3' });
    upstream.enqueue(
      {
        toolCalls: [
          call('b1', 'memory_replace', { block: 'persona', old_text: 'patient', new_text: 'impatient' }),
          call('b2', 'memory_replace', { block: 'facts', old_text: 'coffee', new_text: 'cocoa' }),
          call('b3', 'memory_append', { block: 'facts', text: 'x'.repeat(60) }),
          call('b4', 'memory_append', { block: 'nope', text: 'y' }),
        ],
      },
      { content: 'I could not change that.' },
    );
    const res = await say('s3', 'Change yourself.');
    expect(res.status).toBe(201);
    const outputs = res.body.events.filter((e: Json) => e.type === 'tool_output').map((e: Json) => [e.tool_call_id, e.error, e.tool_output.error]);
    expect(outputs).toEqual(
      expect.arrayContaining([
        ['b1', true, 'memory block persona is read-only'],
        ['b2', true, 'old_text is not in memory block facts'],
        ['b3', true, expect.stringContaining('over its limit of 60')],
        ['b4', true, expect.stringContaining('there is no memory block nope')],
      ]),
    );
    expect(res.body.events.at(-1)).toMatchObject({ type: 'agent_output', content: 'I could not change that.' });
    expect(await block('facts')).toMatchObject({ value: 'Ada likes tea.', revision: 1 });
    expect(await block('persona')).toMatchObject({ value: 'I am Coach, a patient tutor.', revision: 0 });
  });

  it('lets an operator put and revert a block; refuses bad bodies field by field and a viewer, storing nothing', async () => {
    const put = await app.call('PUT', '/v2/agents/coach/memory/facts', { value: 'Ada likes green tea.' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ value: 'Ada likes green tea.', revision: 2, updated_by: { actor: { type: expect.any(String), id: expect.any(String) } } });
    for (const [body, field] of [
      [{ value: 'z'.repeat(61) }, 'value'],
      [{ value: 7 }, 'value'],
      [{ value: 'ok', extra: true }, 'extra'],
    ] as const) {
      const bad = await app.call('PUT', '/v2/agents/coach/memory/facts', body);
      expect([bad.status, Object.keys(bad.body.field_errors ?? {})]).toEqual([400, [field]]);
      expect(bad.body.messages.length).toBeGreaterThan(0);
    }
    expect((await app.call('PUT', '/v2/agents/coach/memory/prefs', { value: 'x' })).status).toBe(404);
    expect((await app.call('PUT', '/v2/agents/coach/memory/unknown', { value: 'x' })).status).toBe(404);
    expect((await app.call('PUT', '/v2/agents/coach/memory/facts', { value: 'viewer was here' }, viewer)).status).toBe(403);
    expect((await app.call('GET', '/v2/agents/coach/memory/facts', undefined, viewer)).status).toBe(200);
    const badRevert = await app.call('POST', '/v2/agents/coach/memory/facts/revert', { revision: 9 });
    expect([badRevert.status, Object.keys(badRevert.body.field_errors)]).toEqual([400, ['revision']]);
    expect((await app.call('GET', '/v2/agents/coach/memory/facts/history')).body.changes).toHaveLength(2);

    const reverted = await app.call('POST', '/v2/agents/coach/memory/facts/revert', { revision: 1 });
    expect(reverted.status).toBe(200);
    expect(reverted.body).toMatchObject({ value: 'Ada likes tea.', revision: 3 });
    const page = await app.call('GET', '/v2/agents/coach/memory/facts/history?limit=2');
    expect(page.body.changes.map((c: Json) => [c.revision, c.operation, c.reverted_to])).toEqual([
      [3, 'revert', 1],
      [2, 'put', undefined],
    ]);
    const rest = await app.call('GET', `/v2/agents/coach/memory/facts/history?limit=2&page_key=${page.body.metadata.page_key}`);
    expect(rest.body.changes.map((c: Json) => c.revision)).toEqual([1]);
    expect((await app.call('GET', '/v2/agents/coach/memory')).body.blocks.map((b: Json) => [b.key, b.value])).toEqual([
      ['persona', 'I am Coach, a patient tutor.'],
      ['facts', 'Ada likes tea.'],
    ]);
  });

  it('reverts what one session taught in one call; refuses (409, nothing written) when the block changed since, unless forced', async () => {
    await app.call('POST', '/v2/agents/coach/sessions', { key: 's4' });
    upstream.enqueue({ toolCalls: [call('t1', 'memory_replace', { block: 'facts', old_text: 'tea', new_text: 'rum' })] }, { content: 'Done.' });
    await say('s4', 'Actually I like rum.');
    expect(await block('facts')).toMatchObject({ value: 'Ada likes rum.', revision: 4 });
    await app.call('PUT', '/v2/agents/coach/memory/facts', { value: 'Ada likes rum. Bob likes milk.' });
    const refused = await app.call('POST', '/v2/agents/coach/sessions/s4/memory_changes/revert', {});
    expect(refused.status).toBe(409);
    expect(refused.body.messages[0]).toContain('facts');
    expect(await block('facts')).toMatchObject({ value: 'Ada likes rum. Bob likes milk.', revision: 5 });
    const forced = await app.call('POST', '/v2/agents/coach/sessions/s4/memory_changes/revert', { force: true });
    expect(forced.status).toBe(200);
    expect(forced.body.reverted).toEqual([{ block: 'facts', scope: 'agent', revision: 6, reverted_to: 3, value: 'Ada likes tea.' }]);
    expect(await block('facts')).toMatchObject({ value: 'Ada likes tea.', revision: 6 });
    // Nothing left to undo: a second call writes nothing.
    expect((await app.call('POST', '/v2/agents/coach/sessions/s4/memory_changes/revert', {})).body.reverted).toEqual([]);
    expect((await block('facts')).revision).toBe(6);
  });

  it('keeps each end user’s blocks to that end user’s sessions (aliases and end-user tokens)', async () => {
    await app.call('POST', '/v2/agent_aliases', { key: 'desk', name: 'Desk', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'coach' } }] } });
    const client = await createClient(app, 'memory app', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'coach', role: 'agent_user' }] });
    const alice = asBearer(await endUserTokenFor(app, client, 'alice'));
    const bob = asBearer(await endUserTokenFor(app, client, 'bob'));
    const base = '/v2/agent_aliases/desk/end_user_sessions';
    for (const [who, h] of [['a', alice], ['b', bob]] as const) expect((await app.call('POST', base, { key: `chat-${who}` }, h)).status).toBe(201);

    upstream.enqueue({ toolCalls: [call('e1', 'memory_append', { block: 'prefs', text: 'Alice wants answers by email.' })] }, { content: 'Will do.' });
    const before = upstream.chatRequests().length;
    expect((await say('chat-a', 'Email me from now on.', alice, base)).status).toBe(201);
    expect(callsSince(before)[0].tools[1].function.parameters.properties.block.enum).toEqual(['facts', 'prefs', 'scratch']);

    upstream.enqueue({ content: 'Hello Bob.' });
    const bobCall = upstream.chatRequests().length;
    await say('chat-b', 'Hi', bob, base);
    expect(systemOf(callsSince(bobCall)[0])).toContain('<memory_block key="prefs" scope="end_user" chars="0/100">');
    expect(JSON.stringify(callsSince(bobCall))).not.toContain('Alice wants');

    expect((await app.call('POST', base, { key: 'chat-a2' }, alice)).status).toBe(201);
    upstream.enqueue({ content: 'By email.' });
    const aliceCall = upstream.chatRequests().length;
    await say('chat-a2', 'How do I get answers?', alice, base);
    expect(systemOf(callsSince(aliceCall)[0])).toContain('Alice wants answers by email.');

    // Each end user reads its own blocks only; another's session is absent.
    const mine = await app.call('GET', `${base}/chat-a/memory`, undefined, alice);
    expect(mine.status).toBe(200);
    expect(mine.body.blocks).toEqual([expect.objectContaining({ key: 'prefs', value: 'Alice wants answers by email.' })]);
    expect((await app.call('GET', `${base}/chat-b/memory`, undefined, bob)).body.blocks).toEqual([expect.objectContaining({ key: 'prefs', value: '' })]);
    expect((await app.call('GET', `${base}/chat-b/memory`, undefined, alice)).status).toBe(404);
    // An end user's token reaches no operator route.
    expect([403, 404]).toContain((await app.call('GET', '/v2/agents/coach/memory', undefined, alice)).status);

    // The operator reads and writes an end user's block by its owner (the session's end_user).
    const owner = encodeURIComponent(`${client.id}/alice`);
    const op = await app.call('GET', `/v2/agents/coach/end_users/${owner}/memory/prefs`);
    expect(op.body).toMatchObject({ value: 'Alice wants answers by email.', end_user: `${client.id}/alice`, revision: 1 });
    expect((await app.call('GET', `/v2/agents/coach/end_users/${owner}/memory/prefs/history`)).body.changes[0].changed_by).toMatchObject({ session_key: expect.stringMatching(/^eu-[0-9a-f]{16}-chat-a$/) });
    expect((await app.call('PUT', `/v2/agents/coach/end_users/${owner}/memory/prefs`, { value: 'Alice: phone only.' })).body).toMatchObject({ value: 'Alice: phone only.', revision: 2 });
    expect((await app.call('GET', `${base}/chat-b/memory`, undefined, bob)).body.blocks[0].value).toBe('');
    expect((await app.call('GET', `/v2/agents/coach/end_users/${owner}/memory/facts`)).status).toBe(404);
  });

  it('takes concurrent writes of one block one after the other: each lands with its own revision', async () => {
    const before = (await block('facts')).revision;
    const puts = await Promise.all(Array.from({ length: 8 }, (_, i) => app.call('PUT', '/v2/agents/coach/memory/facts', { value: `writer ${i}` })));
    expect(puts.map((p) => p.status)).toEqual(Array(8).fill(200));
    const history = (await app.call('GET', '/v2/agents/coach/memory/facts/history?limit=8')).body.changes as Json[];
    expect(history.map((c) => c.revision)).toEqual(Array.from({ length: 8 }, (_, i) => before + 8 - i));
    expect(history.map((c) => c.value).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `writer ${i}`));
    await app.call('POST', '/v2/agents/coach/memory/facts/revert', { revision: before });
  });

  it('does not edit memory again when a session is replayed (recorded or live), unless side effects are allowed', async () => {
    const revision = (await block('facts')).revision;
    const recorded = await app.call('POST', '/v2/agents/coach/sessions/s1/replay', {});
    expect(recorded.status).toBe(201);
    expect(recorded.body.diff.totals).toMatchObject({ diverged: 0 });
    const outputs = (await app.call('GET', `/v2/agents/coach/sessions/${recorded.body.session_key}/events?limit=100`)).body.events.filter((e: Json) => e.type === 'tool_output');
    expect(outputs.map((e: Json) => e.tool_output)).toEqual([expect.objectContaining({ block: 'facts', revision: 1 }), expect.objectContaining({ block: 'scratch', revision: 1 })]);
    expect((await block('facts')).revision).toBe(revision);

    upstream.enqueue({ toolCalls: [call('r1', 'memory_append', { block: 'facts', text: 'replayed' })] }, { content: 'ok' });
    const live = await app.call('POST', '/v2/agents/coach/sessions/s1/replay', { mode: 'live' });
    expect(live.status).toBe(201);
    const refused = (await app.call('GET', `/v2/agents/coach/sessions/${live.body.session_key}/events?limit=100`)).body.events.find((e: Json) => e.type === 'tool_output');
    expect(refused).toMatchObject({ error: true, tool_output: { error: expect.stringContaining('Refused in a replay') } });
    expect(await block('facts')).toMatchObject({ revision, value: 'Ada likes tea.' });
  });

  it('starts an agent created again under its key with fresh memory', async () => {
    expect((await app.call('DELETE', '/v2/agents/coach')).status).toBeLessThan(300);
    expect((await app.call('GET', '/v2/agents/coach/memory')).status).toBe(404);
    expect((await app.call('POST', '/v2/agents', coach)).status).toBe(201);
    expect(await block('facts')).toMatchObject({ value: '', revision: 0 });
    expect((await app.call('GET', '/v2/agents/coach/memory/facts/history')).body.changes).toEqual([]);
  });
});
