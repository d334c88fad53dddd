import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/platform';
import { ChatCompletions } from '@lib/llms';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { jsonCall, now, percentile, report, round, serviceEnv } from './common';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';
const WINDOW = 4096;

const call = (url: string, method: string, path: string, body?: unknown) => jsonCall(url, KEY, method, path, body);

/**
 * The cost of compacting in pieces (docs/agents.md, "Compaction in pieces"): sessions grown on a model with a large
 * window, then compacted (`type: compact` up to their last event) on one whose window (4,096 tokens) is a tenth of
 * their history, and, for scale, sessions whose history fits one piece. Per compaction: the model calls it made,
 * the time through HTTP, the time inside the model calls (the LLM layer and the scripted model answering at once),
 * and the difference: what compacting costs besides the model.
 */
export async function compactionBench(args: string[]): Promise<void> {
  const rounds = Number(args[0] ?? 10);
  const upstream = await ScriptedOpenAIServer.start();
  // A summariser that answers at once with short notes of the order numbers it read.
  upstream.onChat = (req) => {
    const text = JSON.stringify(req.body?.messages ?? []);
    return { content: `notes: ${[...new Set(text.match(/order \d+/g) ?? [])].join(', ')}`, usage: { prompt_tokens: Math.ceil(text.length / 4), completion_tokens: 20 } };
  };
  const dir = mkdtempSync(join(tmpdir(), 'bench-compaction-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: KEY, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS ?? 'FULL', ...serviceEnv() });
  const { app, url } = await startApp(config, 'all', createLogger('silent'), () => undefined);
  // Time spent inside model calls, whoever makes them.
  let modelMs = 0;
  let modelCalls = 0;
  const complete = ChatCompletions.prototype.complete;
  ChatCompletions.prototype.complete = async function (this: ChatCompletions, ...a: Parameters<typeof complete>) {
    const t = now();
    try {
      return await complete.apply(this, a);
    } finally {
      modelMs += now() - t;
      modelCalls += 1;
    }
  };
  try {
    const ok = async (method: string, path: string, body?: unknown, status = 201) => {
      const res = await call(url, method, path, body);
      if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
      return res.json;
    };
    await ok('POST', '/v2/llms', { name: 'roomy', model: 'upstream-model', uri: `${upstream.baseURL}/chat/completions`, capabilities: { context_limit: 200_000 } });
    await ok('POST', '/v2/llms', { name: 'tiny', model: 'upstream-model', uri: `${upstream.baseURL}/chat/completions`, capabilities: { context_limit: WINDOW } });
    const agent = (key: string) => ok('POST', '/v2/agents', { key, name: key, model: { name: 'roomy' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Take orders.' }] } } });
    // About 500 tokens per turn: 85 turns are ten times the small window, 2 fit one piece (about 1,400 tokens).
    const grow = async (agentKey: string, key: string, turns: number) => {
      await ok('POST', `/v2/agents/${agentKey}/sessions`, { key });
      let last = '';
      for (let i = 1; i <= turns; i++) {
        const res = await ok('POST', `/v2/agents/${agentKey}/sessions/${key}/events`, { messages: [{ type: 'text', content: `order ${i}: ${'the customer talked about the weather at length '.repeat(40)}` }] });
        last = res.events.at(-1).id;
      }
      return last;
    };
    const sizes = { '10x window (85 turns)': 85, '0.25x window (2 turns, one piece)': 2 } as const;
    const rows: Record<string, unknown>[] = [];
    for (const [label, turns] of Object.entries(sizes)) {
      const agentKey = `a${turns}`;
      await agent(agentKey);
      const lasts: string[] = [];
      // Two more sessions than measured: the first compactions warm the caches and the JIT.
      for (let r = 0; r < rounds + 2; r++) lasts.push(await grow(agentKey, `s${r}`, turns));
      await ok('PATCH', `/v2/agents/${agentKey}`, { model: { name: 'tiny' } }, 200);
      const totalMs: number[] = [];
      const ownMs: number[] = [];
      const calls: number[] = [];
      for (let r = 0; r < rounds + 2; r++) {
        const [m0, c0] = [modelMs, modelCalls];
        const t = now();
        const res = await ok('POST', `/v2/agents/${agentKey}/sessions/s${r}/events`, { type: 'compact', compact_up_to_event_id: lasts[r] });
        const total = now() - t;
        if (res.events[0]?.type !== 'compaction') throw new Error(`no compaction: ${JSON.stringify(res.events)}`);
        if (r < 2) continue;
        totalMs.push(total);
        ownMs.push(total - (modelMs - m0));
        calls.push(modelCalls - c0);
      }
      const p = (xs: number[], q: number) => round(percentile(xs, q), 2);
      rows.push(
        { history: label, measure: 'model calls per compaction', p50: p(calls, 50), p99: p(calls, 99) },
        { history: label, measure: 'compaction through HTTP, ms', p50: p(totalMs, 50), p99: p(totalMs, 99) },
        { history: label, measure: 'compaction less its model calls (LLM layer + scripted model), ms', p50: p(ownMs, 50), p99: p(ownMs, 99) },
      );
    }
    report('compaction', rows, { rounds, window: WINDOW, synchronous: config.sqliteSynchronous, loadAverage: loadavg().map((l) => round(l, 2)) });
  } finally {
    ChatCompletions.prototype.complete = complete;
    await app.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
