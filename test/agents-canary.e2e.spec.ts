import { hashFraction } from '@lib/aliases';
import { ScriptedOpenAIServer } from '@lib/testing';
import { createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * Issue 45, canary aliases (docs/aliases.md, "Canary"): routing by weight, both arms scored online by a scripted
 * judge (llm_judge), promotion and rollback on the scores, the tally, the `alias.canary_decided` webhook, bad input
 * and rights. The agents' answers come from the scripted model by the model each agent uses; the judge, another
 * registered model on the same scripted server, scores an answer by a word in it.
 */
describe('canary aliases', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let receiver: WebhookReceiver;
  const answers: Record<string, string> = { 'm-old-upstream': 'The manual is in the drawer. GOOD', 'm-new-upstream': 'The manual is in the top drawer. GOOD', 'm-worse-upstream': 'No idea. BAD' };
  const judgeScores: Record<string, number> = { GOOD: 0.8, BAD: 0.2 };
  const judge = { type: 'llm_judge', llm_name: 'judge', rubric: 'Does the answer say where the manual is?' };

  const agent = (key: string, model: string) => app.call('POST', '/v2/agents', { key, name: key, model: { name: model }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
  const alias = (key: string, agentKey: string) => app.call('POST', '/v2/agent_aliases', { key, name: key, policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: agentKey } }] } });
  const canary = (aliasKey: string, body: Record<string, unknown>) => app.call('PUT', `/v2/agent_aliases/${aliasKey}/canary`, { candidate_agent_key: 'new', weight: 0.5, scorers: [judge], promote_after_sessions: 3, max_score_drop: 0.05, ...body });
  let n = 0;
  /** A session through the alias with one answered turn; its agent. */
  const converse = async (aliasKey: string): Promise<string> => {
    const key = `s${++n}`;
    const created = await app.call('POST', `/v2/agent_aliases/${aliasKey}/sessions`, { key });
    expect(created.status).toBe(201);
    const sent = await app.call('POST', `/v2/agent_aliases/${aliasKey}/sessions/${key}/events`, { messages: [{ type: 'text', content: 'Where is the manual?' }] });
    expect(sent.status).toBe(201);
    return created.body.agent_key as string;
  };
  /** Sessions through the alias until each arm has enough, then the canary's decided state. */
  const runUntilDecided = async (aliasKey: string, candidate: string, perArm: number) => {
    const arms: Record<string, number> = {};
    for (let i = 0; i < 40 && !((arms[candidate] ?? 0) >= perArm && (arms.old ?? 0) >= 2); i++) {
      const agentKey = await converse(aliasKey);
      arms[agentKey] = (arms[agentKey] ?? 0) + 1;
      if ((await app.call('GET', `/v2/agent_aliases/${aliasKey}/canary`)).body.state !== 'running') break;
    }
    return until(`the canary of ${aliasKey} decided`, async () => {
      const got = await app.call('GET', `/v2/agent_aliases/${aliasKey}/canary`);
      return got.body.state !== 'running' ? got.body : undefined;
    }, 60_000, 200);
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = (req) => {
      const model = req.body?.model as string;
      if (model === 'judge-upstream') {
        const prompt = (req.body?.messages as { content: string }[])[1].content;
        const word = /ANSWER:\n.*\b(GOOD|BAD)\b/s.exec(prompt)?.[1];
        return { content: word ? JSON.stringify({ score: judgeScores[word], reason: `judged ${word}` }) : 'I cannot tell.' };
      }
      return { content: answers[model] ?? 'unscripted' };
    };
    receiver = await WebhookReceiver.start();
    app = await startTestApp({ env: { OUTBOUND_WEBHOOKS_ALLOWED_HOSTS: '127.0.0.1', WORKER_POLL_MS: '200', WEBHOOK_RETRY_BASE_MS: '200' } });
    for (const m of ['m-old', 'm-new', 'm-worse', 'judge']) await registerScripted(app, upstream, m);
    for (const [key, model] of [['old', 'm-old'], ['new', 'm-new'], ['worse', 'm-worse']]) expect((await agent(key, model)).status).toBe(201);
    expect((await app.call('POST', '/v2/webhooks', { url: `${receiver.url}/canary`, event_types: ['alias.canary_decided'], description: 'canaries' })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await receiver?.close();
  });

  it('refuses bad input with the field named, and changes nothing', async () => {
    expect((await alias('checked', 'old')).status).toBe(201);
    expect((await canary('nowhere', {})).status).toBe(404);
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await canary('checked', body);
      expect([res.status, Object.keys(res.body.field_errors ?? {})]).toEqual([400, expect.arrayContaining([field])]);
      expect(res.body.request_id).toEqual(expect.any(String));
    };
    await bad({ scorers: [{ type: 'bleu' }] }, 'scorers[0].type');
    await bad({ scorers: [judge, { type: 'llm_judge', llm_name: 'nobody', rubric: 'r' }] }, 'scorers[1].llm_name');
    await bad({ scorers: [{ type: 'lambda', tool_id: 'tool_missing' }] }, 'scorers[0].tool_id');
    await bad({ scorers: [{ type: 'same_tool_calls', rubric: 'r' }] }, 'scorers[0].rubric');
    await bad({ scorers: [] }, 'scorers');
    await bad({ weight: 1.5 }, 'weight');
    await bad({ promote_after_sessions: 0 }, 'promote_after_sessions');
    await bad({ candidate_agent_key: 'nobody' }, 'candidate_agent_key');
    await bad({ candidate_agent_key: 'old' }, 'candidate_agent_key');
    await bad({ control_agent_key: 'worse' }, 'control_agent_key');
    await bad({ surprise: true }, 'surprise');
    expect((await app.call('GET', '/v2/agent_aliases/checked/canary')).status).toBe(404);
    expect((await app.call('DELETE', '/v2/agent_aliases/checked/canary')).status).toBe(404);
  });

  it('needs what replacing the policy needs: a developer is refused, an administrator of the alias’s agent needs the candidate too', async () => {
    expect((await alias('guarded', 'old')).status).toBe(201);
    const developer = await createUser(app, 'olddev', { agent_roles: [{ agent_key: 'old', role: 'agent_developer' }, { agent_key: 'new', role: 'agent_developer' }] });
    const admin = await createUser(app, 'oldadmin', { agent_roles: [{ agent_key: 'old', role: 'agent_administrator' }, { agent_key: 'new', role: 'agent_user' }] });
    const as = (key: string, method: string, body?: unknown) => app.call(method, '/v2/agent_aliases/guarded/canary', body, { 'x-api-key': key });
    const body = { candidate_agent_key: 'new', weight: 1, scorers: [judge], promote_after_sessions: 3, max_score_drop: 0.05 };
    expect((await as(developer, 'PUT', body)).status).toBe(403);
    const refused = await as(admin, 'PUT', body);
    expect([refused.status, refused.body.field_errors]).toEqual([403, { candidate_agent_key: 'the caller may not administer this agent' }]);
    expect((await as(admin, 'PUT', { ...body, candidate_agent_key: 'worse' })).status).toBe(404);
    expect((await app.call('GET', '/v2/agent_aliases/guarded/canary')).status).toBe(404);
    // The developer reads the alias, and so its canary, once there is one; it still may not stop it.
    expect((await canary('guarded', { weight: 0 })).status).toBe(200);
    expect((await as(developer, 'GET')).body).toMatchObject({ state: 'running', candidate_agent_key: 'new' });
    expect((await as(developer, 'DELETE')).status).toBe(403);
    expect((await app.call('DELETE', '/v2/agent_aliases/guarded/canary')).status).toBe(204);
  });

  it('routes new sessions by weight, the same session key the same way; DELETE ends it and routing is the policy’s again', async () => {
    expect((await alias('routed', 'old')).status).toBe(201);
    const keys: string[] = [];
    const sessions = async (count: number) => {
      const agents: string[] = [];
      keys.length = 0;
      for (let i = 0; i < count; i++) {
        const res = await app.call('POST', '/v2/agent_aliases/routed/sessions', { key: `r${++n}` });
        expect(res.status).toBe(201);
        agents.push(res.body.agent_key);
        keys.push(`r${n}`);
      }
      return agents;
    };
    expect((await canary('routed', { weight: 0 })).status).toBe(200);
    expect(new Set(await sessions(10))).toEqual(new Set(['old']));
    expect((await canary('routed', { weight: 1 })).body).toMatchObject({ state: 'running', weight: 1, control_agent_key: 'old' });
    expect(new Set(await sessions(10))).toEqual(new Set(['new']));
    // A caller who may not use the candidate is routed by the policy, not refused.
    const oldUser = await createUser(app, 'olduser', { agent_roles: [{ agent_key: 'old', role: 'agent_user' }] });
    const theirs = await app.call('POST', '/v2/agent_aliases/routed/sessions', { key: `r${++n}` }, { 'x-api-key': oldUser });
    expect([theirs.status, theirs.body.agent_key]).toEqual([201, 'old']);
    const half = await canary('routed', { weight: 0.5 });
    expect(half.body).toMatchObject({ state: 'running', weight: 0.5, candidate_agent_key: 'new', control_agent_key: 'old', scorers: [judge], promote_after_sessions: 3, max_score_drop: 0.05, ended_at: null, decision: null });
    const split = await sessions(40);
    // The documented rule: the candidate when SHA-256 of "<canary id>:<session key>", as a fraction, is below the weight.
    expect(split).toEqual(keys.map((k) => (hashFraction(`${half.body.id}:${k}`) < 0.5 ? 'new' : 'old')));
    const toNew = split.filter((a) => a === 'new').length;
    expect(toNew).toBeGreaterThanOrEqual(10);
    expect(toNew).toBeLessThanOrEqual(30);
    expect((await app.call('DELETE', '/v2/agent_aliases/routed/canary')).status).toBe(204);
    expect((await app.call('GET', '/v2/agent_aliases/routed/canary')).body).toMatchObject({ state: 'stopped', ended_at: expect.any(String) });
    expect(new Set(await sessions(5))).toEqual(new Set(['old']));
    expect((await app.call('DELETE', '/v2/agent_aliases/routed/canary')).status).toBe(404);
  }, 120_000);

  it('promotes a candidate that scores as well as the control: the policy names it, the tally and the webhook say why', async () => {
    expect((await alias('front', 'old')).status).toBe(201);
    const started = await canary('front', {});
    expect(started.status).toBe(200);
    const judgedBefore = upstream.requests.filter((r) => r.body?.model === 'judge-upstream').length;
    const decided = await runUntilDecided('front', 'new', 3);
    expect(decided).toMatchObject({ state: 'promoted', decision: { decision: 'promoted', reason: expect.stringContaining('not below it by more than 0.05') } });
    expect(decided.tally.candidate).toMatchObject({ sessions: 3, turns_scored: 3, mean: 0.8, scorer_errors: 0, scorers: [{ type: 'llm_judge', mean: 0.8, scored: 3 }] });
    expect(decided.tally.control).toMatchObject({ mean: 0.8 });
    expect(decided.tally.control.sessions).toBeGreaterThanOrEqual(1);
    expect(decided.tally.difference).toBe(0);
    // Every scored turn cost one judge call, and none was scored twice.
    const judged = upstream.requests.filter((r) => r.body?.model === 'judge-upstream').length - judgedBefore;
    expect(judged).toBe(decided.tally.candidate.turns_scored + decided.tally.control.turns_scored);
    expect((await app.call('GET', '/v2/agent_aliases/front')).body.policy.rules[0].targets).toEqual({ type: 'single', agent_key: 'new' });
    expect((await app.call('POST', '/v2/agent_aliases/front/sessions', { key: 'after-promotion' })).body.agent_key).toBe('new');
    const hook = await until('the promotion webhook', () => receiver.at('/canary').map((r) => JSON.parse(r.body)).find((b) => b.data.alias_key === 'front'), 30_000);
    expect(hook).toMatchObject({ type: 'alias.canary_decided', data: { alias_key: 'front', decision: 'promoted', candidate_agent_key: 'new', control_agent_key: 'old', figures: { candidate: { sessions: 3, mean: 0.8 } } } });
  }, 180_000);

  it('rolls back a candidate that scores worse: the policy is unchanged, the decision carries its figures', async () => {
    expect((await alias('back', 'old')).status).toBe(201);
    expect((await canary('back', { candidate_agent_key: 'worse', promote_after_sessions: 5, scorers: [judge, { type: 'structured_output_valid' }] })).status).toBe(200);
    const decided = await runUntilDecided('back', 'worse', 2);
    expect(decided).toMatchObject({ state: 'rolled_back', decision: { decision: 'rolled_back' } });
    expect(decided.tally.candidate).toMatchObject({ mean: 0.2, scorers: [{ type: 'llm_judge', mean: 0.2 }, { type: 'structured_output_valid', mean: null, scored: 0 }] });
    expect(decided.tally.control).toMatchObject({ mean: 0.8 });
    expect(decided.tally.difference).toBe(-0.6);
    expect((await app.call('GET', '/v2/agent_aliases/back')).body.policy.rules[0].targets).toEqual({ type: 'single', agent_key: 'old' });
    expect((await app.call('POST', '/v2/agent_aliases/back/sessions', { key: 'after-rollback' })).body.agent_key).toBe('old');
    const hook = await until('the rollback webhook', () => receiver.at('/canary').map((r) => JSON.parse(r.body)).find((b) => b.data.alias_key === 'back'), 30_000);
    expect(hook.data).toMatchObject({ decision: 'rolled_back', candidate_agent_key: 'worse', figures: { difference: -0.6 } });
  }, 180_000);

  it('scores with a lambda tool: it gets the turn and answers the score', async () => {
    const code = [
      'from typing import Optional, TypedDict',
      '',
      'class Turn(TypedDict, total=False):',
      '    input: str',
      '    answer: Optional[str]',
      '',
      'def process(turn: Turn, baseline: Optional[Turn] = None) -> dict:',
      '    """Scores a turn.',
      '',
      '    Args:',
      '        turn: The turn.',
      '        baseline: The baseline turn.',
      '    """',
      '    answer = turn.get("answer") or ""',
      '    return {"score": 0.6 if "drawer" in answer else 0.1, "reason": "mentions the drawer"}',
      '',
    ].join('\n');
    const tool = await app.call('POST', '/v2/tools', { type: 'lambda', name: 'drawer_score', description: 'Scores a turn by whether it names the drawer', code });
    expect([tool.status, tool.body.messages]).toEqual([201, undefined]);
    expect((await alias('lam', 'old')).status).toBe(201);
    expect((await canary('lam', { weight: 1, scorers: [{ type: 'lambda', tool_id: tool.body.id }], promote_after_sessions: 100 })).status).toBe(200);
    expect(await converse('lam')).toBe('new');
    const scored = await until('the lambda score', async () => {
      const got = (await app.call('GET', '/v2/agent_aliases/lam/canary')).body.tally.candidate;
      return got.turns_scored ? got : undefined;
    }, 60_000, 200);
    expect(scored).toMatchObject({ turns_scored: 1, scorer_errors: 0, mean: 0.6, scorers: [{ type: 'lambda', mean: 0.6, scored: 1 }] });
  }, 120_000);
});
