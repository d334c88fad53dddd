import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ChatMessage } from '../../domain/capabilities';
import type { LlmType } from '../../domain/llm';
import type { UpstreamFailure } from './upstream-failure.port';

export type { UpstreamFailure };

/** A chat request as an upstream gets it: OpenAI's shape, with `model` already the upstream's model id. */
export interface ChatBody {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly [k: string]: unknown;
}

/** One streamed chunk; `json` is the upstream's own bytes for it when they can be relayed as they are. */
export interface StreamItem {
  readonly chunk: ChatCompletionChunk;
  readonly json?: string;
}

/** How a provider's answer to discovery's context-limit question was found. */
export interface ReportedLimit {
  readonly value: number;
  readonly detail: string;
}

/**
 * One registered (or candidate) model behind its provider's SDK, speaking OpenAI's chat-completions shape to
 * the service: requests are translated to the provider and answers back. Usage is always OpenAI's: prompt
 * tokens include cached ones, completion tokens include reasoning (docs/llms.md, Quotas).
 */
export interface ChatUpstream {
  readonly type: LlmType;
  /** The provider's model id. */
  readonly model: string;
  readonly idleTimeoutSeconds: number;
  /** The stored credential's secret values, scrubbed from any upstream text before it is shown or logged. */
  readonly secrets: readonly string[];
  /** Whether OpenAI's `tools` and `response_format` reach the model (discovery only probes what is translated). */
  readonly translates: { readonly tools: boolean; readonly responseFormat: boolean };
  complete(body: ChatBody, signal: AbortSignal): Promise<ChatCompletion>;
  /**
   * Resolves once the upstream answered (so a refusal is still a plain HTTP error), then yields chunks; the
   * upstream is always asked for usage, which comes as a last chunk with no choices when it reports any.
   */
  stream(body: ChatBody, signal: AbortSignal): Promise<AsyncIterable<StreamItem>>;
  classify(e: unknown): UpstreamFailure;
  /** The model's context window as the provider reports it; undefined when it does not. */
  contextLimit(): Promise<ReportedLimit | undefined>;
}
