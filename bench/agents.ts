import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/platform';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { now, percentile, report, round, serviceEnv } from './common';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = { 'x-api-key': KEY }): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

export interface AgentFigures {
  /** Per measured turn through HTTP, ms. */
  readonly turnMs: number[];
  /** The same model call sent straight to the upstream, interleaved with the turns, ms. */
  readonly directMs: number[];
  /** 50 sessions at once: turns completed and events appended per second. */
  readonly concurrent: { readonly turnsPerS: number; readonly eventsPerS: number };
  /** Absent when no idle sessions were asked for. */
  readonly idle?: { readonly sessions: number; readonly heapBytesPerSession: number; readonly rssBytesPerSession: number; readonly gc: boolean };
  readonly synchronous: string;
  readonly perSessionTurns: number;
}

/**
 * The agent loop's own cost: a turn (input stored, lease taken, prompt built, one model call through the
 * language-model layer, answer stored, turn ended) against the same chat request sent straight to a scripted
 * upstream that answers at once, interleaved so both see the same machine noise; then events appended per
 * second by 50 sessions talking at once, and the memory an idle session holds.
 */
export async function agentsBench(args: string[]): Promise<void> {
  const turns = Number(args[0] ?? 1000);
  const concurrentSeconds = Number(args[1] ?? 10);
  const idleSessions = Number(args[2] ?? 2000);
  const f = await measureAgents({ turns, concurrentSeconds, idleSessions });
  const overhead = f.turnMs.map((t, i) => t - f.directMs[i]);
  const p = (xs: number[], q: number) => round(percentile(xs, q), 3);
  report(
    'agents',
    [
      { measure: 'turn (HTTP, one model call)', p50_ms: p(f.turnMs, 50), p99_ms: p(f.turnMs, 99) },
      { measure: 'same model call, direct', p50_ms: p(f.directMs, 50), p99_ms: p(f.directMs, 99) },
      { measure: 'turn overhead beyond the model', p50_ms: p(overhead, 50), p99_ms: p(overhead, 99) },
      { measure: '50 concurrent sessions', turns_per_s: f.concurrent.turnsPerS, events_appended_per_s: f.concurrent.eventsPerS },
      ...(f.idle ? [{ measure: `${f.idle.sessions} idle sessions`, heap_bytes_per_session: f.idle.heapBytesPerSession, rss_bytes_per_session: f.idle.rssBytesPerSession, gc: f.idle.gc }] : []),
    ],
    { turns, perSessionTurns: f.perSessionTurns, synchronous: f.synchronous, bar: 'turn overhead p50 ≤ 10 ms' },
  );
}

/**
 * The figures of `agentsBench` from one service started for them; `env` adds service settings (the PostgreSQL
 * comparison's POSTGRES_URL). `idleSessions` 0 skips the memory part.
 */
