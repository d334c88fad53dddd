import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/platform';
import { Replays } from '@lib/agents';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { now, percentile, report, round, serviceEnv } from './common';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';

async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json', 'x-api-key': KEY }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

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
    const httpMs: number[] = [];
    const inProcessMs: number[] = [];
    for (let r = 0; r < rounds + 5; r++) {
      let t = now();
      const res = await ok('POST', '/v2/agents/bench/sessions/original/replay', {});
      const http = now() - t;
      if (res.diff.totals.same_events !== turnsPerSession) throw new Error(`the replay is not faithful: ${JSON.stringify(res.diff.totals)}`);
      t = now();
      const direct = await replays.replay('bench', 'original', { agentRevision: 'current', mode: 'recorded', allowSideEffects: false }, ctx() as never);
      const inProcess = now() - t;
      if (direct.diff.totals.same_events !== turnsPerSession) throw new Error('the in-process replay is not faithful');
      // The first rounds warm the caches and the JIT.
      if (r >= 5) {
        httpMs.push(http / turnsPerSession);
        inProcessMs.push(inProcess / turnsPerSession);
      }
    }
    if (upstream.chatRequests().length !== requests) throw new Error('a recorded replay asked the model');
    const p = (xs: number[], q: number) => round(percentile(xs, q), 3);
    report(
      'replay',
      [
        { measure: 'recorded replay per turn, HTTP (session, turns, diff)', p50_ms: p(httpMs, 50), p99_ms: p(httpMs, 99) },
        { measure: 'recorded replay per turn, use case in process', p50_ms: p(inProcessMs, 50), p99_ms: p(inProcessMs, 99) },
      ],
      { rounds, turnsPerSession, eventsPerTurn: 8, synchronous: config.sqliteSynchronous, modelRequestsDuringReplays: upstream.chatRequests().length - requests, bar: 'recorded replay ≤ 2 ms per recorded turn' },
    );
  } finally {
    await app.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
