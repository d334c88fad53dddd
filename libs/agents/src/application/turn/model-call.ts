import { ChatCompletions, ChatRequest, UsageCarrier } from '@lib/llms';
import { CommandContext, DomainError } from '@lib/platform';
import type { ToolDefinition } from '@lib/tools';
import type { ModelConfig } from '../../domain/agent-config';
import type { PromptMessage } from '../../domain/history';

export interface ModelToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

export interface ModelAnswer {
  readonly content: string;
  readonly toolCalls: readonly ModelToolCall[];
  readonly usage: { readonly input_tokens: number; readonly output_tokens: number };
  /** The call's `chat` span (W3C trace context) when tracing is on: the tool calls it asked for are its children. */
  readonly traceparent?: string;
}

export interface ModelCallOptions {
  readonly messages: readonly PromptMessage[];
  readonly tools: readonly ToolDefinition[];
  readonly responseFormat?: Record<string, unknown>;
  /** Called with each piece of answer text as it streams; absent: one non-streamed call. */
  readonly onDelta?: (text: string) => void;
  readonly signal: AbortSignal;
  /** Takes the call's usage record to commit with the turn's next append (UsageCarrier). */
  readonly usage?: UsageCarrier;
}

/** Parameters an agent may not set: the turn owns them. */
const OWNED = new Set(['model', 'messages', 'tools', 'stream', 'stream_options', 'response_format', 'tool_choice', 'n']);

/**
 * One model call of a turn through the language-model layer (quotas, idle timeouts, provider translation),
 * retried with exponential backoff as the agent's `retry_configuration` says (none when it gives none).
 */
export async function callModel(chat: ChatCompletions, model: ModelConfig, options: ModelCallOptions, ctx: CommandContext): Promise<ModelAnswer> {
  const retry = model.retry_configuration && model.retry_configuration.enabled !== false ? model.retry_configuration : undefined;
  const maxRetries = retry ? (retry.max_retries ?? 3) : 0;
  let delay = retry?.initial_backoff_ms ?? 1000;
  for (let attempt = 0; ; attempt++) {
    try {
      return await callOnce(chat, model, options, ctx);
    } catch (e) {
      const retryable = e instanceof DomainError && (e.kind === 'upstream' || e.kind === 'timeout' || e.kind === 'rate_limited' || e.kind === 'unavailable');
      if (!retryable || attempt >= maxRetries || options.signal.aborted) throw e;
      await sleep(Math.min(delay, retry?.max_backoff_ms ?? 30_000), options.signal);
      delay *= retry?.backoff_factor ?? 2;
    }
  }
}

async function callOnce(chat: ChatCompletions, model: ModelConfig, options: ModelCallOptions, ctx: CommandContext): Promise<ModelAnswer> {
  const params = Object.fromEntries(Object.entries(model.parameters ?? {}).filter(([k]) => !OWNED.has(k)));
  const request: ChatRequest = {
    ...params,
    model: model.name,
    messages: options.messages as ChatRequest['messages'],
    ...(options.tools.length ? { tools: options.tools } : {}),
    ...(options.responseFormat ? { response_format: options.responseFormat } : {}),
  };
  if (!options.onDelta) {
    const completion = await chat.complete(request, ctx, options.signal, options.usage);
    const message = completion.choices[0]?.message;
    return {
      content: message?.content ?? '',
      toolCalls: (message?.tool_calls ?? []).filter((t) => t.type === 'function').map((t) => ({ id: t.id, name: (t as { function: { name: string } }).function.name, arguments: (t as { function: { arguments: string } }).function.arguments })),
      usage: { input_tokens: completion.usage?.prompt_tokens ?? 0, output_tokens: completion.usage?.completion_tokens ?? 0 },
    };
  }
  const chunks = await chat.stream({ ...request, stream: true, stream_options: { include_usage: true } }, ctx, options.signal, options.usage);
  let content = '';
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  const usage = { input_tokens: 0, output_tokens: 0 };
  for await (const chunk of chunks) {
    if (chunk.usage) {
      usage.input_tokens = chunk.usage.prompt_tokens ?? 0;
      usage.output_tokens = chunk.usage.completion_tokens ?? 0;
    }
    const delta = chunk.choices?.[0]?.delta;
    if (!delta) continue;
    if (delta.content) {
      content += delta.content;
      options.onDelta(delta.content);
    }
    // Tool calls arrive in pieces: the first piece of an index has its id and name, later ones more arguments.
    for (const piece of delta.tool_calls ?? []) {
      const call = calls.get(piece.index) ?? { id: '', name: '', arguments: '' };
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.name += piece.function.name;
      if (piece.function?.arguments) call.arguments += piece.function.arguments;
      calls.set(piece.index, call);
    }
  }
  return { content, toolCalls: [...calls.entries()].sort(([a], [b]) => a - b).map(([i, c]) => ({ ...c, id: c.id || `call_${i}` })), usage };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}
