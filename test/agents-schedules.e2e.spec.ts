import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { spawnService, ServiceProcess } from './support/service-process';
import { startTestApp, TestApp } from './support/test-app';
import { sleep, until } from './support/wait';

/** Issue 16, schedules (docs/schedules.md): a test-only minimum interval of one second lets them fire in a test. */

describe('agent schedules', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { SCHEDULE_MIN_INTERVAL_SECONDS: '1', WORKER_POLL_MS: '200' } });
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'reporter', name: 'reporter', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const schedule = (extra: Record<string, unknown> = {}) => ({ name: 'Pulse', message: [{ type: 'text', content: 'Report.' }], schedule: { type: 'interval', interval: 'PT2S' }, ...extra });
  const sessionsOf = async (scheduleKey: string) => {
    const all = (await app.call('GET', '/v2/agents/reporter/sessions?limit=100')).body.sessions as any[];
    return all.filter((s) => s.metadata?.scheduled_execution?.schedule_key === scheduleKey);
  };

  it('refuses a schedule that is not an ISO 8601 interval or cron expression, naming the field, and stores nothing', async () => {
    for (const [spec, field] of [
      [{ type: 'interval', interval: 'every hour' }, 'schedule.interval'],
      [{ type: 'interval', interval: 'PT0S' }, 'schedule.interval'],
      [{ type: 'interval' }, 'schedule.interval'],
      [{ type: 'weekly' }, 'schedule.type'],
      [{ type: 'cron', cron_expression: '99 * * * *' }, 'schedule.cron_expression'],
    ] as const) {
      const res = await app.call('POST', '/v2/agents/reporter/schedules', schedule({ key: 'bad', schedule: spec }));
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.field_errors ?? {})).toContain(field);
    }
    expect((await app.call('POST', '/v2/agents/reporter/schedules', { name: 'x', schedule: { type: 'interval', interval: 'PT1H' } })).status).toBe(400);
    expect((await app.call('POST', '/v2/agents/nobody/schedules', schedule())).status).toBe(404);
    expect((await app.call('GET', '/v2/agents/reporter/schedules')).body.schedules).toEqual([]);
  });

  it('fires at each due time: a new tagged session per execution with the message, executions listed newest first and pruned', async () => {
    const created = await app.call('POST', '/v2/agents/reporter/schedules', schedule({ key: 'pulse', session_metadata: { report: 'daily' }, max_executions_to_keep: 2 }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ key: 'pulse', agent_key: 'reporter', enabled: true, last_execution_at: null, max_executions_to_keep: 2, stall_timeout_seconds: 3600, schedule: { type: 'interval', interval: 'PT2S' } });
    const sessions = await until('three scheduled sessions', async () => {
      const found = await sessionsOf('pulse');
      return found.length >= 3 ? found : undefined;
    });
    const dueTimes = sessions.map((s) => Date.parse(s.metadata.scheduled_execution.due_at)).sort();
    expect(new Set(dueTimes).size).toBe(dueTimes.length);
    for (let i = 1; i < dueTimes.length; i++) expect((dueTimes[i] - dueTimes[i - 1]) % 2000).toBe(0);
    // The oldest session: the newest may still be waiting for the model's answer when the third appears (a slow machine).
    const oldest = [...sessions].sort((a, b) => Date.parse(a.metadata.scheduled_execution.due_at) - Date.parse(b.metadata.scheduled_execution.due_at))[0];
    expect(oldest.metadata).toMatchObject({ report: 'daily', scheduled_execution: { schedule_key: 'pulse', attempt: 1, run_id: expect.stringContaining('agent_schedule:') } });
    const events = await until('the first execution answered', async () => {
      const found = (await app.call('GET', `/v2/agents/reporter/sessions/${oldest.key}/events`)).body.events as any[];
      return found.length >= 2 ? found : undefined;
    });
    expect(events.map((e: any) => e.type)).toEqual(['input_message', 'agent_output']);
    expect(events[0].messages).toEqual([{ type: 'text', content: 'Report.' }]);
    // An execution is listed when it ends; three have started, so at least two end and only two are kept.
    const executions = await until('two executions ended', async () => {
      const found = (await app.call('GET', '/v2/agents/reporter/schedules/pulse/executions')).body.executions as any[];
      return found.length >= 2 ? found : undefined;
    });
    expect(executions).toHaveLength(2);
    expect(executions[0]).toMatchObject({ schedule_key: 'pulse', status: 'success', attempt: 1, error_message: null });
    expect(Date.parse(executions[0].executed_at)).toBeGreaterThanOrEqual(Date.parse(executions[1].executed_at));
    expect((await app.call('GET', '/v2/agents/reporter/schedules/pulse')).body.last_execution_at).toEqual(expect.any(String));
  }, 30_000);

  it('a disabled schedule does not fire; enabled again it counts from then; a deleted one is gone', async () => {
    expect((await app.call('PATCH', '/v2/agents/reporter/schedules/pulse', { enabled: false })).body).toMatchObject({ enabled: false, next_execution_at: null });
    await sleep(500);
    const before = (await sessionsOf('pulse')).length;
    await sleep(4_500);
    expect((await sessionsOf('pulse')).length).toBe(before);
    const enabled = await app.call('PATCH', '/v2/agents/reporter/schedules/pulse', { enabled: true });
    expect(Date.parse(enabled.body.next_execution_at)).toBeGreaterThan(Date.now());
    await until('a firing after re-enabling', async () => ((await sessionsOf('pulse')).length > before ? true : undefined));
    expect((await app.call('DELETE', '/v2/agents/reporter/schedules/pulse')).status).toBe(204);
    expect((await app.call('GET', '/v2/agents/reporter/schedules/pulse')).status).toBe(404);
    await sleep(500);
    const after = (await sessionsOf('pulse')).length;
    await sleep(3_000);
    expect((await sessionsOf('pulse')).length).toBe(after);
  }, 30_000);

  it("stops a deleted agent's schedules; a re-created agent of the same key does not inherit them", async () => {
    await app.call('POST', '/v2/agents', { key: 'temp', name: 'temp', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect((await app.call('POST', '/v2/agents/temp/schedules', schedule({ key: 'tick', schedule: { type: 'interval', interval: 'PT1H' } }))).status).toBe(201);
    expect((await app.call('DELETE', '/v2/agents/temp')).status).toBe(204);
    await app.call('POST', '/v2/agents', { key: 'temp', name: 'temp', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect((await app.call('GET', '/v2/agents/temp/schedules')).body.schedules).toEqual([]);
    expect((await app.call('GET', '/v2/agents/temp/schedules/tick')).status).toBe(404);
  });
});

/** Two worker processes and an API process on one store: each due time fires once; a restart resumes with one catch-up. */
describe('agent schedules across worker processes', () => {
  const KEY = 'zut_test_bootstrap_key_0123456789abcdef';
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-schedules-'));
  let upstream: ScriptedOpenAIServer;
  let env: Record<string, string>;
  const processes: ServiceProcess[] = [];
  let api: ServiceProcess;

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api.url}${path}`, { method, headers: { 'x-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const fired = async () => {
    const out: any[] = [];
    for (let after = 0; ; ) {
      const page = (await call('GET', `/v2/events?limit=1000&after=${after}&category=agent_schedule`)).body;
      out.push(...page.events.filter((e: any) => e.type === 'ScheduleFired'));
      if (!page.metadata.after) return out;
      after = page.metadata.after;
    }
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    env = { DATA_DIR: dataDir, ADMIN_API_KEY: KEY, SQLITE_SYNCHRONOUS: 'NORMAL', LEASE_TTL_MS: '1500', LEASE_RENEW_MS: '300', WORKER_POLL_MS: '300', SCHEDULE_MIN_INTERVAL_SECONDS: '1', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' };
    const first = await spawnService(env, 45_000, [], ['--role=worker']);
    processes.push(first);
    const [second, apiProcess] = await Promise.all([spawnService(env, 45_000, [], ['--role=worker']), spawnService(env, 45_000, [], ['--role=api'])]);
    processes.push(second, apiProcess);
    api = apiProcess;
    await until('the owner key', async () => ((await call('GET', '/v2/corpora')).status === 200 ? true : undefined));
    expect((await call('POST', '/v2/llms', { type: 'openai-compatible', name: 'm', model: 'm-upstream', uri: `${upstream.baseURL}/chat/completions` })).status).toBe(201);
    expect((await call('POST', '/v2/agents', { key: 'cron', name: 'cron', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await upstream?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('fires each due time exactly once with two workers, and after a restart runs one catch-up for the missed ones', async () => {
    expect((await call('POST', '/v2/agents/cron/schedules', { key: 'beat', name: 'Beat', message: [{ type: 'text', content: 'Tick.' }], schedule: { type: 'interval', interval: 'PT1S' } })).status).toBe(201);
    await until('five firings', async () => ((await fired()).length >= 5 ? true : undefined));
    const runs = await fired();
    const dueTimes = runs.map((e) => e.data.dueAt);
    expect(new Set(dueTimes).size).toBe(dueTimes.length);
    expect(new Set(runs.map((e) => e.data.runId)).size).toBe(runs.length);
    // Every run executes once: one successful attempt, one session each.
    const executions = await until('the runs executed', async () => {
      const list = (await call('GET', '/v2/agents/cron/schedules/beat/executions?limit=50')).body.executions as any[];
      return runs.every((r) => list.some((x) => x.workflow_run_id === r.data.runId)) ? list : undefined;
    });
    for (const r of runs) expect(executions.filter((x) => x.workflow_run_id === r.data.runId)).toEqual([expect.objectContaining({ status: 'success', attempt: 1 })]);

    // Both workers down for a few due times, then one back: one catch-up run standing for the missed ones.
    const workers = processes.filter((p) => p !== api);
    for (const w of workers) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    const firedBefore = (await fired()).length;
    await sleep(4_500);
    expect((await fired()).length).toBe(firedBefore);
    processes.push(await spawnService(env, 45_000, [], ['--role=worker']));
    const catchUp = await until('the catch-up firing', async () => (await fired())[firedBefore]);
    expect(catchUp.data.missed).toBeGreaterThanOrEqual(2);
    await until('the cadence resumed', async () => ((await fired()).length >= firedBefore + 3 ? true : undefined));
    const after = (await fired()).slice(firedBefore);
    // The catch-up is followed by due times after the restart, not by a backlog: none is due before the restart.
    for (const e of after.slice(1)) expect(Date.parse(e.data.dueAt)).toBeGreaterThan(Date.parse(catchUp.data.firedAt) - 1000);
    expect(new Set(after.map((e) => e.data.dueAt)).size).toBe(after.length);
  }, 90_000);
});
