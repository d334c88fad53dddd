import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '@lib/testing';
import { asKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { scratchDir } from './support/scratch-dir';
import { startTestApp, TestApp } from './support/test-app';

type Json = Record<string, any>;

const V1 = 'You answer in one word.';
const V2 = 'You answer politely, in a full sentence.';

/**
 * Evaluations from real sessions (issue 45, docs/evaluations.md): 20 recorded sessions replayed against a changed
 * instruction and scored by a scripted judge, in the worker wing; aggregates with intervals; a recorded evaluation
 * at the same revision shows no change; cancel; bad input and rights.
 */
describe('agent evaluations', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let viewer: Record<string, string>;
  const agent = {
    key: 'desk',
    name: 'Desk',
    model: { name: 'm' },
    tool_configurations: {},
    first_step_name: 'main',
    steps: { main: { instructions: [{ type: 'inline', name: 'style', template: V1 }] } },
  };
  const base = '/v2/agents/desk/evaluations';
  const systemOf = (req: CapturedRequest) => String(((req.body as Json).messages as Json[])[0]?.content ?? '');
  const lastUser = (req: CapturedRequest) => String(((req.body as Json).messages as Json[]).filter((m) => m.role === 'user').at(-1)?.content ?? '');

  /** The agent's model answers by its instruction; the judge scores politeness: 1 for a sentence with "please", 0.4 else. */
  const answer = (req: CapturedRequest): ScriptedReply | undefined => {
    const body = req.body as Json;
    if (body.model === 'judge-upstream') return { content: JSON.stringify({ score: /please/i.test(lastUser(req).split('ANSWER:').at(-1) ?? '') ? 1 : 0.4, reason: 'politeness' }) };
    const question = lastUser(req);
    return { content: systemOf(req).includes(V2) ? `Here is the answer to "${question}", please ask again if unclear.` : 'Yes.' };
  };

  const waitFor = async (id: string, status: string[], timeoutMs = 60_000): Promise<Json> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const got = await app.call('GET', `${base}/${id}`);
      if (status.includes(got.body.status)) return got.body;
      if (Date.now() > until) throw new Error(`evaluation ${id} still ${got.body.status}: ${JSON.stringify(got.body.progress)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = answer;
    app = await startTestApp({ env: { WORKER_POLL_MS: '500' } });
    await registerScripted(app, upstream, 'm');
    await registerScripted(app, upstream, 'judge');
    const created = await app.call('POST', '/v2/agents', agent);
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    for (let i = 0; i < 20; i++) {
      const key = `s${String(i).padStart(2, '0')}`;
      await app.call('POST', '/v2/agents/desk/sessions', { key, metadata: { tier: i % 2 ? 'gold' : 'free' } });
      for (let t = 0; t < 1 + (i % 2); t++) {
        const res = await app.call('POST', `/v2/agents/desk/sessions/${key}/events`, { messages: [{ type: 'text', content: `question ${i}.${t}` }] });
        if (res.status !== 201) throw new Error(JSON.stringify(res.body));
      }
    }
    await app.call('POST', '/v2/agents/desk/sessions', { key: 'empty' });
    const patched = await app.call('PATCH', '/v2/agents/desk', { steps: { main: { instructions: [{ type: 'inline', name: 'style', template: V2 }] } } });
    if (patched.status !== 200) throw new Error(JSON.stringify(patched.body));
    viewer = asKey(await createUser(app, 'vic', { agent_roles: [{ agent_key: 'desk', role: 'agent_viewer' }] }));
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('replays 20 sessions against the changed instruction and scores both sides with the judge', async () => {
    const judged = () => upstream.chatRequests().filter((r) => (r.body as Json).model === 'judge-upstream').length;
    const judgedBefore = judged();
    const created = await app.call('POST', base, { name: 'politeness', sessions: { limit: 20 }, candidate_revision: 'current', mode: 'live_model', scorers: [{ type: 'llm_judge', llm_name: 'judge', rubric: 'Is the answer polite?' }, { type: 'same_tool_calls' }] });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ agent_key: 'desk', name: 'politeness', candidate_revision: 1, mode: 'live_model', progress: { total: 20 } });
    expect(created.body.sessions.map((s: Json) => s.session_key)).not.toContain('empty');
    const done = await waitFor(created.body.id, ['completed']);
    expect(done.progress).toEqual({ total: 20, scored: 20, failed: 0 });
    // 30 recorded turns and 30 replayed ones, each judged once.
    expect(judged() - judgedBefore).toBe(60);
    const [judge, same] = done.aggregates;
    expect(judge.scorer).toEqual({ type: 'llm_judge', llm_name: 'judge', rubric: 'Is the answer polite?' });
    expect(judge.baseline.mean).toBeCloseTo(0.4);
    expect(judge.candidate.mean).toBeCloseTo(1);
    expect(judge.difference).toMatchObject({ n: 20 });
    expect(judge.difference.mean).toBeCloseTo(0.6);
    expect(judge.difference.ci95[0]).toBeCloseTo(0.6);
    // No tools on either side: the replay made every call the recorded turn made (none); the baseline has no baseline.
    expect(same.baseline).toEqual({ n: 0, mean: null });
    expect(same.candidate).toMatchObject({ n: 20, mean: 1 });
    const first = done.sessions[0];
    expect(first.status).toBe('scored');
    const replay = await app.call('GET', `/v2/agents/desk/sessions/${first.replay_session_key}`);
    expect(replay.body.replay_of).toMatchObject({ session_key: first.session_key, mode: 'live_model' });
    // The list reads the read model, which follows the stream a moment later.
    let listed = await app.call('GET', base);
    for (const until = Date.now() + 5000; listed.body.evaluations[0]?.status !== 'completed' && Date.now() < until; await new Promise((r) => setTimeout(r, 50))) listed = await app.call('GET', base);
    expect(listed.body.evaluations[0]).toMatchObject({ id: created.body.id, status: 'completed', progress: { total: 20, scored: 20, failed: 0 } });
  }, 120_000);

  it('shows no change for a recorded replay of the recorded revision, and calls no agent model', async () => {
    const agentCalls = () => upstream.chatRequests().filter((r) => (r.body as Json).model === 'm-upstream').length;
    const before = agentCalls();
    const created = await app.call('POST', base, { sessions: { metadata_filter: "doc.tier = 'gold'", limit: 5 }, candidate_revision: 0, mode: 'recorded', scorers: [{ type: 'llm_judge', llm_name: 'judge', rubric: 'Is the answer polite?' }] });
    expect(created.status).toBe(202);
    expect(created.body.progress.total).toBe(5);
    const done = await waitFor(created.body.id, ['completed']);
    expect(agentCalls()).toBe(before);
    expect(done.aggregates[0].difference).toMatchObject({ n: 5, mean: 0 });
    for (const s of done.sessions) expect(s.diff).toMatchObject({ diverged: 0 });
  }, 60_000);

  it('cancels an evaluation: no session after the cancel, and a second cancel is a conflict', async () => {
    upstream.onChat = (req) => ({ ...answer(req), firstByteDelayMs: 150 });
    try {
      const created = await app.call('POST', base, { sessions: { limit: 20 }, candidate_revision: 'current', mode: 'live_model', scorers: [{ type: 'same_tool_calls' }] });
      const cancelled = await app.call('POST', `${base}/${created.body.id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status).toBe('cancelled');
      await new Promise((r) => setTimeout(r, 1500));
      const after = await app.call('GET', `${base}/${created.body.id}`);
      expect(after.body.status).toBe('cancelled');
      expect(after.body.progress.scored).toBeLessThanOrEqual(1);
      expect((await app.call('POST', `${base}/${created.body.id}/cancel`)).status).toBe(409);
    } finally {
      upstream.onChat = answer;
    }
  }, 60_000);

  it('refuses bad requests with the field named, and stores nothing', async () => {
    const listed = async () => (await app.call('GET', `${base}?limit=100`)).body.evaluations.length;
    const before = await listed();
    const ok = { sessions: { limit: 2 }, candidate_revision: 0, scorers: [{ type: 'same_tool_calls' }] };
    const cases: [Json, string][] = [
      [{ ...ok, scorers: [{ type: 'vibes' }] }, 'scorers[0].type'],
      [{ ...ok, scorers: [{ type: 'llm_judge', llm_name: 'nobody', rubric: 'r' }] }, 'scorers[0].llm_name'],
      [{ ...ok, scorers: [] }, 'scorers'],
      [{ ...ok, candidate_revision: 7 }, 'candidate_revision'],
      [{ ...ok, candidate_revision: 'latest' }, 'candidate_revision'],
      [{ ...ok, mode: 'live' }, 'mode'],
      [{ ...ok, sessions: { session_keys: ['s01', 'nope'] } }, 'sessions.session_keys[1]'],
      [{ ...ok, sessions: { session_keys: ['empty'] } }, 'sessions.session_keys[0]'],
      [{ ...ok, sessions: { metadata_filter: "doc.tier = 'platinum'" } }, 'sessions'],
      [{ ...ok, sessions: { limit: 0 } }, 'sessions.limit'],
      [{ ...ok, sessions: { metadata_filter: 'doc.tier ==' } }, 'sessions.metadata_filter'],
    ];
    for (const [body, field] of cases) {
      const res = await app.call('POST', base, body);
      expect([res.status, field, Object.keys(res.body.field_errors ?? {})]).toEqual([400, field, expect.arrayContaining([field])]);
      expect(res.body.request_id).toBeTruthy();
    }
    expect((await app.call('GET', `${base}/evl_nope`)).status).toBe(404);
    expect(await listed()).toBe(before);
  });

  it('lets an agent viewer read evaluations but not start or cancel one', async () => {
    const listed = await app.call('GET', base, undefined, viewer);
    expect(listed.status).toBe(200);
    const id = listed.body.evaluations[0].id;
    expect((await app.call('GET', `${base}/${id}`, undefined, viewer)).status).toBe(200);
    expect((await app.call('POST', base, { sessions: { limit: 1 }, candidate_revision: 0, scorers: [{ type: 'same_tool_calls' }] }, viewer)).status).toBe(403);
    expect((await app.call('POST', `${base}/${id}/cancel`, undefined, viewer)).status).toBe(403);
  });
});