export async function measureAgents(options: { turns: number; concurrentSeconds: number; idleSessions: number; env?: Record<string, string> }): Promise<AgentFigures> {
  const { turns, concurrentSeconds, idleSessions, env = {} } = options;
  const upstream = await ScriptedOpenAIServer.start();
  upstream.fallback = { content: 'Refunds are paid within 14 days.', usage: { prompt_tokens: 40, completion_tokens: 8 } };
  const dir = mkdtempSync(join(tmpdir(), 'bench-agents-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: KEY, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_TOOLS_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_PIPELINES_ALLOWED_HOSTS: '127.0.0.1', SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS ?? 'FULL', ...serviceEnv(), ...env });
  const { app, url, infra } = await startApp(config, 'all', createLogger('silent'), () => undefined);
  const headPosition = () => infra.events.headPosition();
  try {
    if ((await post(url, '/v2/llms', { name: 'bench', model: 'upstream-model', uri: `${upstream.baseURL}/chat/completions` })).status !== 201) throw new Error('register failed');
    const agent = await post(url, '/v2/agents', {
      key: 'bench',
      name: 'Bench',
      model: { name: 'bench' },
      tool_configurations: {},
      first_step_name: 'main',
      steps: { main: { instructions: [{ type: 'inline', template: 'Answer for a ${session.metadata.tier} customer.' }], reminders: [{ type: 'templated', template: 'Be brief.', hooks: ['input_message'], fire_every: 2 }] } },
    });
    if (agent.status !== 201) throw new Error(`agent: ${JSON.stringify(agent.json)}`);
    const requests = upstream.requests;
    const session = async (key: string) => {
      const res = await post(url, '/v2/agents/bench/sessions', { key, metadata: { tier: 'gold' } });
      if (res.status !== 201) throw new Error(`session ${key}: ${res.status}`);
    };
    const turn = async (key: string, i: number) => {
      const t = now();
      const res = await post(url, `/v2/agents/bench/sessions/${key}/events`, { messages: [{ type: 'text', content: `Question ${i}: how long do refunds take?` }] });
      if (res.status !== 201) throw new Error(`turn: ${res.status} ${JSON.stringify(res.json)}`);
      return now() - t;
    };
    // The same model call a turn makes (system, history of this size, the new input), straight to the upstream.
    const direct = async (history: number) => {
      const messages = [{ role: 'system', content: 'Answer for a gold customer.' }];
      for (let h = 0; h < history; h++) messages.push({ role: 'user', content: `Question ${h}: how long do refunds take?` }, { role: 'assistant', content: 'Refunds are paid within 14 days.' });
      messages.push({ role: 'user', content: 'Question: how long do refunds take?' });
      const t = now();
      const res = await fetch(`${upstream.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'upstream-model', messages }) });
      await res.text();
      return now() - t;
    };
    const turnMs: number[] = [];
    const directMs: number[] = [];
    const perSession = 10;
    for (let i = 0; i < turns + 100; i++) {
      if (i % perSession === 0) await session(`t${i / perSession}`);
      const key = `t${Math.floor(i / perSession)}`;
      const history = i % perSession;
      let a: number;
      let b: number;
      if (i % 2) {
        a = await direct(history);
        b = await turn(key, i);
      } else {
        b = await turn(key, i);
        a = await direct(history);
      }
      if (i >= 100) {
        directMs.push(a);
        turnMs.push(b);
      }
      requests.length = 0;
    }

    // 50 sessions at once, each sending its next input as soon as its turn ended.
    const sessions = 50;
    for (let s = 0; s < sessions; s++) await session(`c${s}`);
    const before = await headPosition();
    const deadline = now() + concurrentSeconds * 1000;
    let completed = 0;
    const started = now();
    await Promise.all(
      Array.from({ length: sessions }, async (_, s) => {
        for (let i = 0; now() < deadline; i++) {
          // A new session every 20 turns keeps prompts at the size of the latency run.
          const key = `c${s}-${Math.floor(i / 20)}`;
          if (i % 20 === 0) await session(key);
          await turn(key, i);
          completed++;
          requests.length = 0;
        }
      }),
    );
    const elapsed = (now() - started) / 1000;
    const appended = (await headPosition()) - before;

    const concurrent = { turnsPerS: round(completed / elapsed, 1), eventsPerS: round(appended / elapsed, 1) };

    // Idle sessions: each created and answered once, then left alone.
    let idle: AgentFigures['idle'];
    if (idleSessions > 0) {
      (globalThis as { gc?: () => void }).gc?.();
      const heapBefore = process.memoryUsage().heapUsed;
      const rssBefore = process.memoryUsage().rss;
      for (let s = 0; s < idleSessions; s++) {
        await session(`idle${s}`);
        await turn(`idle${s}`, 0);
        requests.length = 0;
      }
      (globalThis as { gc?: () => void }).gc?.();
      idle = {
        sessions: idleSessions,
        heapBytesPerSession: Math.round((process.memoryUsage().heapUsed - heapBefore) / idleSessions),
        rssBytesPerSession: Math.round((process.memoryUsage().rss - rssBefore) / idleSessions),
        gc: typeof (globalThis as { gc?: unknown }).gc === 'function',
      };
    }
    return { turnMs, directMs, concurrent, idle, synchronous: config.sqliteSynchronous, perSessionTurns: perSession };
  } finally {
    await app.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

