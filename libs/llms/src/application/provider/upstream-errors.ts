import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { DomainError } from '@lib/platform';

/** What a thrown upstream error means, whichever SDK threw it. */
export type UpstreamFailure =
  | { readonly kind: 'status'; readonly status: number; readonly message: string }
  | { readonly kind: 'unreachable'; readonly message: string }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'other'; readonly message: string };

/** The caller went away and we cancelled the upstream call: nothing to answer. */
export class CallerAborted extends Error {
  constructor() {
    super('The caller disconnected; the upstream call was cancelled');
  }
}

/** Upstream text is shortened and scrubbed of our own credentials before it reaches a caller or a log. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('****');
  return out.length > 300 ? `${out.slice(0, 300)}…` : out;
}

/**
 * Why a connection failed, from an error's cause chain: "fetch failed: connect ECONNREFUSED 127.0.0.1:9"
 * rather than fetch's bare "fetch failed". Starts below the SDK's own wrapper when `skipOwn`.
 */
export function connectionReason(e: unknown, skipOwn = false): string {
  const messages: string[] = [];
  let at = skipOwn ? (e as { cause?: unknown })?.cause : e;
  for (let depth = 0; at && depth < 5; depth++, at = (at as { cause?: unknown }).cause) {
    const message = (at as Error).message;
    if (message && !messages.includes(message)) messages.push(message);
  }
  return messages.join(': ') || String(e);
}

/** An OpenAI SDK failure (also the shape of the Anthropic SDK's, built by the same generator). */
export function classifyOpenAiError(e: unknown): UpstreamFailure {
  if (e instanceof APIConnectionTimeoutError) return { kind: 'timeout' };
  if (e instanceof APIUserAbortError) return { kind: 'aborted' };
  if (e instanceof APIConnectionError) return { kind: 'unreachable', message: e.cause ? connectionReason(e, true) : e.message };
  if (e instanceof APIError) return e.status ? { kind: 'status', status: e.status, message: e.message } : { kind: 'other', message: e.message };
  return { kind: 'other', message: (e as Error)?.message ?? String(e) };
}

/**
 * Maps an upstream failure to the service's errors: no answer in time → 504; unreachable or failing upstream →
 * 502 with the reason; upstream 400/404/422 (it rejected what the caller sent) → 400; upstream 429 → 429;
 * upstream 401/403 (our stored credential) → 502, since the caller cannot fix it. `classify` reads the SDK's
 * error (the OpenAI SDK's by default).
 */
export function upstreamError(
  e: unknown,
  llmName: string,
  timeoutSeconds: number,
  secrets: readonly string[],
  timedOut = false,
  classify: (e: unknown) => UpstreamFailure = classifyOpenAiError,
): Error {
  if (e instanceof DomainError || e instanceof CallerAborted) return e;
  const failure = classify(e);
  if (timedOut || failure.kind === 'timeout') {
    return new DomainError('timeout', 'llm.upstream_timeout', `LLM "${llmName}" did not answer within ${timeoutSeconds} s`);
  }
  switch (failure.kind) {
    case 'aborted':
      return new CallerAborted();
    case 'unreachable':
      return new DomainError('upstream', 'llm.upstream_unreachable', `LLM "${llmName}" could not be reached: ${scrub(failure.message, secrets)}`);
    case 'other':
      return new DomainError('upstream', 'llm.upstream_failed', `LLM "${llmName}" failed: ${scrub(failure.message, secrets)}`);
    case 'status': {
      const reason = scrub(failure.message, secrets);
      const status = failure.status;
      if (status === 400 || status === 404 || status === 422) return new DomainError('invalid', 'llm.upstream_rejected', `LLM "${llmName}" rejected the request (${status}): ${reason}`);
      if (status === 429) return new DomainError('rate_limited', 'llm.upstream_rate_limited', `LLM "${llmName}" is rate limited upstream (429): ${reason}`, { retryAfterSeconds: 1 });
      if (status === 401 || status === 403) return new DomainError('upstream', 'llm.upstream_auth', `LLM "${llmName}" refused the stored credentials (${status}): ${reason}`);
      return new DomainError('upstream', 'llm.upstream_failed', `LLM "${llmName}" failed (${status}): ${reason}`);
    }
  }
}
