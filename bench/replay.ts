import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_STORE, EventStore, loadConfig, PROJECTION_PROGRESS, ProjectionRuntime } from '@lib/platform';
import { Replays } from '@lib/agents';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { jsonCall, now, percentile, report, round, serviceEnv } from './common';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';

const call = (url: string, method: string, path: string, body?: unknown) => jsonCall(url, KEY, method, path, body);

/**
 * The cost of a `recorded` replay per recorded turn (docs/replay.md; bar ≤ 2 ms): a 10-turn session, each turn a
 * tool call, its output and an answer in two steps (a step transition), replayed with the same revision again and
 * again, through HTTP (`POST …/replay`: the replay session's creation and the diff included) and through the use case
 * in process. The scripted model is asked nothing during the replays (checked).
 */
export async function replayBench(args: string[]): Promise<void> {
  const rounds = Number(args[0] ?? 50);
  const turnsPerSession = 10;
  const upstream = await ScriptedOpenAIServer.start();
  const dir = mkdtempSync(join(tmpdir(), 'bench-replay-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: KEY, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS ?? 'FULL', ...serviceEnv() });
  const { app, url } = await startApp(config, 'all', createLogger('silent'), () => undefined);
  try {
    const ok = async (method: string, path: string, body?: unknown, status = 201) => {
      const res = await call(url, method, path, body);
      if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
      return res.json;
    };
    await ok('POST', '/v2/llms', { name: 'bench', model: 'upstream-model', uri: `${upstream.baseURL}/chat/completions` });
    await ok('POST', '/v2/corpora', { key: 'kb', name: 'KB' });
    await ok('POST', '/v2/agents', {
      key: 'bench',
      name: 'Bench',
      model: { name: 'bench' },
      tool_configurations: { docs: { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'kb' }] } } } },
      first_step_name: 'main',
      steps: {
        main: { instructions: [{ type: 'inline', template: 'Answer for a ${session.metadata.tier} customer.' }], next_steps: [{ step_name: 'short' }] },
        short: { instructions: [{ type: 'inline', template: 'Say it in one line.' }], reentry_step: 'main' },
      },
    });
    await ok('POST', '/v2/agents/bench/sessions', { key: 'original', metadata: { tier: 'gold' } });
    for (let i = 0; i < turnsPerSession; i++) {
      upstream.enqueue({ toolCalls: [{ id: `c${i}`, name: 'docs', arguments: JSON.stringify({ query: `question ${i}` }) }], usage: { prompt_tokens: 40, completion_tokens: 8 } }, { content: `Answer ${i}: refunds take 14 days.` }, { content: `Answer ${i}.` });
      await ok('POST', '/v2/agents/bench/sessions/original/events', { messages: [{ type: 'text', content: `Question ${i}: how long do refunds take?` }] });
    }
    const requests = upstream.chatRequests().length;
    const replays = app.get(Replays, { strict: false });
    const ctx = () => ({ actor: { type: 'api_key' as const, id: 'bench' }, requestId: 'bench', commandId: `bench-${Math.random()}`, now: new Date() });
    // Each measure starts with every projection caught up, so none pays for the read-model work another left behind.
    const runtime = app.get<ProjectionRuntime>(PROJECTION_PROGRESS, { strict: false });
    const log = app.get<EventStore>(EVENT_STORE, { strict: false });
    const settle = async () => {
      if (!(await runtime.waitFor(await log.headPosition(), runtime.names(), 30_000))) throw new Error('the projections did not catch up');
    };
    // The in-process replay until every projection has its events (what a reader of the read models waits for).
    const settledMs: number[] = [];
    const httpMs: number[] = [];
    const inProcessMs: number[] = [];
    // CPU time of the process (every thread: the service runs in it) per turn: what a loaded machine does not inflate.
    const cpuMs: number[] = [];
    // For scale in the same run (a loaded machine slows everything alike): one plain live turn, the model answering at once.
    const plainMs: number[] = [];
    upstream.fallback = { content: 'Refunds take 14 days.', usage: { prompt_tokens: 40, completion_tokens: 8 } };
    await ok('POST', '/v2/agents', { key: 'plain', name: 'Plain', model: { name: 'bench' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Answer briefly.' }] } } });
    for (let r = 0; r < rounds + 5; r++) {
      if (r % 10 === 0) await ok('POST', '/v2/agents/plain/sessions', { key: `plain${r}` });
      await settle();
      let t = now();
      await ok('POST', `/v2/agents/plain/sessions/plain${r - (r % 10)}/events`, { messages: [{ type: 'text', content: `Question ${r}` }] });
      if (r >= 5) plainMs.push(now() - t);
      await settle();
      t = now();
      const res = await ok('POST', '/v2/agents/bench/sessions/original/replay', {});
      const http = now() - t;
      if (res.diff.totals.same_events !== turnsPerSession) throw new Error(`the replay is not faithful: ${JSON.stringify(res.diff.totals)}`);
      await settle();
      t = now();
      const cpu = process.cpuUsage();
      const direct = await replays.replay('bench', 'original', { agentRevision: 'current', mode: 'recorded', allowSideEffects: false }, ctx() as never);
      const inProcess = now() - t;
      await settle();
      const settled = now() - t;
      const used = process.cpuUsage(cpu);
      if (direct.diff.totals.same_events !== turnsPerSession) throw new Error('the in-process replay is not faithful');
      // The first rounds warm the caches and the JIT.
      if (r >= 5) {
        httpMs.push(http / turnsPerSession);
        inProcessMs.push(inProcess / turnsPerSession);
        settledMs.push(settled / turnsPerSession);
        cpuMs.push((used.user + used.system) / 1000 / turnsPerSession);
      }
    }
    if (upstream.chatRequests().length !== requests + rounds + 5) throw new Error('a recorded replay asked the model');
    const p = (xs: number[], q: number) => round(percentile(xs, q), 3);
    report(
      'replay',
      [
        { measure: 'recorded replay per turn, HTTP (session, turns, diff)', p50_ms: p(httpMs, 50), p99_ms: p(httpMs, 99) },
        { measure: 'recorded replay per turn, use case in process', p50_ms: p(inProcessMs, 50), p99_ms: p(inProcessMs, 99) },
        { measure: 'recorded replay per turn, in process until every projection has it', p50_ms: p(settledMs, 50), p99_ms: p(settledMs, 99) },
        { measure: 'recorded replay per turn, CPU time of the process (until projected)', p50_ms: p(cpuMs, 50), p99_ms: p(cpuMs, 99) },
        { measure: 'for scale: one plain live turn (HTTP, model answering at once)', p50_ms: p(plainMs, 50), p99_ms: p(plainMs, 99) },
      ],
      { rounds, turnsPerSession, eventsPerTurn: 8, synchronous: config.sqliteSynchronous, modelRequestsDuringReplays: upstream.chatRequests().length - requests - rounds - 5, bar: 'recorded replay ≤ 2 ms per recorded turn', loadAverage: (await import('node:os')).loadavg().map((l) => round(l, 2)) },
    );
  } finally {
    await app.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
