import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { DomainError } from '@lib/platform';

/** The caller went away and we cancelled the upstream call: nothing to answer. */
export class CallerAborted extends Error {
  constructor() {
    super('The caller disconnected; the upstream call was cancelled');
  }
}

/** Upstream text is shortened and scrubbed of our own credentials before it reaches a caller or a log. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('****');
  return out;
}

/**
 * Maps an OpenAI SDK failure to the service's errors: no answer in time → 504; unreachable or failing
 * upstream → 502 with the reason; upstream 400/404/422 (it rejected what the caller sent) → 400; upstream
 * 429 → 429; upstream 401/403 (our stored credential) → 502, since the caller cannot fix it.
 */
export function upstreamError(e: unknown, llmName: string, timeoutSeconds: number, secrets: readonly string[], timedOut = false): Error {
  if (e instanceof DomainError || e instanceof CallerAborted) return e;
  if (timedOut || e instanceof APIConnectionTimeoutError) {
    return new DomainError('timeout', 'llm.upstream_timeout', `LLM "${llmName}" did not answer within ${timeoutSeconds} s`);
  }
  if (e instanceof APIUserAbortError) return new CallerAborted();
  if (e instanceof APIConnectionError) {
    const cause = (e.cause as Error | undefined)?.message ?? e.message;
    return new DomainError('upstream', 'llm.upstream_unreachable', `LLM "${llmName}" could not be reached: ${scrub(cause, secrets)}`);
  }
  if (e instanceof APIError) {
    const reason = scrub(e.message, secrets);
    const status = e.status ?? 0;
    if (status === 400 || status === 404 || status === 422) return new DomainError('invalid', 'llm.upstream_rejected', `LLM "${llmName}" rejected the request (${status}): ${reason}`);
    if (status === 429) return new DomainError('rate_limited', 'llm.upstream_rate_limited', `LLM "${llmName}" is rate limited upstream (429): ${reason}`, { retryAfterSeconds: 1 });
    if (status === 401 || status === 403) return new DomainError('upstream', 'llm.upstream_auth', `LLM "${llmName}" refused the stored credentials (${status}): ${reason}`);
    return new DomainError('upstream', 'llm.upstream_failed', `LLM "${llmName}" failed (${status || 'stream error'}): ${reason}`);
  }
  return new DomainError('upstream', 'llm.upstream_failed', `LLM "${llmName}" failed: ${scrub((e as Error)?.message ?? String(e), secrets)}`);
}
