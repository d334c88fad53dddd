import { parentPort } from 'node:worker_threads';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { now } from './common';

/** One request's time to the whole answer, and to the first byte of the body (ms). */
export interface Timing {
  readonly total: number;
  readonly firstByte: number;
}

/** What the chat bench asks of this thread once the service is up. */
export interface ChatRun {
  readonly serviceUrl: string;
  readonly apiKey: string;
  readonly requests: number;
  readonly warmup: number;
}

/** Per mode (non-stream, stream), the timings direct to the upstream and through the service. */
export type ChatTimings = Record<'nonStream' | 'stream', { direct: Timing[]; proxied: Timing[] }>;

async function timed(url: string, headers: Record<string, string>, body: object): Promise<Timing> {
  const t = now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const reader = res.body!.getReader();
  let firstByte = NaN;
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (Number.isNaN(firstByte)) firstByte = now() - t;
    text += decoder.decode(value, { stream: true });
  }
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text}`);
  return { total: now() - t, firstByte };
}

/**
 * The chat bench's upstream and its client, on a thread of their own: a real model and a real caller run
 * elsewhere, so neither their HTTP work nor their clocks share the service's event loop. In one thread, a commit
 * made after the first chunk was written would also delay the client's reading of that chunk, so a streamed
 * answer's first byte would count the usage commit that in fact follows it.
 */
async function main(): Promise<void> {
  const upstream = await ScriptedOpenAIServer.start();
  upstream.fallback = { content: 'The capital of France is Paris.', usage: { prompt_tokens: 21, completion_tokens: 9 } };
  parentPort!.postMessage({ upstreamUrl: upstream.baseURL });
  const run = await new Promise<ChatRun>((resolve) => parentPort!.once('message', resolve));
  const messages = [{ role: 'user', content: 'What is the capital of France?' }];
  const body = (model: string, stream: boolean) => ({ model, messages, stream, stream_options: stream ? { include_usage: true } : undefined });
  const direct = (stream: boolean) => timed(`${upstream.baseURL}/chat/completions`, { authorization: 'Bearer sk-bench' }, body('upstream-model', stream));
  const proxied = (stream: boolean) => timed(`${run.serviceUrl}/v2/llms/chat/completions`, { 'x-api-key': run.apiKey }, body('bench', stream));
  const timings: ChatTimings = { nonStream: { direct: [], proxied: [] }, stream: { direct: [], proxied: [] } };
  // The modes take turns request by request, and within a turn which of direct and proxied goes first
  // alternates, so every column sees the same machine noise (a neighbour's disk writes slow the usage commit's
  // fsync for whichever mode runs while they last).
  for (let i = 0; i < run.requests + run.warmup; i++) {
    for (const stream of [false, true]) {
      let a: Timing;
      let b: Timing;
      if (i % 2) {
        a = await direct(stream);
        b = await proxied(stream);
      } else {
        b = await proxied(stream);
        a = await direct(stream);
      }
      if (i >= run.warmup) {
        timings[stream ? 'stream' : 'nonStream'].direct.push(a);
        timings[stream ? 'stream' : 'nonStream'].proxied.push(b);
      }
      // Recording every request would grow the scripted server's memory over the run.
      upstream.requests.length = 0;
    }
  }
  await upstream.close();
  parentPort!.postMessage({ timings });
}

main().catch((e: unknown) => parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) }));
