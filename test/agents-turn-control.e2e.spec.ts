import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { spawnService } from './support/service-process';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';

type Ev = { type: string; [k: string]: any };

/** Steering and interrupting a running turn, and a turn cut by SIGKILL, after restart. */
describe('agent turn control', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'a', name: 'a', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const say = (key: string, text: string, extra: object = {}) => app.call('POST', `/v2/agents/a/sessions/${key}/events`, { messages: [{ type: 'text', content: text }], ...extra });
  const status = async (key: string) => (await app.call('GET', `/v2/agents/a/sessions/${key}`)).body.status as string;

  it('refuses a second input while a turn runs, and a steer joins the running turn', async () => {
    await app.call('POST', '/v2/agents/a/sessions', { key: 'steer' });
    const calls = upstream.chatRequests().length;
    upstream.enqueue({ content: 'Looking at Paris.', firstByteDelayMs: 1500 }, { content: 'Lyon, then.' });
    const running = say('steer', 'Weather in Paris?');
    await until('the turn', async () => (upstream.chatRequests().length > calls ? true : undefined));
    const plain = await say('steer', 'another');
    expect(plain.status).toBe(409);
    expect(plain.body.messages[0]).toMatch(/steer.*follow_up/);
    const steer = await say('steer', 'Actually, Lyon.', { behavior: 'steer' });
    expect(steer.status).toBe(201);
    expect(steer.body.events).toEqual([expect.objectContaining({ type: 'input_message', behavior: 'steer' })]);
    const done = await running;
    expect(done.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'input_message', 'agent_output', 'agent_output']);
    expect(done.body.events[3].content).toBe('Lyon, then.');
    const second = upstream.chatRequests().at(-1)!.body as any;
    expect(second.messages.map((m: any) => m.content)).toEqual(['Weather in Paris?', 'Looking at Paris.', 'Actually, Lyon.']);
  });

  it('a follow-up waits for the running turn, then runs its own', async () => {
    await app.call('POST', '/v2/agents/a/sessions', { key: 'follow' });
    upstream.enqueue({ content: 'first', firstByteDelayMs: 300 }, { content: 'second' });
    const calls = upstream.chatRequests().length;
    const running = say('follow', 'one');
    await until('the turn', async () => (upstream.chatRequests().length > calls ? true : undefined));
    const follow = await say('follow', 'two', { behavior: 'follow_up' });
    expect(follow.status).toBe(201);
    expect(follow.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
    expect((await running).body.events.map((e: Ev) => e.content ?? e.messages?.[0].content)).toEqual(['one', 'first']);
    expect(follow.body.events[1].content).toBe('second');
  });

  it('follow-ups are taken one at a time, in the order they arrived', async () => {
    await app.call('POST', '/v2/agents/a/sessions', { key: 'queue' });
    upstream.enqueue({ content: 'to zero', firstByteDelayMs: 400 }, { content: 'to one', firstByteDelayMs: 50 }, { content: 'to two', firstByteDelayMs: 50 }, { content: 'to three', firstByteDelayMs: 50 });
    const calls = upstream.chatRequests().length;
    const running = say('queue', 'zero');
    await until('the turn', async () => (upstream.chatRequests().length > calls ? true : undefined));
    const follows: Promise<{ status: number; body: any }>[] = [];
    for (const text of ['one', 'two', 'three']) {
      follows.push(say('queue', text, { behavior: 'follow_up' }));
      await new Promise((r) => setTimeout(r, 30));
    }
    const answers = await Promise.all(follows);
    expect((await running).status).toBe(201);
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    // Each follow-up had a turn of its own, in arrival order, and its answer is to it.
    expect(answers.map((a) => a.body.events.map((e: Ev) => e.content ?? e.messages?.[0].content))).toEqual([
      ['one', 'to one'],
      ['two', 'to two'],
      ['three', 'to three'],
    ]);
    const asked = upstream.chatRequests().slice(calls).map((r) => (r.body as any).messages.at(-1).content);
    expect(asked).toEqual(['zero', 'one', 'two', 'three']);
  });

  it('an interrupt stops the model call, is recorded, and the session takes input again', async () => {
    await app.call('POST', '/v2/agents/a/sessions', { key: 'stop' });
    const calls = upstream.chatRequests().length;
    upstream.enqueue({ hang: true });
    const running = say('stop', 'write me a novel');
    await until('the turn', async () => (upstream.chatRequests().length > calls ? true : undefined));
    expect(await status('stop')).toBe('running');
    const interrupt = await app.call('POST', '/v2/agents/a/sessions/stop/events', { type: 'interrupt' });
    expect(interrupt.status).toBe(201);
    expect(interrupt.body.events).toEqual([expect.objectContaining({ type: 'session_interrupted', reason: 'request' })]);
    const done = await running;
    expect(done.status).toBe(201);
    expect(done.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'session_interrupted']);
    await until('the upstream call to be cancelled', async () => (upstream.chatRequests().at(-1)!.aborted ? true : undefined));
    expect(await status('stop')).toBe('stopped');
    expect((await app.call('POST', '/v2/agents/a/sessions/stop/events', { type: 'interrupt' })).status).toBe(409);
    upstream.enqueue({ content: 'short one' });
    expect((await say('stop', 'a haiku then')).body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
  });

  it('a turn cut by SIGKILL is shown interrupted by crash after restart, and the session stays usable', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ars-agent-crash-'));
    const KEY = 'zut_agent_crash_key_0123456789abcdef';
    const env = { DATA_DIR: dataDir, ADMIN_API_KEY: KEY, LEASE_TTL_MS: '1000', LEASE_RENEW_MS: '300', WORKER_POLL_MS: '200' };
    const call = async (url: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, { method, headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    const first = await spawnService(env);
    try {
      expect((await call(first.url, 'POST', '/v2/llms', { name: 'm', model: 'x', uri: `${upstream.baseURL}/chat/completions` })).status).toBe(201);
      expect((await call(first.url, 'POST', '/v2/agents', { key: 'k', name: 'k', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
      expect((await call(first.url, 'POST', '/v2/agents/k/sessions', { key: 's' })).status).toBe(201);
      const calls = upstream.chatRequests().length;
      upstream.enqueue({ hang: true });
      void call(first.url, 'POST', '/v2/agents/k/sessions/s/events', { messages: [{ type: 'text', content: 'before the crash' }] }).catch(() => undefined);
      await until('the turn', async () => (upstream.chatRequests().length > calls ? true : undefined));
      first.child.kill('SIGKILL');
      await first.exited;
      const second = await spawnService(env);
      try {
        const events = await until('the crash to be recorded', async () => {
          const list = (await call(second.url, 'GET', '/v2/agents/k/sessions/s/events?limit=100')).body.events as Ev[];
          return list.some((e) => e.type === 'session_interrupted') ? list : undefined;
        });
        expect(events.map((e) => e.type)).toEqual(['input_message', 'session_interrupted']);
        expect(events[1].reason).toBe('crash');
        expect((await call(second.url, 'GET', '/v2/agents/k/sessions/s')).body.status).toBe('stopped');
        upstream.enqueue({ content: 'after the crash' });
        const next = await call(second.url, 'POST', '/v2/agents/k/sessions/s/events', { messages: [{ type: 'text', content: 'still there?' }] });
        expect(next.status).toBe(201);
        expect(next.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
        // The model sees what was stored before the crash: the first input, then the new one.
        expect((upstream.chatRequests().at(-1)!.body as any).messages.map((m: any) => m.content)).toEqual(['before the crash', 'still there?']);
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }
    } finally {
      if (first.child.exitCode === null) first.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** Compaction: automatic near the model's context limit, and on request; the model then reads the summary. */
describe('agent compaction', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'small', { capabilities: { context_limit: 4096 } });
    await app.call('POST', '/v2/agents', {
      key: 'c',
      name: 'c',
      model: { name: 'small' },
      tool_configurations: {},
      first_step_name: 'main',
      steps: { main: { instructions: [], reminders: [{ type: 'templated', template: 'R', hooks: ['input_message'], skip_first: 1 }] } },
      compaction: { threshold_percent: 50, keep_recent_inputs: 1, compaction_message: 'Keep order numbers.' },
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const say = (key: string, text: string) => app.call('POST', `/v2/agents/c/sessions/${key}/events`, { messages: [{ type: 'text', content: text }] });

  it('compacts when the conversation nears the context limit, hides what it replaced, and resets reminder counters', async () => {
    await app.call('POST', '/v2/agents/c/sessions', { key: 'auto' });
    // About 1,200 tokens each: one fits under half of the 4,096-token window, two do not.
    const big = (n: number) => `order ${n}: ${'lorem ipsum '.repeat(400)}`;
    upstream.enqueue({ content: 'noted 1' });
    expect((await say('auto', big(1))).body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'agent_output']);
    const calls = upstream.chatRequests().length;
    upstream.enqueue({ content: 'SUMMARY: order 1 was placed.' }, { content: 'noted 2' });
    const second = await say('auto', big(2));
    expect(second.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'compaction', 'agent_output']);
    expect(second.body.events[1]).toMatchObject({ turns_compacted: 1, events_compacted: 2, summary_text: 'SUMMARY: order 1 was placed.', summary_key: expect.any(String) });
    const [summaryCall, answerCall] = upstream.chatRequests().slice(calls).map((r) => r.body as any);
    expect(summaryCall.messages[0].content).toContain('Keep order numbers.');
    expect(summaryCall.messages[1].content).toContain('order 1');
    expect(summaryCall.tools).toBeUndefined();
    expect(answerCall.messages.map((m: any) => m.content.slice(0, 40))).toEqual(['Summary of the conversation before this ', 'order 2: lorem ipsum lorem ipsum lorem i']);
    expect(answerCall.messages[0].content).toContain('SUMMARY: order 1 was placed.');
    const visible = (await app.call('GET', '/v2/agents/c/sessions/auto/events?limit=100')).body.events as Ev[];
    expect(visible.map((e) => e.type)).toEqual(['input_message', 'compaction', 'agent_output']);
    expect((await app.call('GET', '/v2/agents/c/sessions/auto/events?limit=100&include_hidden=true')).body.events).toHaveLength(5);
    // The reminder's skip_first counts again from the compaction: the input kept from before it has none, the
    // first input after it is skipped, the second gets it.
    upstream.enqueue({ content: 'ok' }, { content: 'ok' });
    await say('auto', 'three');
    await say('auto', 'four');
    const users = (upstream.chatRequests().at(-1)!.body as any).messages.filter((m: any) => m.role === 'user').slice(1).map((m: any) => m.content.slice(-30));
    expect(users.map((u: string) => u.includes('<reminder>R</reminder>'))).toEqual([false, false, true]);
  });

  it('compacts on request, as a turn of its own', async () => {
    await app.call('POST', '/v2/agents/c/sessions', { key: 'asked' });
    upstream.enqueue({ content: 'a1' }, { content: 'a2' });
    await say('asked', 'q1');
    await say('asked', 'q2');
    upstream.enqueue({ content: 'short summary' });
    const res = await app.call('POST', '/v2/agents/c/sessions/asked/events', { type: 'compact', compaction_message: 'Be short.' });
    expect(res.status).toBe(201);
    expect(res.body.events.map((e: Ev) => e.type)).toEqual(['compaction']);
    expect(res.body.events[0]).toMatchObject({ turns_compacted: 1, events_compacted: 2 });
    expect((upstream.chatRequests().at(-1)!.body as any).messages[0].content).toContain('Be short.');
  });
});
