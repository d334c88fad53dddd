import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { connectionReason, UpstreamFailure } from '../../application/provider/upstream-failure.port';

/** An OpenAI SDK failure (also the shape of the Anthropic SDK's, built by the same generator). */
export function classifyOpenAiError(e: unknown): UpstreamFailure {
  if (e instanceof APIConnectionTimeoutError) return { kind: 'timeout' };
  if (e instanceof APIUserAbortError) return { kind: 'aborted' };
  if (e instanceof APIConnectionError) return { kind: 'unreachable', message: e.cause ? connectionReason(e, true) : e.message };
  if (e instanceof APIError) return e.status ? { kind: 'status', status: e.status, message: e.message } : { kind: 'other', message: e.message };
  return { kind: 'other', message: (e as Error)?.message ?? String(e) };
}
