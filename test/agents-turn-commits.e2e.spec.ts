import { ScriptedOpenAIServer } from '@lib/testing';
import { SqliteEventStore } from '@lib/platform/sqlite';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/**
 * What a turn costs in durable commits (issue 43, "a turn costs two commits"): the input with the turn's start, then
 * the answer with the turn's end and the model call's usage record. No lease is taken or released per turn: the
 * start is appended at the session's revision, and the process that runs it is known alive by one lease per process.
 */
describe('what a turn commits', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let store: SqliteEventStore;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    // Renewals of the process's liveness lease are rare here, so none falls inside a measured turn.
    app = await startTestApp({ env: { LEASE_TTL_MS: '3600000' } });
    store = app.started.infra.events as SqliteEventStore;
    await registerScripted(app, upstream, 'm');
    const agent = { name: 'a', model: { name: 'm' }, first_step_name: 'main', steps: { main: { instructions: [] } } };
    expect((await app.call('POST', '/v2/agents', { key: 'a', ...agent, tool_configurations: {} })).status).toBe(201);
    expect((await app.call('POST', '/v2/agents', { key: 'q', ...agent, tool_configurations: {}, llm_quota: { output_tokens_per_minute: 1_000_000 } })).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  /** The streams of each commit made while `fn` runs. */
  async function commitsOf(fn: () => Promise<void>): Promise<string[][]> {
    const commits: string[][] = [];
    const stop = store.observeCommits((streams) => commits.push([...streams]));
    try {
      await fn();
    } finally {
      stop();
    }
    return commits;
  }

  const turn = async (agent: string, session: string, text: string) => {
    upstream.enqueue({ content: `answer to ${text}` });
    const res = await app.call('POST', `/v2/agents/${agent}/sessions/${session}/events`, { messages: [{ type: 'text', content: text }] });
    expect(res.status).toBe(201);
    expect(res.body.events.map((e: { type: string }) => e.type)).toEqual(['input_message', 'agent_output']);
  };

  it('a plain turn is two commits: the input with the start, the answer with the end and the usage', async () => {
    expect((await app.call('POST', '/v2/agents/a/sessions', { key: 's' })).status).toBe(201);
    await turn('a', 's', 'first'); // takes this process's liveness lease once
    const commits = await commitsOf(() => turn('a', 's', 'second'));
    expect(commits).toHaveLength(2);
    expect(commits[0]).toEqual([expect.stringMatching(/^session-/)]);
    expect(commits[1].sort()).toEqual([expect.stringMatching(/^llmusage-|^usage-/), expect.stringMatching(/^session-/)].sort());
    // The next input is accepted as soon as the answer is in: nothing is left to release.
    await turn('a', 's', 'third');
  });

  it("with the agent's own quota, its usage record rides in the same commit", async () => {
    expect((await app.call('POST', '/v2/agents/q/sessions', { key: 's' })).status).toBe(201);
    await turn('q', 's', 'first');
    const commits = await commitsOf(() => turn('q', 's', 'second'));
    expect(commits).toHaveLength(2);
    expect(commits[1].some((s) => s.startsWith('agentusage-'))).toBe(true);
    expect(commits[1].some((s) => s.startsWith('session-'))).toBe(true);
  });

  it('a turn whose session moved before its start was stored stores nothing of it, and the input is decided again', async () => {
    expect((await app.call('POST', '/v2/agents/a/sessions', { key: 'moved' })).status).toBe(201);
    await turn('a', 'moved', 'first');
    // The start is stored while the model call is on its way (a turn not streamed): a change of the session that
    // lands first (here a PATCH, as another process could make) refuses it.
    const original = store.append.bind(store);
    let moved = false;
    const spy = jest.spyOn(store, 'append').mockImplementation(async (streamId, events, options) => {
      if (!moved && events.some((e) => e.type === 'SessionTurnStarted')) {
        moved = true;
        expect((await app.call('PATCH', '/v2/agents/a/sessions/moved', { metadata: { topic: 'tides' } })).status).toBe(200);
      }
      return original(streamId, events, options);
    });
    try {
      upstream.enqueue({ content: 'answer to second' });
      upstream.enqueue({ content: 'answer to second' });
      const res = await app.call('POST', '/v2/agents/a/sessions/moved/events', { messages: [{ type: 'text', content: 'second' }] });
      expect(res.status).toBe(201);
      expect(res.body.events.map((e: { type: string }) => e.type)).toEqual(['input_message', 'agent_output']);
      expect(res.body.events[1].content).toBe('answer to second');
    } finally {
      spy.mockRestore();
    }
    expect(moved).toBe(true);
    const stream = (await store.readAll({ filter: { categories: ['session'] } })).filter((e) => e.streamId.endsWith('.moved')).map((e) => e.type);
    const after = stream.slice(stream.indexOf('SessionUpdated'));
    // One input, one start and one end after the change: the refused start left nothing, the decided-again one ran.
    expect(after).toEqual(['SessionUpdated', 'SessionInputReceived', 'SessionTurnStarted', 'SessionAgentOutput', 'SessionTurnEnded']);
    await turn('a', 'moved', 'third');
  });
});

