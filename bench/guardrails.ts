import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/platform';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '../libs/testing/src/scripted-openai-server';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { now, percentile, report, round, serviceEnv } from './common';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';
const CARD = '\\b\\d{4}[- ]?\\d{4}[- ]?\\d{4}[- ]?\\d{4}\\b';
/** Eight sentences, streamed in 32 pieces of up to 12 characters, 10 ms apart: the model alone takes ~320 ms to its last byte. */
const SENTENCES = Array.from({ length: 8 }, (_, i) => `Refunds are paid within ${i + 14} days of the return. `);
const PIECES = SENTENCES.flatMap((s) => s.match(/.{1,12}/g) ?? []).slice(0, 40);

/**
 * The added latency of each guardrail type on a turn (docs/guardrails.md), through HTTP against the scripted model
 * answering at once: none, pattern (3 patterns, output redact), judge (a second registered model on the scripted
 * server, answering at once), grounding (the service's factual-consistency client against an HHEM-compatible route
 * of the scripted server, answering at once) on a turn with one corpora_search call, compared with the same turn
 * without it. Then a streamed answer (32 pieces, 10 ms apart): the time to its first piece and to its end without
 * guardrails, held (check answer) and released sentence by sentence.
 */
export async function guardrailsBench(args: string[]): Promise<void> {
  const rounds = Number(args[0] ?? 200);
  const streamRounds = Number(args[1] ?? 20);
  const upstream = await ScriptedOpenAIServer.start();
  let scored = 0;
  upstream.route('POST', '/hhem', () => (scored++, { status: 200, json: { scores: [0.9] } }));
  upstream.onChat = (req: CapturedRequest): ScriptedReply => {
    const body = req.body as { model: string; stream?: boolean; tools?: unknown[]; messages: { role: string }[] };
    if (body.model === 'judge-upstream') return { content: '{"score": 0.9, "reason": "complies"}' };
    if (body.stream) return { chunks: PIECES, chunkDelayMs: 10 };
    // Each turn of a tool agent searches once, then answers (earlier turns' tool messages are in its history).
    if (body.tools?.length && body.messages.at(-1)?.role !== 'tool') return { toolCalls: [{ id: 'c1', name: 'docs', arguments: '{"query":"refunds"}' }] };
    return { content: 'Refunds are paid within 14 days of the return; card 4111 1111 1111 1111 is on file.' };
  };
  const dir = mkdtempSync(join(tmpdir(), 'bench-guardrails-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: KEY, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', FCS_HHEM_URL: `${upstream.url}/hhem`, SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS ?? 'FULL', ...serviceEnv() });
  const { app, url } = await startApp(config, 'all', createLogger('silent'), () => undefined);
  const call = async (method: string, path: string, body?: unknown, status = 201) => {
    const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json', 'x-api-key': KEY }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  try {
    await call('POST', '/v2/llms', { name: 'bench', model: 'bench-upstream', uri: `${upstream.baseURL}/chat/completions` });
    await call('POST', '/v2/llms', { name: 'judge', model: 'judge-upstream', uri: `${upstream.baseURL}/chat/completions` });
    await call('POST', '/v2/corpora', { key: 'kb', name: 'KB' });
    await call('POST', '/v2/corpora/kb/documents', { id: 'refunds', type: 'core', document_parts: [{ text: 'Refunds are paid within 14 days of the return.' }] });
    const docs = { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'kb', lexical_interpolation: 1 }], limit: 3 } } };
    const agent = async (key: string, guardrails: unknown[], tools: Record<string, unknown> = {}) => {
      await call('POST', '/v2/agents', { key, name: key, model: { name: 'bench' }, tool_configurations: tools, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Answer briefly.' }] } }, guardrails });
    };
    const pattern = { type: 'pattern', patterns: [CARD, '(?i)password', '\\b\\d{3}-\\d{4}\\b'], on: 'output', action: 'redact' };
    const judge = { type: 'judge', llm_name: 'judge', policy: 'Never promise a refund sooner than the policy says.', on: 'output', action: 'block' };
    const grounding = { type: 'grounding', threshold: 0.5, action: 'block' };
    await agent('none', []);
    await agent('pattern', [pattern]);
    await agent('judge', [judge]);
    await agent('tools_none', [], { docs });
    await agent('tools_grounding', [grounding], { docs });
    await agent('stream_none', []);
    await agent('stream_held', [{ ...pattern, check: 'answer' }]);
    await agent('stream_sentence', [{ ...pattern, check: 'sentence' }]);

    const kinds = ['none', 'pattern', 'judge', 'tools_none', 'tools_grounding'];
    const ms: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
    // Interleaved, so a busy machine slows every kind alike; a new session every 20 turns keeps prompts short.
    for (let r = 0; r < rounds + 10; r++) {
      for (const kind of kinds) {
        const session = `s${r - (r % 20)}`;
        if (r % 20 === 0) await call('POST', `/v2/agents/${kind}/sessions`, { key: session });
        const t = now();
        await call('POST', `/v2/agents/${kind}/sessions/${session}/events`, { messages: [{ type: 'text', content: `How long do refunds take? (${r})` }] });
        if (r >= 10) ms[kind].push(now() - t);
      }
    }
    // The measured turns did what they are named for.
    const typesOf = async (kind: string) => ((await call('GET', `/v2/agents/${kind}/sessions/s0/events?limit=100`, undefined, 200)).events as { type: string }[]).map((e) => e.type);
    if (!(await typesOf('tools_grounding')).includes('tool_output')) throw new Error(`the grounding turns called no tool: ${(await typesOf('tools_grounding')).join(', ')}`);
    if (scored < rounds) throw new Error(`the grounding guardrail scored ${scored} answers, not ${rounds + 10}`);
    if (!(await typesOf('pattern')).includes('guardrail_triggered')) throw new Error('the pattern guardrail never fired');
    const p = (xs: number[], q: number) => round(percentile(xs, q), 2);
    const rows: Record<string, unknown>[] = [
      { measure: 'turn without guardrails', p50_ms: p(ms.none, 50), p99_ms: p(ms.none, 99) },
      { measure: 'pattern (3 RE2 patterns, output redact)', p50_ms: p(ms.pattern, 50), p99_ms: p(ms.pattern, 99), added_p50_ms: round(p(ms.pattern, 50) - p(ms.none, 50), 2) },
      { measure: 'judge (scripted judge answering at once)', p50_ms: p(ms.judge, 50), p99_ms: p(ms.judge, 99), added_p50_ms: round(p(ms.judge, 50) - p(ms.none, 50), 2) },
      { measure: 'turn with one corpora_search call, no guardrail', p50_ms: p(ms.tools_none, 50), p99_ms: p(ms.tools_none, 99) },
      { measure: 'grounding (HHEM client, scripted endpoint answering at once)', p50_ms: p(ms.tools_grounding, 50), p99_ms: p(ms.tools_grounding, 99), added_p50_ms: round(p(ms.tools_grounding, 50) - p(ms.tools_none, 50), 2) },
    ];

    const streamKinds = ['stream_none', 'stream_held', 'stream_sentence'];
    const first: Record<string, number[]> = Object.fromEntries(streamKinds.map((k) => [k, []]));
    const last: Record<string, number[]> = Object.fromEntries(streamKinds.map((k) => [k, []]));
    for (let r = 0; r < streamRounds + 2; r++) {
      for (const kind of streamKinds) {
        const session = `st${r}`;
        await call('POST', `/v2/agents/${kind}/sessions`, { key: session });
        const t = now();
        const res = await fetch(`${url}/v2/agents/${kind}/sessions/${session}/events`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify({ messages: [{ type: 'text', content: 'How long?' }], stream_response: true }) });
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        let seen = '';
        let firstAt: number | undefined;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          seen += value;
          if (firstAt === undefined && seen.includes('"type":"streaming_agent_output"')) firstAt = now() - t;
        }
        if (r >= 2) {
          first[kind].push(firstAt ?? NaN);
          last[kind].push(now() - t);
        }
      }
    }
    for (const [kind, label] of [['stream_none', 'streamed, no guardrail'], ['stream_held', 'streamed, held (check answer)'], ['stream_sentence', 'streamed, released sentence by sentence']]) {
      rows.push({ measure: `${label}: first piece / whole answer`, p50_ms: p(first[kind], 50), p99_ms: p(first[kind], 99), end_p50_ms: p(last[kind], 50) });
    }
    report('guardrails', rows, { rounds, streamRounds, streamedPieces: PIECES.length, pieceDelayMs: 10, synchronous: config.sqliteSynchronous, loadAverage: loadavg().map((l) => round(l, 2)) });
  } finally {
    await app.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