describe('an evaluation across a restart', () => {
  it('goes on from the next session in the service started again on the same data, each session scored once', async () => {
    const upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = () => ({ content: 'Fine.', firstByteDelayMs: 120 });
    const dataDir = scratchDir('ars-eval-restart-');
    let app = await startTestApp({ dataDir, env: { WORKER_POLL_MS: '300', LEASE_TTL_MS: '2000' } });
    try {
      await registerScripted(app, upstream, 'm');
      await app.call('POST', '/v2/agents', { key: 'desk', name: 'Desk', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'Be brief.' }] } } });
      for (let i = 0; i < 8; i++) {
        await app.call('POST', '/v2/agents/desk/sessions', { key: `s${i}` });
        await app.call('POST', `/v2/agents/desk/sessions/s${i}/events`, { messages: [{ type: 'text', content: `q${i}` }] });
      }
      const created = await app.call('POST', '/v2/agents/desk/evaluations', { sessions: { limit: 8 }, candidate_revision: 0, mode: 'live_model', scorers: [{ type: 'same_tool_calls' }] });
      expect(created.status).toBe(202);
      const id = created.body.id as string;
      const progress = async () => (await app.call('GET', `/v2/agents/desk/evaluations/${id}`)).body as Json;
      for (let t = Date.now(); (await progress()).progress.scored < 2; ) if (Date.now() - t > 30_000) throw new Error('no progress');
      expect((await progress()).progress.scored).toBeLessThan(8);
      await app.close();
      app = await startTestApp({ dataDir, env: { WORKER_POLL_MS: '300', LEASE_TTL_MS: '2000' } });
      let done: Json;
      for (let t = Date.now(); (done = await progress()).status !== 'completed'; await new Promise((r) => setTimeout(r, 100))) if (Date.now() - t > 60_000) throw new Error(`still ${done.status} ${JSON.stringify(done.progress)}`);
      expect(done.progress).toEqual({ total: 8, scored: 8, failed: 0 });
      expect(new Set(done.sessions.map((s: Json) => s.session_key)).size).toBe(8);
      const log = await app.call('GET', '/v2/events?category=agent_evaluation&limit=100');
      const scored = (log.body.events as Json[]).filter((e) => e.type === 'AgentEvaluationSessionScored').map((e) => e.data.sessionKey);
      expect(scored.sort()).toEqual([...new Set(scored)].sort());
      expect(scored).toHaveLength(8);
      // Two holders took the evaluation's lease: the stopped service's worker and the new one's.
      const leases = await app.call('GET', '/v2/events?category=lease&limit=1000');
      const holders = (leases.body.events as Json[]).filter((e) => e.type === 'LeaseAcquired' && e.data.lease === `evaluation:${id}`).map((e) => e.data.holder);
      expect(new Set(holders).size).toBe(2);
    } finally {
      await app.close();
      await upstream.close();
    }
  }, 120_000);
});
