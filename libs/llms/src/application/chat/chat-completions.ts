import { Inject, Injectable } from '@nestjs/common';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { CommandContext, DomainError, invalid, READ_STORE, ReadStore } from '@lib/platform';
import { alternateRoles, ChatMessage } from '../../domain/capabilities';
import type { TokenUsage } from '../../domain/quota';
import { estimateTokens, LlmUsageEvent, usageFromReport } from '../../domain/usage';
import { findLlm } from '../llm-writer';
import { OpenAiProvider, Upstream } from '../provider/openai-provider';
import { upstreamError } from '../provider/upstream-errors';
import type { LlmRow } from '../read-models';
import { LLM_QUOTAS } from '../quotas/llm-quotas';
import type { QuotaEngine } from '../quotas/quota-engine';

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
  readonly upstream: Upstream;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string | null>;
  readonly abort: AbortController;
  /** Aborts the upstream call if it has not answered within the idle timeout; returns whether it fired. */
  deadline(): { clear(): void; readonly fired: () => boolean };
}

/**
 * Chat completions through a registered model: resolve it, admit it under its quota, call it with its
 * credentials, relay the answer under the caller's model name, and record the tokens used.
 */
@Injectable()
export class ChatCompletions {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly provider: OpenAiProvider,
    @Inject(LLM_QUOTAS) private readonly quotas: QuotaEngine,
  ) {}

  async complete(request: ChatRequest, ctx: CommandContext, signal?: AbortSignal): Promise<ChatCompletion> {
    const call = await this.prepare(request, signal);
    const deadline = call.deadline();
    try {
      const completion = await call.upstream.client.chat.completions.create({ ...call.body, stream: false } as unknown as ChatCompletionCreateParamsNonStreaming, {
        signal: call.abort.signal,
        headers: call.headers,
      });
      const text = completion.choices.map((c) => c.message?.content ?? '').join('');
      this.record(call, request, ctx, usageFromReport(completion.usage), text, 'completed');
      return { ...completion, model: request.model };
    } catch (e) {
      throw upstreamError(e, call.row.name, call.upstream.idleTimeoutSeconds, call.upstream.secrets, deadline.fired());
    } finally {
      deadline.clear();
    }
  }

  /**
   * Starts a streamed completion. Resolves once the upstream answered (so a refusal is still a plain HTTP
   * error); the chunks then fail with a 504-kind error when nothing arrives within the idle timeout.
   */
  async stream(request: ChatRequest, ctx: CommandContext, signal?: AbortSignal): Promise<AsyncIterable<ChatCompletionChunk>> {
    const call = await this.prepare(request, signal);
    const { upstream, row } = call;
    const deadline = call.deadline();
    const fail = (e: unknown) => upstreamError(e, row.name, upstream.idleTimeoutSeconds, upstream.secrets, deadline.fired());
    const body = { ...call.body, stream: true, stream_options: { ...(request.stream_options ?? {}), include_usage: true } };
    const chunks = await upstream.client.chat.completions
      .create(body as unknown as ChatCompletionCreateParamsStreaming, { signal: call.abort.signal, headers: call.headers })
      .catch((e: unknown) => Promise.reject(fail(e)))
      .finally(() => deadline.clear());
    const wantsUsage = request.stream_options?.include_usage === true;
    const record = this.record.bind(this);
    return {
      async *[Symbol.asyncIterator]() {
        const iterator = chunks[Symbol.asyncIterator]();
        let text = '';
        let usage: TokenUsage | undefined;
        // Stays 'aborted' when the caller stops reading (a disconnect ends the loop without an error).
        let outcome: 'completed' | 'aborted' | 'failed' = 'aborted';
        try {
          for (;;) {
            const next = await withIdleTimeout(iterator.next(), upstream.idleTimeoutSeconds, () => call.abort.abort(), row.name);
            if (next.done) break;
            const chunk = next.value;
            usage = usageFromReport(chunk.usage) ?? usage;
            for (const c of chunk.choices) text += c.delta?.content ?? '';
            if (chunk.choices.length === 0 && chunk.usage && !wantsUsage) continue;
            yield { ...chunk, model: request.model, ...(wantsUsage ? {} : { usage: undefined }) };
          }
          outcome = 'completed';
        } catch (e) {
          const mapped = fail(e);
          if (mapped instanceof DomainError) outcome = 'failed';
          throw mapped;
        } finally {
          // A caller that stops reading (disconnect) lands here too: cancel the upstream call.
          if (outcome !== 'completed') call.abort.abort();
          record(call, request, ctx, usage, text, outcome);
        }
      },
    };
  }

  private async prepare(request: ChatRequest, signal?: AbortSignal): Promise<Call> {
    const row = await findLlm(this.reads, request.model);
    if (!row) throw invalid('llm.unknown_model', `Unknown model "${request.model}": register it with POST /v2/llms or pick one from GET /v2/llms`, { model: 'no LLM of this name' });
    if (!row.enabled) throw invalid('llm.disabled', `Model "${request.model}" is disabled`, { model: 'disabled' });
    await this.quotas.admit(row.id, `LLM "${row.name}"`, row.llm_quota);
    const upstream = this.provider.forRow(row);
    const abort = new AbortController();
    if (signal) signal.aborted ? abort.abort() : signal.addEventListener('abort', () => abort.abort(), { once: true });
    const messages = row.capabilities.requires_role_alternation ? alternateRoles(request.messages) : request.messages;
    const body: Record<string, unknown> = { ...request, model: upstream.model, messages };
    delete body.stream_options;
    // Our own timer rather than the SDK's: its timeout cannot be told from a caller's abort in every runtime.
    const deadline = () => {
      let fired = false;
      const timer = setTimeout(() => {
        fired = true;
        abort.abort();
      }, upstream.idleTimeoutSeconds * 1000);
      return { clear: () => clearTimeout(timer), fired: () => fired };
    };
    return { row, upstream, body, headers: await upstream.authHeaders(), abort, deadline };
  }

  private record(call: Call, request: ChatRequest, ctx: CommandContext, reported: TokenUsage | undefined, output: string, outcome: LlmUsageEvent['data']['outcome']): void {
    const usage = reported ?? { input: estimateTokens(JSON.stringify(request.messages)), output: estimateTokens(output) };
    const event = (at: Date): LlmUsageEvent => ({
      type: 'LlmUsageRecorded',
      data: { llmId: call.row.id, llmName: call.row.name, input: usage.input, output: usage.output, estimated: !reported, outcome, at: at.toISOString() },
    });
    this.quotas.record(call.row.id, usage, event, ctx);
  }
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
