import { APIError } from 'openai';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ChatUpstream, StreamItem } from '../../application/provider/chat-upstream.port';
import type { Upstream } from './openai-provider';
import { classifyOpenAiError } from './openai-errors';
import { connectionError, MAX_ANSWER_BYTES, OpenAiHttpResponse, readJson, webHeaders } from './openai-http';

const CONTEXT_FIELDS = ['max_model_len', 'context_length', 'context_window', 'max_context_length', 'max_input_tokens'];

/**
 * `type: openai-compatible`: the request goes through as the caller sent it (fields the service does not read
 * included). Streams are read as server-sent events straight from the response body, so each chunk's own
 * bytes can be relayed; every chunk is still parsed, for the usage that quotas count and for error events.
 * Completions go out through undici's `request` (openai-http.ts) with the SDK's errors; `GET /models` through
 * the SDK.
 */
export function openAiCompatibleChat(upstream: Upstream): ChatUpstream {
  return {
    type: 'openai-compatible',
    model: upstream.model,
    idleTimeoutSeconds: upstream.idleTimeoutSeconds,
    secrets: upstream.secrets,
    translates: { tools: true, responseFormat: true },
    async complete(body, signal) {
      const { stream_options: _ignored, ...rest } = body;
      return readJson<ChatCompletion>(await upstream.post('/chat/completions', { ...rest, stream: false }, signal), signal);
    },
    async stream(body, signal) {
      // Usage is always asked for: quotas count it, whether or not the caller wants to see it.
      const options = { ...((body.stream_options as object | undefined) ?? {}), include_usage: true };
      return serverSentChunks(await upstream.post('/chat/completions', { ...body, stream: true, stream_options: options }, signal), signal);
    },
    classify: classifyOpenAiError,
    async contextLimit() {
      const listing = (await upstream.client.models.list({ headers: await upstream.authHeaders() })).data as unknown as Record<string, unknown>[];
      const entry = listing.find((m) => m.id === upstream.model);
      const field = entry && CONTEXT_FIELDS.find((f) => typeof entry[f] === 'number');
      return entry && field ? { value: entry[field] as number, detail: `GET /models reports ${field}` } : undefined;
    },
  };
}

/**
 * The `data:` events of an OpenAI-compatible stream, each parsed and kept as its JSON text; `[DONE]` ends it.
 * An `{"error": …}` event is thrown as the SDK's APIError, as the SDK's own stream reader does; a body that breaks
 * off as the SDK's connection errors.
 */
export async function* serverSentChunks(response: OpenAiHttpResponse, signal?: AbortSignal): AsyncGenerator<StreamItem> {
  const body = response.body;
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const decoder = new TextDecoder();
  // The text after the last whole event, as received: joined only once a blank line has come, so an event sent in
  // many small pieces costs its length once, not once per piece (a growing string is re-flattened by each search).
  let pending: string[] = [];
  let pendingLength = 0;
  let tail = '';
  let finished = false;
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (e) {
        throw connectionError(e, signal);
      }
      const done = next.done === true;
      const text = done ? decoder.decode() : decoder.decode(next.value, { stream: true });
      pending.push(text);
      pendingLength += text.length;
      // A blank line may straddle the last piece and this one: the last three characters are looked at again.
      const seen = tail + text;
      const ended = eventEnd(seen, 0) >= 0;
      tail = seen.slice(-3);
      if (ended) {
        const buffer = pending.join('');
        let at = 0;
        let end: number;
        while ((end = eventEnd(buffer, at)) >= 0) {
          const data = dataOf(buffer.slice(at, end));
          // The blank line after it: "\n\n" or "\r\n\r\n" (what eventEnd found).
          at = end + (buffer[end] === '\r' ? 4 : 2);
          if (data === undefined) continue;
          if (data === '[DONE]') {
            finished = true;
            return;
          }
          const chunk = JSON.parse(data) as ChatCompletionChunk & { error?: unknown };
          if (chunk.error) throw new APIError(undefined, chunk.error as object, undefined, webHeaders(response.headers));
          yield { chunk, json: data };
        }
        const rest = buffer.slice(at);
        pending = [rest];
        pendingLength = rest.length;
      }
      if (pendingLength > MAX_ANSWER_BYTES) throw new APIError(undefined, undefined, `the model endpoint sent an event over ${MAX_ANSWER_BYTES / 2 ** 20} MB`, webHeaders(response.headers));
      if (done) return;
    }
  } finally {
    // After [DONE] the rest of the body (the chunked terminator) is read, so the connection is kept for the next
    // call; for at most a second. A caller that stops reading (disconnect, idle timeout) releases the connection.
    if (finished && !body.readableEnded) drain(chunks, () => body.destroy());
    else if (!body.destroyed) body.destroy();
  }
}

function drain(chunks: AsyncIterator<Buffer>, giveUp: () => void): void {
  const timer = setTimeout(giveUp, 1000);
  timer.unref();
  void (async () => {
    try {
      while (!(await chunks.next()).done);
    } catch {
      // The connection went away meanwhile: nothing to keep.
    } finally {
      clearTimeout(timer);
    }
  })();
}

/** Index of the first event's end at or after `from` (before its blank line), or -1 while the event is incomplete. */
function eventEnd(buffer: string, from: number): number {
  const lf = buffer.indexOf('\n\n', from);
  const crlf = buffer.indexOf('\r\n\r\n', from);
  if (lf < 0) return crlf;
  return crlf < 0 ? lf : Math.min(lf, crlf);
}

/** The event's data lines joined (SSE: several `data:` lines are one value); undefined for comments and empty events. */
function dataOf(event: string): string | undefined {
  let data: string | undefined;
  for (const line of event.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}
