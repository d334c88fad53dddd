import type { LlmType } from '../domain/llm';

/** Where and how a provider adapter reaches a model (the auth is passed apart, opened). */
export interface ProviderEndpoint {
  readonly type: LlmType;
  readonly uri: string;
  readonly model: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Resolved: the model's `idle_timeout_seconds`, or the provider default. */
  readonly idleTimeoutSeconds: number;
}
