import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { Dispatcher } from 'undici';
import { OutboundHttp, readUpTo } from '@lib/platform';

/** Where and how a registered OpenAI-compatible model is called, as the SDK client would call it. */
export interface OpenAiHttpTarget {
  /** The base URL without a trailing slash (`…/v1`), as given to the SDK. */
  readonly baseURL: string;
  /** The query string every request carries (`?api-version=…` for Azure), or ''. */
  readonly query: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The SDK's backstop: no headers or no body bytes for this long fails the call as a timeout. */
  readonly timeoutMs: number;
}

/** A successful answer: the status, its headers, and the body to read once. */
export type OpenAiHttpResponse = Pick<Dispatcher.ResponseData, 'statusCode' | 'headers' | 'body'>;

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
/** An error answer is only logged (scrubbed, 2,000 characters): more of it is not read. */
const MAX_ERROR_BYTES = 64 * 1024;
/** A completion larger than this is refused rather than held whole in memory (a model's answer is far smaller). */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * POSTs a JSON body to an OpenAI-compatible endpoint with undici's `request`, failing as the `openai` SDK fails
 * (APIUserAbortError, APIConnectionTimeoutError, APIConnectionError with the cause, APIError per status), so its
 * callers and `classifyOpenAiError` cannot tell it from the SDK. The chat hot path only: the SDK built a
 * WHATWG Request, Headers, log records and a web stream per call (~0.5 ms; docs/llms.md). Everything else
 * (model listings, the Responses API) stays on the SDK.
 */
export async function postJson(outbound: OutboundHttp, target: OpenAiHttpTarget, path: string, body: object, auth: Record<string, string | null>, signal: AbortSignal | undefined): Promise<OpenAiHttpResponse> {
  if (signal?.aborted) throw new APIUserAbortError();
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...target.headers };
  for (const [name, value] of Object.entries(auth)) {
    // A null removes the header (as in the SDK): `header` auth sends its own and no Authorization.
    for (const existing of Object.keys(headers)) if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
    if (value !== null) headers[name] = value;
  }
  let response: Dispatcher.ResponseData;
  try {
    response = await outbound.request(`${target.baseURL}${path}${target.query}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal,
      headersTimeout: target.timeoutMs,
      bodyTimeout: target.timeoutMs,
    });
  } catch (e) {
    throw connectionError(e, signal);
  }
  if (response.statusCode >= 200 && response.statusCode < 300) return response;
  const text = await readUpTo(response.body, MAX_ERROR_BYTES).then(
    ({ bytes }) => bytes.toString('utf8'),
    (e: Error) => e.message,
  );
  const json = safeJson(text);
  throw APIError.generate(response.statusCode, json as object | undefined, json === undefined ? text : undefined, webHeaders(response.headers));
}

/** A JSON answer's body; a body that is not JSON, or past {@link MAX_ANSWER_BYTES}, fails as an upstream error without a status. */
export async function readJson<T>(response: OpenAiHttpResponse, signal: AbortSignal | undefined): Promise<T> {
  let read: { bytes: Buffer; truncated: boolean };
  try {
    read = await readUpTo(response.body, MAX_ANSWER_BYTES);
  } catch (e) {
    throw connectionError(e, signal);
  }
  if (read.truncated) throw new APIError(undefined, undefined, `the model endpoint answered with a body over ${MAX_ANSWER_BYTES / 2 ** 20} MB`, webHeaders(response.headers));
  const json = safeJson(read.bytes.toString('utf8'));
  if (json === undefined) throw new APIError(undefined, undefined, `the model endpoint answered ${response.statusCode} with a body that is not JSON`, webHeaders(response.headers));
  return json as T;
}

/** A failure while sending or reading, as the SDK reports it. */
export function connectionError(e: unknown, signal: AbortSignal | undefined): Error {
  if (e instanceof APIError) return e;
  if (signal?.aborted) return new APIUserAbortError();
  if (TIMEOUT_CODES.has((e as { code?: string })?.code ?? '')) return new APIConnectionTimeoutError();
  // Not `instanceof Error`: an error from another realm (Node's core under jest) is kept as it is.
  return new APIConnectionError({ cause: typeof (e as Error)?.message === 'string' ? (e as Error) : new Error(String(e)) });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function webHeaders(headers: Dispatcher.ResponseData['headers']): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
  }
  return out;
}
