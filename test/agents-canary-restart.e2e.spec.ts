import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { scratchDir } from './support/scratch-dir';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';

/**
 * Issue 45, canary aliases: the worker's scorer follows the log from its checkpoint, so turns that end while no
 * worker runs are scored when one starts again, and a turn already scored is not scored (nor judged) again.
 */
describe('canary scoring across a restart', () => {
  const dataDir = scratchDir('ars-canary-restart-');
  let upstream: ScriptedOpenAIServer;
  let app: TestApp | undefined;
  let n = 0;

  const judged = () => upstream.requests.filter((r) => r.body?.model === 'judge-upstream').length;
  const converse = async () => {
    const key = `s${++n}`;
    expect((await app!.call('POST', '/v2/agent_aliases/front/sessions', { key })).status).toBe(201);
    expect((await app!.call('POST', `/v2/agent_aliases/front/sessions/${key}/events`, { messages: [{ type: 'text', content: 'Where is the manual?' }] })).status).toBe(201);
  };
  const tally = async () => (await app!.call('GET', '/v2/agent_aliases/front/canary')).body.tally.candidate;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = (req) => (req.body?.model === 'judge-upstream' ? { content: '{"score": 0.7}' } : { content: 'In the drawer.' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('scores the turns that ended while the worker was down, once each', async () => {
    app = await startTestApp({ dataDir });
    for (const m of ['m', 'judge']) await registerScripted(app, upstream, m);
    for (const key of ['old', 'new']) expect((await app.call('POST', '/v2/agents', { key, name: key, model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
    expect((await app.call('POST', '/v2/agent_aliases', { key: 'front', name: 'front', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'old' } }] } })).status).toBe(201);
    const body = { candidate_agent_key: 'new', weight: 1, scorers: [{ type: 'llm_judge', llm_name: 'judge', rubric: 'Helpful?' }], promote_after_sessions: 100, max_score_drop: 0.05 };
    expect((await app.call('PUT', '/v2/agent_aliases/front/canary', body)).status).toBe(200);
    await converse();
    await converse();
    await until('two turns scored', async () => ((await tally()).turns_scored === 2 ? true : undefined), 30_000, 100);
    await app.close();

    // The API alone: turns end, nobody scores them.
    app = await startTestApp({ dataDir, role: 'api' });
    await converse();
    await converse();
    await converse();
    expect(await tally()).toMatchObject({ sessions: 2, turns_scored: 2 });
    await app.close();

    app = await startTestApp({ dataDir });
    const after = await until('five turns scored', async () => {
      const t = await tally();
      return t.turns_scored >= 5 ? t : undefined;
    }, 30_000, 100);
    expect(after).toMatchObject({ sessions: 5, turns_scored: 5, mean: 0.7 });
    // One judge call per turn: the two scored before the restart were not judged again.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(judged()).toBe(5);
    expect((await tally()).turns_scored).toBe(5);
  }, 180_000);
});
