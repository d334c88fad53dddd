import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { Logger } from '@nestjs/common';
import { DomainError, outboundRefusal } from '@lib/platform';

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

/** Upstream text is shortened and scrubbed of our own credentials before it reaches a log. */
export function scrub(text: string, secrets: readonly string[], max = 300): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('****');
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

const log = new Logger('llms.upstream');

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
 * 502; upstream 400/404/422 (it rejected what the caller sent) → 400; upstream 429 → 429; upstream 401/403 (our
 * stored credential) → 502, since the caller cannot fix it; a target the outbound policy refuses → 502 naming the
 * setting. The caller is told the status and a generic reason, never the upstream's text (it may echo
 * credentials, internal addresses or another tenant's data): that goes to the service log only, scrubbed of the
 * model's secrets. `classify` reads the SDK's error (the OpenAI SDK's by default).
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
  const refused = outboundRefusal(e);
  if (refused) return new DomainError('upstream', 'llm.outbound_refused', `LLM "${llmName}" cannot be called: ${refused.message}`);
  const failure = classify(e);
  if (failure.kind === 'status' || failure.kind === 'other') {
    log.warn(`LLM "${llmName}" upstream ${failure.kind === 'status' ? `answered ${failure.status}` : 'failed'}: ${scrub(failure.message, secrets, 2000)}`);
  }
  if (timedOut || failure.kind === 'timeout') {
    return new DomainError('timeout', 'llm.upstream_timeout', `LLM "${llmName}" did not answer within ${timeoutSeconds} s`);
  }
  switch (failure.kind) {
    case 'aborted':
      return new CallerAborted();
    case 'unreachable':
      return new DomainError('upstream', 'llm.upstream_unreachable', `LLM "${llmName}" could not be reached: ${scrub(failure.message, secrets)}`);
    case 'other':
      return new DomainError('upstream', 'llm.upstream_failed', `LLM "${llmName}" failed: the model endpoint reported an error (details are in the service log)`);
    case 'status': {
      const status = failure.status;
      const answered = `the model endpoint answered ${status}`;
      if (status === 400 || status === 404 || status === 422) return new DomainError('invalid', 'llm.upstream_rejected', `LLM "${llmName}" rejected the request: ${answered}`);
      if (status === 429) return new DomainError('rate_limited', 'llm.upstream_rate_limited', `LLM "${llmName}" is rate limited upstream: ${answered}`, { retryAfterSeconds: 1 });
      if (status === 401 || status === 403) return new DomainError('upstream', 'llm.upstream_auth', `LLM "${llmName}" refused the stored credentials: ${answered}`);
      return new DomainError('upstream', 'llm.upstream_failed', `LLM "${llmName}" failed: ${answered}`);
    }
  }
}
