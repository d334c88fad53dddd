import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { startService, stop } from './agents-vs-langgraph-processes';
import { now, percentile, report, round } from './common';

const KEY = 'zut_bench_telemetry_key_0123456789abcdef';

/**
 * What OpenTelemetry export costs a turn (docs/telemetry.md): the built service in its own process (the SDK starts only
 * in `apps/main.ts`, so an in-process bench cannot see it), plain turns one after another, alternating runs with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` unset and set to a counting OTLP receiver on 127.0.0.1 (which answers 200 at once).
 */
export async function telemetryBench(args: string[]): Promise<void> {
  const turns = Number(args[0] ?? 1000);
  const rounds = Number(args[1] ?? 2);
  let requests = 0;
  let bytes = 0;
  const receiver = createServer((req, res) => {
    requests++;
    req.on('data', (d: Buffer) => (bytes += d.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const model = await ScriptedOpenAIServer.start();
  model.onChat = () => {
    model.requests.length = 0;
    return { content: 'Fine.', usage: { prompt_tokens: 40, completion_tokens: 8 } };
  };
  const rows: Record<string, unknown>[] = [];
  try {
    for (let round_ = 0; round_ < rounds; round_++) {
      for (const on of [false, true]) {
        if (on) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
        else delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
        const before = { requests, bytes };
        const service = await startService(KEY, 'FULL', resolve(__dirname, '..'));
        try {
          const times = await turnsOf(service.url, model.baseURL, turns);
          rows.push({ otlp: on ? 'on' : 'off', turns, p50_ms: round(percentile(times, 50)), p99_ms: round(percentile(times, 99)) });
        } finally {
          await stop(service);
        }
        if (on) rows[rows.length - 1].exported_kb_per_turn = round((bytes - before.bytes) / 1024 / (turns + 100));
        if (on) rows[rows.length - 1].export_requests = requests - before.requests;
      }
    }
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await model.close();
    await new Promise((r) => receiver.close(r));
  }
  report('telemetry: a plain turn with OTLP export off and on (service in its own process)', rows);
}

async function turnsOf(url: string, modelBaseUrl: string, turns: number): Promise<number[]> {
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${text}`);
  };
  await call('/v2/llms', { type: 'openai-compatible', name: 'bench', model: 'upstream-model', uri: `${modelBaseUrl}/chat/completions` });
  await call('/v2/agents', { key: 'bench', name: 'Bench', model: { name: 'bench' }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Be brief.' }] } } });
  await call('/v2/agents/bench/sessions', { key: 's' });
  const times: number[] = [];
  // The first 100 turns warm the process up and are not counted.
  for (let i = 0; i < turns + 100; i++) {
    const started = now();
    await call('/v2/agents/bench/sessions/s/events', { messages: [{ type: 'text', content: `hello ${i}` }] });
    if (i >= 100) times.push(now() - started);
  }
  return times;
}
