import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/platform';
import { AgentMemory } from '@lib/agents';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { jsonCall, now, percentile, report, round, serviceEnv } from './common';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';
const BLOCKS = 20;

const call = (url: string, method: string, path: string, body?: unknown) => jsonCall(url, KEY, method, path, body);

/**
 * What memory blocks add to a turn (issue 46, docs/agents.md "Memory"): a plain turn through HTTP on an agent with 20
 * agent blocks of 1,500 characters (or `chars`) (each changed 5 times, so each stream holds 5 events) against the same agent without
 * memory and against one whose instructions are as long as the blocks (the cost of the prompt's size alone), alternated
 * turn by turn; and, in process, reading the 20 blocks in scope (what the prompt builder does at
 * each model call). The scripted model answers at once.
 */
export async function memoryBench(args: string[]): Promise<void> {
  const turns = Number(args[0] ?? 300);
  const chars = Number(args[1] ?? 1500);
  const upstream = await ScriptedOpenAIServer.start();
  const dir = mkdtempSync(join(tmpdir(), 'bench-memory-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: KEY, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS ?? 'FULL', ...serviceEnv() });
  const { app, url } = await startApp(config, 'all', createLogger('silent'), () => undefined);
  try {
    const ok = async (method: string, path: string, body?: unknown, status = 201) => {
      const res = await call(url, method, path, body);
      if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
      return res.json;
    };
    // A model name the service knows to have a 128k window: the prompt of 20 full blocks must fit without compaction.
    await ok('POST', '/v2/llms', { name: 'bench', model: 'gpt-4o', uri: `${upstream.baseURL}/chat/completions` });
    const base = { name: 'Bench', model: { name: 'bench' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Answer briefly.' }] } } };
    const blocks = Array.from({ length: BLOCKS }, (_, i) => ({ key: `block${i}`, scope: 'agent', description: `Block ${i}`, limit_chars: 2000 }));
    await ok('POST', '/v2/agents', { ...base, key: 'plain' });
    await ok('POST', '/v2/agents', { ...base, key: 'remembers', memory: { blocks } });
    // The same prompt size without memory: what a prompt that long costs by itself.
    await ok('POST', '/v2/agents', { ...base, key: 'long', steps: { main: { instructions: [{ type: 'inline', template_type: 'text', template: 'x'.repeat(BLOCKS * (chars + 90)) }] } } });
    for (const b of blocks) for (let v = 0; v < 5; v++) await ok('PUT', `/v2/agents/remembers/memory/${b.key}`, { value: `${v}`.repeat(chars) }, 200);
    upstream.fallback = { content: 'Refunds take 14 days.', usage: { prompt_tokens: 40, completion_tokens: 8 } };
    type Agent = 'plain' | 'remembers' | 'long';
    const ms: Record<Agent, number[]> = { plain: [], remembers: [], long: [] };
    const calls: Record<Agent, number> = { plain: 0, remembers: 0, long: 0 };
    let system = 0;
    for (let r = 0; r < turns + 10; r++) {
      const order: Agent[] = r % 3 === 0 ? ['plain', 'remembers', 'long'] : r % 3 === 1 ? ['remembers', 'long', 'plain'] : ['long', 'plain', 'remembers'];
      for (const agent of order) {
        if (r % 10 === 0) await ok('POST', `/v2/agents/${agent}/sessions`, { key: `s${r}` });
        const before = upstream.chatRequests().length;
        const t = now();
        await ok('POST', `/v2/agents/${agent}/sessions/s${r - (r % 10)}/events`, { messages: [{ type: 'text', content: `Question ${r}` }] });
        if (r >= 10) ms[agent].push(now() - t);
        const sent = upstream.chatRequests().slice(before).map((c) => c.body as { messages: { role: string; content: string }[] });
        calls[agent] += sent.length;
        if (agent === 'remembers') system = Math.max(system, ...sent.map((b) => (b.messages[0].role === 'system' ? b.messages[0].content.length : 0)));
      }
    }
    const memory = app.get(AgentMemory, { strict: false });
    const agent = await memory.agent('remembers');
    const session = { key: 'x', memory: {} } as never;
    const reads: number[] = [];
    for (let i = 0; i < turns; i++) {
      const t = now();
      await memory.inScope(agent, session);
      reads.push(now() - t);
    }
    const row = (name: string, values: number[]) => ({ measure: name, n: values.length, p50_ms: round(percentile(values, 50)), p90_ms: round(percentile(values, 90)), p99_ms: round(percentile(values, 99)) });
    report('memory', [row('turn, no memory (HTTP)', ms.plain), row(`turn, ${BLOCKS} blocks of ${chars} chars (HTTP)`, ms.remembers), row('turn, no memory, instructions as long (HTTP)', ms.long), row(`reading ${BLOCKS} blocks in scope (in process)`, reads)], { memory_system_prompt_chars: system, model_calls: calls });
  } finally {
    await app.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
