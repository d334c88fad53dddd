import { Inject, Injectable } from '@nestjs/common';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { CommandContext, DomainError, invalid, randomIds } from '@lib/platform';
import { alternateRoles, ChatMessage } from '../../domain/capabilities';
import type { TokenUsage } from '../../domain/quota';
import { estimateTokens, LlmUsageEvent, usageFromReport } from '../../domain/usage';
import type { ChatBody, ChatUpstream, StreamItem } from '../provider/chat-upstream.port';
import { LlmProviders } from '../provider/llm-providers';
import { upstreamError } from '../provider/upstream-errors';
import type { LlmRow } from '../../read-models';
import { LLM_QUOTAS } from '../quotas/llm-quotas';
import type { QuotaEngine, UsageCarrier } from '../quotas/quota-engine';
import { ModelResolver } from './model-resolver';

/** An OpenAI chat completion request; fields other than these are passed to the upstream unchanged. */
export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly stream?: boolean;
  readonly stream_options?: { readonly include_usage?: boolean };
  readonly [k: string]: unknown;
}

interface Call {
  readonly row: LlmRow;
  readonly upstream: ChatUpstream;
  readonly body: ChatBody;
  readonly abort: AbortController;
  /** This upstream call's own id: its usage event is one of its own, whatever else the request called. */
  readonly id: string;
  /** Aborts the upstream call if it has not answered within the idle timeout; says whether it fired. */
  deadline(): { clear(): void; readonly fired: () => boolean };
  fail(e: unknown, timedOut?: boolean): Error;
  /** Stops following the caller's signal once the call is over (a turn's signal outlives dozens of calls). */
  release(): void;
}

/**
 * Chat completions through a registered model of any provider type: resolve it, admit it under its quota,
 * call it with its credentials, relay the answer under the caller's model name, and record the tokens used.
 */
@Injectable()
export class ChatCompletions {
  constructor(
    private readonly models: ModelResolver,
    private readonly providers: LlmProviders,
    @Inject(LLM_QUOTAS) private readonly quotas: QuotaEngine,
  ) {}

  /** With `carrier`, the usage record is handed to the caller to commit with its own next append (UsageCarrier). */
  async complete(request: ChatRequest, ctx: CommandContext, signal?: AbortSignal, carrier?: UsageCarrier): Promise<ChatCompletion> {
    const call = await this.prepare(request, signal);
    const deadline = call.deadline();
    let completion: ChatCompletion;
    try {
      completion = await call.upstream.complete(call.body, call.abort.signal);
    } catch (e) {
      throw call.fail(e, deadline.fired());
    } finally {
      deadline.clear();
      call.release();
    }
    const text = completion.choices.map((c) => c.message?.content ?? '').join('');
    // Durable before the answer is sent.
    await this.record(call, request, ctx, usageFromReport(completion.usage), text, 'completed', carrier);
    return { ...completion, model: request.model };
  }

  /**
   * Starts a streamed completion. Resolves once the upstream answered (so a refusal is still a plain HTTP
   * error); the chunks then fail with a 504-kind error when nothing arrives within the idle timeout.
   */
  async stream(request: ChatRequest, ctx: CommandContext, signal?: AbortSignal, carrier?: UsageCarrier): Promise<AsyncIterable<ChatCompletionChunk>> {
    const items = await this.streamItems(request, ctx, signal, carrier);
    return (async function* () {
      for await (const item of items) yield item.chunk;
    })();
  }

  /**
   * As `stream`, each chunk as its JSON text, ready for a `data:` line: the upstream's own bytes where only
   * the model name differs (OpenAI-compatible upstreams), serialised otherwise.
   */
  async streamJson(request: ChatRequest, ctx: CommandContext, signal?: AbortSignal): Promise<AsyncIterable<string>> {
    const items = await this.streamItems(request, ctx, signal);
    return (async function* () {
      for await (const item of items) yield item.json ?? JSON.stringify(item.chunk);
    })();
  }

