import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

const run = promisify(execFile);

/** A docs example block between its markers (`<!-- doc-test:<name>:start -->`), its shell commands. */
function docScript(file: string, name: string): string {
  const doc = readFileSync(join(__dirname, '..', 'docs', file), 'utf8');
  const block = doc.split(`<!-- doc-test:${name}:start -->`)[1]?.split(`<!-- doc-test:${name}:end -->`)[0];
  const script = block?.match(/```sh\n([\s\S]*?)```/)?.[1];
  if (!script) throw new Error(`docs/${file} has no doc-test:${name} block`);
  return script;
}

type Ev = { type: string; id: string; content?: string };

/**
 * The requests docs/agents.md (forks, as_of, memory), docs/schedules.md and docs/aliases.md (canary) give to paste, run as written with bash and
 * curl against the service (issue 44: the docs had none), on the README's `helper` agent and its session `chat-1`.
 */
describe('docs examples', () => {
  let app: TestApp;
  let model: ScriptedOpenAIServer;
  const runBlock = async (file: string, name: string) => {
    // One JSON document per line: curl itself prints no trailing newline.
    const script = `curl() { command curl "$@"; echo; }\n${docScript(file, name)}`;
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { env: { ...process.env, BASE: app.url, KEY: app.key }, cwd: app.dataDir });
    return stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  };

  beforeAll(async () => {
    app = await startTestApp();
    model = await ScriptedOpenAIServer.start();
    await registerScripted(app, model, 'local');
    const helper = { key: 'helper', name: 'Helper', model: { name: 'local' }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Answer ${session.metadata.user}.' }] } } };
    expect((await app.call('POST', '/v2/agents', helper)).status).toBe(201);
    expect((await app.call('POST', '/v2/agents/helper/sessions', { key: 'chat-1', metadata: { user: 'Ada' } })).status).toBe(201);
    model.enqueue({ content: 'The moon pulls the oceans.' }, { content: 'Thanks.' });
    await app.call('POST', '/v2/agents/helper/sessions/chat-1/events', { messages: [{ type: 'text', content: 'What causes tides?' }] });
    await app.call('POST', '/v2/agents/helper/sessions/chat-1/events', { messages: [{ type: 'text', content: 'Thank you' }] });
  });
  afterAll(async () => {
    await app?.close();
    await model?.close();
  });

  it('docs/agents.md forks a session at an event, goes on in the fork, and reads the parent as it was', async () => {
    const parent = (await app.call('GET', '/v2/agents/helper/sessions/chat-1/events?limit=100')).body.events as Ev[];
    const answer = parent.find((e) => e.type === 'agent_output')!;
    model.enqueue({ content: 'Spring tides come with a full or new moon.' });
    const [created, turn, asOf, eventsThen] = await runBlock('agents.md', 'forks');
    expect(created).toMatchObject({ key: 'chat-1-retry', agent_key: 'helper', metadata: { user: 'Ada' } });
    expect(turn.events.map((e: Ev) => [e.type, e.content ?? ''])).toEqual([
      ['input_message', ''],
      ['agent_output', 'Spring tides come with a full or new moon.'],
    ]);
    // The fork's model saw chat-1 up to its first answer, not what came after.
    const sent = (model.chatRequests().at(-1)!.body as { messages: { content: string }[] }).messages.map((m) => m.content);
    expect(sent).toEqual(['Answer Ada.', 'What causes tides?', 'The moon pulls the oceans.', 'And the spring tides?']);
    expect(asOf).toMatchObject({ key: 'chat-1', as_of: answer.id, status: 'stopped' });
    expect(eventsThen.events.map((e: Ev) => e.id)).toEqual(parent.slice(0, 2).map((e) => e.id));
    expect((await app.call('GET', '/v2/agents/helper/sessions/chat-1/events?limit=100')).body.events).toEqual(parent);
  });

  it('docs/schedules.md creates a cron and an interval schedule, lists, pauses, reads executions, deletes', async () => {
    const [morning, sixHourly, list, paused, executions, deleted] = await runBlock('schedules.md', 'schedules');
    expect(morning).toMatchObject({ key: 'morning', enabled: true, schedule: { type: 'cron', cron_expression: '0 7 * * 1-5' }, session_metadata: { user: 'Ada' } });
    expect(sixHourly).toMatchObject({ key: 'six-hourly', schedule: { type: 'interval', interval: 'PT6H' } });
    expect(list.schedules.map((s: { key: string }) => s.key).sort()).toEqual(['morning', 'six-hourly']);
    expect(paused).toMatchObject({ key: 'six-hourly', enabled: false, schedule: { type: 'interval', interval: 'P1D' } });
    expect(executions).toMatchObject({ executions: [] });
    expect(deleted).toBe(204);
    expect((await app.call('GET', '/v2/agents/helper/schedules/six-hourly')).status).toBe(404);
  });

  it('docs/aliases.md starts a canary, reads its tally and ends it', async () => {
    await registerScripted(app, model, 'judge');
    expect((await app.call('POST', '/v2/agents', { key: 'support-v2', name: 'Support v2', model: { name: 'local' }, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
    expect((await app.call('POST', '/v2/agent_aliases', { key: 'support', name: 'Support', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'helper' } }] } })).status).toBe(201);
    const [started, read] = await runBlock('aliases.md', 'canary');
    expect(started).toMatchObject({ alias_key: 'support', state: 'running', candidate_agent_key: 'support-v2', control_agent_key: 'helper', weight: 0.1, promote_after_sessions: 50, max_score_drop: 0.02 });
    expect(read).toMatchObject({ id: started.id, state: 'running', tally: { candidate: { sessions: 0 }, control: { sessions: 0 }, difference: null } });
    expect((await app.call('GET', '/v2/agent_aliases/support/canary')).body.state).toBe('stopped');
  });

  it('docs/agents.md starts an evaluation of the current revision over the sessions of Ada, which the worker completes', async () => {
    const [created, listed] = await runBlock('agents.md', 'evaluations');
    expect(created).toMatchObject({ agent_key: 'helper', name: 'tone', mode: 'live_model', scorers: [{ type: 'llm_judge', llm_name: 'local' }, { type: 'same_tool_calls' }] });
    expect(created.sessions.map((x: { session_key: string }) => x.session_key)).toContain('chat-1');
    expect(listed.evaluations[0].id).toBe(created.id);
    let got: Record<string, any> = created;
    for (const until = Date.now() + 30_000; got.status !== 'completed' && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) got = (await app.call('GET', `/v2/agents/helper/evaluations/${created.id}`)).body;
    expect(got.progress).toEqual({ total: created.progress.total, scored: created.progress.total, failed: 0 });
    expect(got.aggregates.map((a: { scorer: { type: string } }) => a.scorer.type)).toEqual(['llm_judge', 'same_tool_calls']);
  });
  it('docs/agents.md gives an agent memory, the model edits it, and an operator reads, writes, reverts and undoes a session', async () => {
    model.enqueue({ toolCalls: [{ id: 'm1', name: 'memory_append', arguments: '{"block":"facts","text":"Ada likes tea."}' }] }, { content: 'I will remember that.' });
    const [agent, session, turn, blocks, history, put, reverted, own, changes, undone] = await runBlock('agents.md', 'memory');
    expect(agent).toMatchObject({ key: 'coach', memory: { blocks: [{ key: 'persona' }, { key: 'facts' }, { key: 'prefs' }, { key: 'scratch' }] } });
    expect(session).toMatchObject({ key: 's1' });
    expect(turn.events.map((e: Ev) => e.type)).toEqual(['input_message', 'tool_input', 'tool_output', 'agent_output']);
    expect(blocks.blocks.map((b: { key: string; value: string }) => [b.key, b.value])).toEqual([
      ['persona', 'I am Coach, a patient tutor.'],
      ['facts', 'Ada likes tea.'],
    ]);
    expect(history).toEqual({ changes: [expect.objectContaining({ revision: 1, operation: 'append', changed_by: expect.objectContaining({ session_key: 's1' }) })], metadata: {} });
    expect([put.value, put.revision, reverted.value, reverted.revision]).toEqual(['Ada likes green tea.', 2, 'Ada likes tea.', 3]);
    expect(own.blocks).toEqual([expect.objectContaining({ key: 'scratch', value: '' })]);
    expect(changes.changes).toEqual([expect.objectContaining({ block: 'facts', revision: 1 })]);
    expect(undone).toEqual({ reverted: [{ block: 'facts', scope: 'agent', revision: 4, reverted_to: 0, value: '' }] });
    expect((model.chatRequests().at(-1)!.body as { messages: { content: string }[] }).messages[0].content).toContain('Known facts: Ada likes tea.');
  });
});
