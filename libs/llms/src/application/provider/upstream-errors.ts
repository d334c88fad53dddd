import { Logger } from '@nestjs/common';
import { DomainError, outboundRefusal } from '@lib/platform';
import { scrub, UpstreamFailure } from './upstream-failure.port';

export { connectionReason, scrub } from './upstream-failure.port';
export type { UpstreamFailure } from './upstream-failure.port';

/** The caller went away and we cancelled the upstream call: nothing to answer. */
export class CallerAborted extends Error {
  constructor() {
    super('The caller disconnected; the upstream call was cancelled');
  }
}

const log = new Logger('llms.upstream');

/**
 * Maps an upstream failure to the service's errors: no answer in time → 504; unreachable or failing upstream →
 * 502; upstream 400/404/422 (it rejected what the caller sent) → 400; upstream 429 → 429; upstream 401/403 (our
 * stored credential) → 502, since the caller cannot fix it; a target the outbound policy refuses → 502 naming the
 * setting. The caller is told the status and a generic reason, never the upstream's text (it may echo
 * credentials, internal addresses or another tenant's data): that goes to the service log only, scrubbed of the
 * model's secrets. `classify` reads the SDK's error (the upstream's own: `ChatUpstream.classify`).
 */
export function upstreamError(
  e: unknown,
  llmName: string,
  timeoutSeconds: number,
  secrets: readonly string[],
  timedOut: boolean,
  classify: (e: unknown) => UpstreamFailure,
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
