import { Inject, Injectable } from '@nestjs/common';
import { assertNever, invalid, OUTBOUND_HTTP, OutboundHttp } from '@lib/platform';
import type { LlmAuth } from '../../domain/auth';
import type { LlmRow } from '../../read-models';
import { anthropicChat } from '../../adapters/anthropic/anthropic-chat';
import type { ChatUpstream } from './chat-upstream.port';
import { geminiChat } from '../../adapters/google/gemini-chat';
import { openAiCompatibleChat } from '../../adapters/openai/openai-compatible-chat';
import { DEFAULT_IDLE_TIMEOUT_SECONDS, Endpoint, OpenAiProvider } from '../../adapters/openai/openai-provider';
import { openAiResponsesChat } from '../../adapters/openai/openai-responses-chat';

/**
 * The provider adapter of each LLM type (docs/llms.md): `openai-compatible` and `openai-responses` through
 * the `openai` SDK, `vertex-ai` through `@google/genai`, `anthropic` through Anthropic's SDKs (direct, Bedrock,
 * Vertex). Clients hold decrypted credentials in memory only, rebuilt when the model's log position moves and
 * dropped when the model is deleted (by this process, or seen deleted by the next call naming it).
 */
@Injectable()
export class LlmProviders {
  /** By model name: a re-registered name (a new id) is a new position, so a new client. */
  private readonly cache = new Map<string, { position: number; upstream: ChatUpstream }>();

  constructor(
    private readonly openai: OpenAiProvider,
    @Inject(OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
  ) {}

  forRow(row: LlmRow): ChatUpstream {
    const cached = this.cache.get(row.name);
    if (cached && cached.position === row.position) return cached.upstream;
    const upstream = this.connect({
      type: row.type,
      uri: row.uri,
      model: row.model,
      headers: row.headers,
      idleTimeoutSeconds: row.idle_timeout_seconds,
      auth: this.openai.open(row.id, row.auth),
    });
    this.cache.set(row.name, { position: row.position, upstream });
    return upstream;
  }

  /** Drops the client of a deleted model, and the credentials it holds. */
  forget(name: string): void {
    this.cache.delete(name);
  }

  /** How many model clients are held (for tests of `forget`). */
  get clients(): number {
    return this.cache.size;
  }

  connect(endpoint: Endpoint): ChatUpstream {
    const type = endpoint.type ?? 'openai-compatible';
    const resolved = { type, uri: endpoint.uri, model: endpoint.model, headers: endpoint.headers, idleTimeoutSeconds: endpoint.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS };
    switch (type) {
      case 'openai-compatible':
        return openAiCompatibleChat(this.openai.connect(endpoint));
      case 'openai-responses':
        return openAiResponsesChat(this.openai.connect(endpoint));
      case 'vertex-ai':
        return geminiChat(resolved, requireAuth(endpoint.auth, type), this.outbound.fetch);
      case 'anthropic':
        return anthropicChat(resolved, requireAuth(endpoint.auth, type), this.outbound.fetch);
      default:
        return assertNever(type);
    }
  }
}

function requireAuth(auth: LlmAuth | null, type: string): LlmAuth {
  if (!auth) throw invalid('llm.auth_required', `LLM type ${type} needs auth`, { auth: `required for LLM type ${type}` });
  return auth;
}