  private async streamItems(request: ChatRequest, ctx: CommandContext, signal?: AbortSignal, carrier?: UsageCarrier): Promise<AsyncIterable<StreamItem>> {
    const call = await this.prepare(request, signal);
    const { upstream, row } = call;
    const deadline = call.deadline();
    const items = await upstream
      .stream(call.body, call.abort.signal)
      .catch((e: unknown) => (call.release(), Promise.reject(call.fail(e, deadline.fired()))))
      .finally(() => deadline.clear());
    const wantsUsage = request.stream_options?.include_usage === true;
    const rename = renamer(request.model);
    const record = this.record.bind(this);
    return {
      async *[Symbol.asyncIterator]() {
        const iterator = items[Symbol.asyncIterator]();
        let text = '';
        let usage: TokenUsage | undefined;
        // Stays 'aborted' when the caller stops reading (a disconnect ends the loop without an error).
        let outcome: 'completed' | 'aborted' | 'failed' = 'aborted';
        try {
          for (;;) {
            const next = await withIdleTimeout(iterator.next(), upstream.idleTimeoutSeconds, () => call.abort.abort(), row.name);
            if (next.done) break;
            const { chunk, json } = next.value;
            usage = usageFromReport(chunk.usage) ?? usage;
            for (const c of chunk.choices) text += c.delta?.content ?? '';
            const hidesUsage = !wantsUsage && chunk.usage != null;
            if (hidesUsage && chunk.choices.length === 0) continue;
            const out = { ...chunk, model: request.model, ...(hidesUsage ? { usage: undefined } : {}) };
            yield { chunk: out, json: hidesUsage || json === undefined ? undefined : rename(json, chunk.model) };
          }
          outcome = 'completed';
        } catch (e) {
          const mapped = call.fail(e);
          if (mapped instanceof DomainError) outcome = 'failed';
          throw mapped;
        } finally {
          // A caller that stops reading (disconnect) lands here too: cancel the upstream call.
          if (outcome !== 'completed') call.abort.abort();
          call.release();
          // Durable before the stream ends: the caller's response ends only after this.
          await record(call, request, ctx, usage, text, outcome, carrier);
        }
      },
    };
  }

  private async prepare(request: ChatRequest, signal?: AbortSignal): Promise<Call> {
    const row = await this.models.resolve(request.model);
    if (!row) throw invalid('llm.unknown_model', `Unknown model "${request.model}": register it with POST /v2/llms or pick one from GET /v2/llms`, { model: 'no LLM of this name' });
    if (!row.enabled) throw invalid('llm.disabled', `Model "${request.model}" is disabled`, { model: 'disabled' });
    await this.quotas.admit(row.id, `LLM "${row.name}"`, row.llm_quota);
    const upstream = this.providers.forRow(row);
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    if (signal) signal.aborted ? abort.abort() : signal.addEventListener('abort', onAbort, { once: true });
    const release = () => signal?.removeEventListener('abort', onAbort);
    const messages = row.capabilities.requires_role_alternation ? alternateRoles(request.messages) : request.messages;
    const body: ChatBody = { ...request, model: upstream.model, messages };
    // Our own timer rather than the SDK's: its timeout cannot be told from a caller's abort in every runtime.
    const deadline = () => {
      let fired = false;
      const timer = setTimeout(() => {
        fired = true;
        abort.abort();
      }, upstream.idleTimeoutSeconds * 1000);
      return { clear: () => clearTimeout(timer), fired: () => fired };
    };
    const fail = (e: unknown, timedOut = false) => upstreamError(e, row.name, upstream.idleTimeoutSeconds, upstream.secrets, timedOut, upstream.classify);
    return { row, upstream, body, abort, id: randomIds.uuid(), deadline, fail, release };
  }

  private record(call: Call, request: ChatRequest, ctx: CommandContext, reported: TokenUsage | undefined, output: string, outcome: LlmUsageEvent['data']['outcome'], carrier?: UsageCarrier): Promise<void> {
    const usage = reported ?? { input: estimateTokens(JSON.stringify(request.messages)), output: estimateTokens(output) };
    const event = (at: Date): LlmUsageEvent => ({
      type: 'LlmUsageRecorded',
      data: { llmId: call.row.id, llmName: call.row.name, input: usage.input, output: usage.output, estimated: !reported, outcome, at: at.toISOString() },
    });
    return this.quotas.record(call.row.id, usage, event, ctx, carrier, call.id);
  }
}

/**
 * Puts the caller's model name into a chunk's JSON text without re-serialising it, when the upstream's
 * `"model":"…"` occurs exactly once (so it is the chunk's own field); undefined means "serialise instead".
 */
function renamer(name: string): (json: string, upstreamModel: string | undefined) => string | undefined {
  const replacement = `"model":${JSON.stringify(name)}`;
  return (json, upstreamModel) => {
    if (upstreamModel === name) return json;
    if (typeof upstreamModel !== 'string') return undefined;
    const needle = `"model":${JSON.stringify(upstreamModel)}`;
    const at = json.indexOf(needle);
    if (at < 0 || json.indexOf(needle, at + 1) >= 0) return undefined;
    return json.slice(0, at) + replacement + json.slice(at + needle.length);
  };
}

async function withIdleTimeout<T>(next: Promise<T>, seconds: number, onTimeout: () => void, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new DomainError('timeout', 'llm.idle_timeout', `LLM "${name}" sent nothing for ${seconds} s (idle_timeout_seconds); the stream was closed`));
    }, seconds * 1000);
  });
  try {
    return await Promise.race([next, idle]);
  } finally {
    clearTimeout(timer);
  }
}
