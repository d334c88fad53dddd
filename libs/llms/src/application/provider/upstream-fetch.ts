import { Agent, fetch as undiciFetch } from 'undici';

/**
 * HTTP for calls to registered models. Node's global fetch gives up on any response whose headers (or next
 * body bytes) take more than 300 s, whatever the model's `idle_timeout_seconds` (up to 3600) says: a reasoning
 * model answering a non-streamed call in six minutes would fail as a broken connection. This agent has those
 * transport timeouts off, so ChatCompletions' own idle timer (docs/llms.md) is the one limit, and a timeout
 * is reported as one (504). undici is the library behind Node's fetch; its package is used so the agent is ours.
 */
const agent = new Agent({ headersTimeout: 0, bodyTimeout: 0 });

export const upstreamFetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
  undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: agent })) as unknown as typeof fetch;
