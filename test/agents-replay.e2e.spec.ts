import { canonicalEvents, Sessions } from '@lib/agents';
import { EVENT_STORE, EventStore } from '@lib/platform';
import { ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/**
 * Pinned sessions and replays (issue 45, docs/replay.md) against the scripted model: a recorded replay with the same
 * revision reproduces the original's events in canonical form without a model request; a changed instruction shows
 * in the diff; live_model reuses matching tool outputs and refuses side effects unless allowed; from/until; rights.
 */
describe('replays', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  const docs = { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'kb', lexical_interpolation: 1 }], limit: 3 } } };
  const learn = { type: 'glossary_put_entries', argument_override: { glossary_key: 'terms' } };
  const shop = {
    key: 'shop',
    name: 'shop',
    model: { name: 'm' },
    tool_configurations: { docs, learn },
    first_step_name: 'research',
    steps: {
      research: { instructions: [{ type: 'inline', template: 'Answer from the docs.' }], next_steps: [{ step_name: 'wrapup' }] },
      wrapup: { instructions: [{ type: 'inline', template: 'Summarise in one line.' }], reentry_step: 'research' },
    },
  };

  const say = (agentKey: string, key: string, text: string) => app.call('POST', `/v2/agents/${agentKey}/sessions/${key}/events`, { messages: [{ type: 'text', content: text }] });
  const replay = (key: string, body: object = {}, headers?: Record<string, string>) => app.call('POST', `/v2/agents/shop/sessions/${key}/replay`, body, headers);
  const ownEvents = async (agentKey: string, key: string) => {
    const sessions = app.started.app.get(Sessions, { strict: false });
    const { streamId } = await sessions.active(agentKey, key);
    return sessions.store.readRaw(streamId);
  };
  const sessionCount = async () => (await app.call('GET', '/v2/agents/shop/sessions?limit=100')).body.sessions.length;

  /** A three-turn session: two calls of `docs` in one answer, a step transition in every turn. */
  const recordSession = async (key: string) => {
    expect((await app.call('POST', '/v2/agents/shop/sessions', { key, metadata: { tier: 'gold' } })).status).toBe(201);
    upstream.enqueue({ toolCalls: [{ id: 'c1', name: 'docs', arguments: '{"query":"refunds paid"}' }, { id: 'c2', name: 'docs', arguments: '{"query": "shipping Iceland"}' }], usage: { prompt_tokens: 40, completion_tokens: 9 } }, { content: 'Refunds take 14 days.' }, { content: 'Refund: 14 days.' });
    expect((await say('shop', key, 'How long do refunds take?')).status).toBe(201);
    upstream.enqueue({ content: 'Shipping takes three weeks.' }, { content: 'Iceland: 3 weeks.' });
    expect((await say('shop', key, 'And shipping to Iceland?')).status).toBe(201);
    upstream.enqueue({ toolCalls: [{ id: 'c3', name: 'docs', arguments: '{"query":"refunds"}' }] }, { content: 'Yes, 14 days.' }, { content: 'OK.' });
    expect((await say('shop', key, 'Sure about refunds?')).status).toBe(201);
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/corpora', { key: 'kb', name: 'KB' });
    await app.call('POST', '/v2/corpora/kb/documents', { id: 'refunds', type: 'core', document_parts: [{ text: 'Refunds are paid within 14 days of the return.' }] });
    await app.call('POST', '/v2/corpora/kb/documents', { id: 'shipping', type: 'core', document_parts: [{ text: 'Shipping to Iceland takes three weeks.' }] });
    await app.call('POST', '/v2/glossaries', { key: 'terms', name: 'terms' });
    expect((await app.call('POST', '/v2/agents', shop)).status).toBe(201);
    await recordSession('s1');
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('recorded, same revision: the replay reproduces the events in canonical form, and asks the model nothing', async () => {
    const requests = upstream.chatRequests().length;
    const res = await replay('s1');
    expect(res.status).toBe(201);
    expect(upstream.chatRequests().length).toBe(requests);
    const key = res.body.session_key as string;
    expect(res.body.replay_of).toEqual({ session_key: 's1', mode: 'recorded', agent_revision: 0, allow_side_effects: false });

    const original = await ownEvents('shop', 's1');
    const replayed = await ownEvents('shop', key);
    expect(replayed.filter((e) => e.type === 'SessionTurnStarted')).toHaveLength(3);
    expect(replayed.some((e) => e.type === 'SessionToolReturned')).toBe(true);
    expect(replayed.some((e) => e.type === 'SessionStepTransitioned')).toBe(true);
    expect(canonicalEvents(replayed)).toEqual(canonicalEvents(original));
    // The canonical form is not blind: the answers themselves are in it.
    expect(canonicalEvents(replayed).join('\n')).toContain('Refund: 14 days.');

    const { turns, totals } = res.body.diff;
    expect(totals).toMatchObject({ turns: 3, replayed: 3, same_answers: 3, same_tool_calls: 3, same_events: 3, diverged: 0 });
    expect(turns[0]).toMatchObject({ same: { tool_calls: true, arguments: true, steps: true, answer: true, events: true }, answer_similarity: 1 });
    expect(turns[0].original).toMatchObject({ steps: ['research', 'wrapup'], answer: 'Refund: 14 days.', tool_calls: [{ name: 'docs', arguments: { query: 'refunds paid' } }, { name: 'docs', arguments: { query: 'shipping Iceland' } }] });
    expect(turns[0].replay.tokens).toEqual(turns[0].original.tokens);
    expect(turns[0].original.tokens.input_tokens).toBeGreaterThanOrEqual(40);

    const view = await app.call('GET', `/v2/agents/shop/sessions/${key}`);
    expect(view.body).toMatchObject({ agent_revision: 0, replay_of: { session_key: 's1', mode: 'recorded' }, status: 'stopped' });
    const again = await app.call('GET', `/v2/agents/shop/sessions/${key}/replay`);
    expect(again.status).toBe(200);
    expect(again.body.diff).toEqual(res.body.diff);
    expect((await app.call('GET', '/v2/agents/shop/sessions/s1/replay')).status).toBe(404);
  });

  it('a recorded replay stores its turns in one append after its creation (docs/replay.md, Cost)', async () => {
    const log = app.started.app.get<EventStore>(EVENT_STORE, { strict: false });
    const appends = jest.spyOn(log, 'append');
    try {
      const res = await replay('s1');
      expect(res.status).toBe(201);
      const key = res.body.session_key as string;
      const mine = appends.mock.calls.filter(([stream]) => stream.endsWith(`.${key}`));
      // The session's creation, then the three turns (12+ events) in one commit.
      expect(mine.map(([, events]) => events.length)).toEqual([1, (await ownEvents('shop', key)).length - 1]);
      expect(res.body.diff.totals.same_events).toBe(3);
    } finally {
      appends.mockRestore();
    }
  });

  it('from_event_id forks the original just before that input, until_event_id stops after the turn holding it', async () => {
    const events: Ev[] = (await app.call('GET', '/v2/agents/shop/sessions/s1/events?limit=100')).body.events;
    const inputs = events.filter((e) => e.type === 'input_message');
    const secondAnswer = events.filter((e) => e.type === 'agent_output')[3];
    const res = await replay('s1', { from_event_id: inputs[1].id, until_event_id: secondAnswer.id });
    expect(res.status).toBe(201);
    expect(res.body.diff.turns.map((t: any) => t.input_event_id)).toEqual([inputs[1].id]);
    expect(res.body.diff.totals).toMatchObject({ turns: 1, same_events: 1 });
    const seen: Ev[] = (await app.call('GET', `/v2/agents/shop/sessions/${res.body.session_key}/events?limit=100`)).body.events;
    // The first turn is the original's (read through the fork, not copied); the second re-ran; the third did not.
    expect(seen.filter((e) => e.type === 'input_message').map((e) => e.messages[0].content)).toEqual(['How long do refunds take?', 'And shipping to Iceland?']);
    expect(seen[0].id).toBe(inputs[0].id);
    expect(seen.at(-1)!.content).toBe('Iceland: 3 weeks.');
    expect(res.body.replay_of).toMatchObject({ from_event_id: inputs[1].id, until_event_id: secondAnswer.id });
  });

  it('bad input is a 400 or 404 with the error body, and creates no session', async () => {
    const before = await sessionCount();
    const bad = await replay('s1', { mode: 'sometimes', agent_revision: 'latest', extra: 1 });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.field_errors)).toEqual(expect.arrayContaining(['mode', 'agent_revision']));
    expect(bad.body.request_id).toBeDefined();
    const range = await replay('s1', { from_event_id: 'aev_nope' });
    expect(range.status).toBe(400);
    expect(range.body.field_errors).toEqual({ from_event_id: 'not the input of a turn of the session' });
    const revision = await replay('s1', { agent_revision: 7 });
    expect(revision.status).toBe(400);
    expect(revision.body.field_errors).toEqual({ agent_revision: 'no such revision' });
    expect((await replay('ghost')).status).toBe(404);
    expect(await sessionCount()).toBe(before);
  });

  it('a caller who may only view the agent cannot replay (403), and changes nothing', async () => {
    const viewer = asKey(await createUser(app, 'watcher', { agent_roles: [{ agent_key: 'shop', role: 'agent_viewer' }] }));
    const before = await sessionCount();
    const refused = await replay('s1', {}, viewer);
    expect(refused.status).toBe(403);
    expect(refused.body.messages).toBeDefined();
    expect(await sessionCount()).toBe(before);
    // An agent user, who may not list another session's events, may not read them through a replay either.
    const user = asKey(await createUser(app, 'shopper', { agent_roles: [{ agent_key: 'shop', role: 'agent_user' }] }));
    const asUser = await replay('s1', {}, user);
    expect(asUser.status).toBe(403);
    expect(JSON.stringify(asUser.body)).not.toContain('tool_calls');
    expect(await sessionCount()).toBe(before);
  });

  it('a pinned session runs its revision after a PATCH; an unknown revision is a 400', async () => {
    const patched = await app.call('PATCH', '/v2/agents/shop', { steps: { research: { instructions: [{ type: 'inline', template: 'Answer briefly from the docs.' }] } } });
    expect(patched.status).toBe(200);
    const before = await sessionCount();
    const missing = await app.call('POST', '/v2/agents/shop/sessions', { key: 'p9', agent_revision: 9 });
    expect(missing.status).toBe(400);
    expect(missing.body.field_errors).toEqual({ agent_revision: 'no such revision' });
    expect(await sessionCount()).toBe(before);
    const pinned = await app.call('POST', '/v2/agents/shop/sessions', { key: 'p0', agent_revision: 0 });
    expect(pinned.status).toBe(201);
    expect(pinned.body.agent_revision).toBe(0);
    upstream.enqueue({ content: 'old' }, { content: 'old.' });
    await say('shop', 'p0', 'hi');
    expect((upstream.chatRequests().at(-2)!.body as any).messages[0]).toEqual({ role: 'system', content: 'Answer from the docs.' });
    expect((await ownEvents('shop', 'p0')).find((e) => e.type === 'SessionTurnStarted')!.data).toMatchObject({ agentRevision: 0 });
    await app.call('POST', '/v2/agents/shop/sessions', { key: 'cur' });
    upstream.enqueue({ content: 'new' }, { content: 'new.' });
    await say('shop', 'cur', 'hi');
    expect((upstream.chatRequests().at(-2)!.body as any).messages[0]).toEqual({ role: 'system', content: 'Answer briefly from the docs.' });
  });

  it('a changed instruction shows in the diff: recorded stops at the prompt before any call; live_model calls the model again', async () => {
    const requests = upstream.chatRequests().length;
    const recorded = await replay('s1', { agent_revision: 'current' });
    expect(recorded.status).toBe(201);
    expect(upstream.chatRequests().length).toBe(requests);
    expect(recorded.body.replay_of.agent_revision).toBe(1);
    const first = recorded.body.diff.turns[0];
    expect(first.divergence).toMatchObject({ kind: 'prompt', model_call: 0 });
    expect(first.divergence.detail).toMatch(/system prompt of step "research"/);
    expect(recorded.body.diff.totals).toMatchObject({ turns: 3, replayed: 1, diverged: 1 });
    expect(recorded.body.diff.turns[1].replay).toBeUndefined();
    // The same revision as the original: no divergence.
    expect((await replay('s1', { agent_revision: 0 })).body.diff.totals).toMatchObject({ same_events: 3, diverged: 0 });

    upstream.enqueue({ content: 'Refunds: two weeks.' }, { content: 'Two weeks.' }, { content: 'Three weeks.' }, { content: 'Iceland: 3 weeks.' }, { content: 'Yes.' }, { content: 'OK.' });
    const live = await replay('s1', { mode: 'live_model' });
    expect(live.status).toBe(201);
    expect(upstream.chatRequests().length).toBe(requests + 6);
    expect((upstream.chatRequests()[requests].body as any).messages[0]).toEqual({ role: 'system', content: 'Answer briefly from the docs.' });
    const turns = live.body.diff.turns;
    expect(turns[0].same).toMatchObject({ tool_calls: false, answer: false, steps: true });
    expect(turns[0].replay.answer).toBe('Two weeks.');
    expect(turns[0].answer_similarity).toBeLessThan(1);
    expect(turns[1].same.answer).toBe(true);
    expect(live.body.diff.totals).toMatchObject({ turns: 3, replayed: 3, diverged: 0 });
  });

  it('live_model reuses the recorded output of a matching tool call and runs the others', async () => {
    // The refunds document is gone: a live search for it would find nothing, the recorded output has it.
    expect((await app.call('DELETE', '/v2/corpora/kb/documents/refunds')).status).toBe(204);
    upstream.enqueue(
      { toolCalls: [{ id: 'x1', name: 'docs', arguments: '{ "query" : "refunds paid" }' }, { id: 'x2', name: 'docs', arguments: '{"query":"Iceland shipping weeks"}' }] },
      { content: 'a' },
      { content: 'b' },
    );
    const res = await replay('s1', { mode: 'live_model', until_event_id: (await app.call('GET', '/v2/agents/shop/sessions/s1/events?limit=1')).body.events[0].id });
    expect(res.status).toBe(201);
    const outputs: Ev[] = (await app.call('GET', `/v2/agents/shop/sessions/${res.body.session_key}/events?limit=100`)).body.events.filter((e: Ev) => e.type === 'tool_output');
    const byCall = Object.fromEntries(outputs.map((o) => [o.tool_call_id, JSON.stringify(o.tool_output)]));
    expect(byCall.x1).toContain('14 days');
    expect(byCall.x2).toContain('three weeks');
    expect(res.body.diff.turns[0].same).toMatchObject({ tool_calls: true, arguments: false });
  });

  it('replays a turn that resumed on client tool outputs, sending the recorded outputs to the replay\'s waiting call', async () => {
    const desk = { key: 'desk', name: 'desk', model: { name: 'm' }, tool_configurations: { ask: { type: 'client', description: 'Ask the user', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Greet.' }] } } };
    expect((await app.call('POST', '/v2/agents', desk)).status).toBe(201);
    await app.call('POST', '/v2/agents/desk/sessions', { key: 'c1' });
    upstream.enqueue({ toolCalls: [{ id: 'k1', name: 'ask', arguments: '{"q":"name?"}' }] });
    const asked = await say('desk', 'c1', 'hello');
    const call: Ev = asked.body.events.find((e: Ev) => e.type === 'tool_input');
    upstream.enqueue({ content: 'Hi Ada.' });
    expect((await app.call('POST', '/v2/agents/desk/sessions/c1/events', { type: 'tool_output', tool_outputs: [{ type: 'success', event_id: call.id, output: { name: 'Ada' } }] })).status).toBe(201);
    const requests = upstream.chatRequests().length;
    const res = await app.call('POST', '/v2/agents/desk/sessions/c1/replay', {});
    expect(res.status).toBe(201);
    expect(upstream.chatRequests().length).toBe(requests);
    expect(res.body.diff.totals).toMatchObject({ turns: 2, replayed: 2, same_events: 2, diverged: 0 });
    expect(canonicalEvents(await ownEvents('desk', res.body.session_key))).toEqual(canonicalEvents(await ownEvents('desk', 'c1')));
    expect(res.body.diff.turns[1].replay.answer).toBe('Hi Ada.');
  });

  it('replays structured outputs from the record, and a revision without the tool the record calls diverges there', async () => {
    const schema = { name: 'order', schema: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } };
    const extract = { key: 'extract', name: 'extract', model: { name: 'm' }, tool_configurations: { docs }, first_step_name: 'main', steps: { main: { instructions: [], output_parser: { type: 'structured', json_schema: schema } } } };
    expect((await app.call('POST', '/v2/agents', extract)).status).toBe(201);
    await app.call('POST', '/v2/agents/extract/sessions', { key: 'x1' });
    upstream.enqueue({ toolCalls: [{ id: 'd1', name: 'docs', arguments: '{"query":"order"}' }] }, { content: '{"order_id":"A-17"}' });
    expect((await say('extract', 'x1', 'Order A-17 is late')).status).toBe(201);
    const requests = upstream.chatRequests().length;
    const same = await app.call('POST', '/v2/agents/extract/sessions/x1/replay', {});
    expect(same.body.diff.totals).toMatchObject({ same_events: 1, diverged: 0 });
    expect(same.body.diff.turns[0].replay.answer).toBe('{"order_id":"A-17"}');
    expect(await ownEvents('extract', same.body.session_key).then((e) => e.find((x) => x.type === 'SessionStructuredOutput')?.data)).toMatchObject({ content: { order_id: 'A-17' } });
    expect((await app.call('PATCH', '/v2/agents/extract', { tool_configurations: { docs: null } })).status).toBe(200);
    const without = await app.call('POST', '/v2/agents/extract/sessions/x1/replay', {});
    expect(without.body.diff.turns[0].divergence).toMatchObject({ kind: 'tool_not_offered', model_call: 0 });
    expect(upstream.chatRequests().length).toBe(requests);
  });

  it('replays a recorded approval: the replay asks for the same call, and the recorded decision resumes its turn', async () => {
    const gate = { key: 'gate', name: 'gate', model: { name: 'm' }, tool_configurations: { docs: { ...docs, requires_approval: true } }, first_step_name: 'main', steps: { main: { instructions: [] } } };
    expect((await app.call('POST', '/v2/agents', gate)).status).toBe(201);
    await app.call('POST', '/v2/agents/gate/sessions', { key: 'g1' });
    upstream.enqueue({ toolCalls: [{ id: 'a1', name: 'docs', arguments: '{"query":"shipping"}' }] });
    const asked = await say('gate', 'g1', 'shipping?');
    expect(asked.body.events.map((e: Ev) => e.type)).toContain('tool_approval_requested');
    upstream.enqueue({ content: 'Three weeks.' });
    expect((await app.call('POST', '/v2/agents/gate/sessions/g1/events', { type: 'tool_approval', tool_call_id: 'a1', decision: 'approve' })).status).toBe(201);
    const requests = upstream.chatRequests().length;
    const res = await app.call('POST', '/v2/agents/gate/sessions/g1/replay', {});
    expect(res.status).toBe(201);
    expect(upstream.chatRequests().length).toBe(requests);
    expect(res.body.diff.totals).toMatchObject({ turns: 2, replayed: 2, same_events: 2, diverged: 0 });
    expect(canonicalEvents(await ownEvents('gate', res.body.session_key))).toEqual(canonicalEvents(await ownEvents('gate', 'g1')));
    expect(res.body.diff.turns[1].replay.answer).toBe('Three weeks.');
  });

  it('a side-effecting tool is refused in a replay, and runs when allowed', async () => {
    const call = { toolCalls: [{ id: 'g1', name: 'learn', arguments: '{"entries":{"RMA":"return merchandise authorization"}}' }] };
    upstream.enqueue(call, { content: 'noted' }, { content: 'noted.' });
    const res = await replay('s1', { mode: 'live', until_event_id: (await app.call('GET', '/v2/agents/shop/sessions/s1/events?limit=1')).body.events[0].id });
    expect(res.status).toBe(201);
    const refused: Ev = (await app.call('GET', `/v2/agents/shop/sessions/${res.body.session_key}/events?limit=100`)).body.events.find((e: Ev) => e.type === 'tool_output');
    expect(refused).toMatchObject({ tool_configuration_name: 'learn', error: true });
    expect(refused.tool_output.error).toMatch(/Refused in a replay: tool "learn" \(glossary_put_entries\) has side effects/);
    expect((await app.call('GET', '/v2/glossaries/terms/entries')).body.entries).toEqual([]);

    upstream.enqueue(call, { content: 'noted' }, { content: 'noted.' });
    const allowed = await replay('s1', { mode: 'live', allow_side_effects: true, until_event_id: (await app.call('GET', '/v2/agents/shop/sessions/s1/events?limit=1')).body.events[0].id });
    expect(allowed.body.replay_of.allow_side_effects).toBe(true);
    expect((await app.call('GET', '/v2/glossaries/terms/entries')).body.entries.map((e: any) => e.term)).toEqual(['RMA']);
  });
});
