import type { ServerResponse } from 'node:http';
import { bedrockChunk, checkSigV4, SigV4Check } from './aws-wire';
import { FakeGoogleTokenEndpoint } from './fake-google-token';
import { FakeLlmServer, FakeReply, FakeRequest, Generation, sendJson, streamPieces, textOfReply, usageOfReply } from './fake-llm-server';

type Route = 'direct' | 'bedrock' | 'vertex';

/**
 * Anthropic's Messages API on 127.0.0.1, on the three paths Anthropic's SDKs call: the direct API
 * (`POST /v1/messages`, server-sent events when streaming), AWS Bedrock (`/model/{id}/invoke` and
 * `/invoke-with-response-stream`, answered in AWS's binary event stream) and Vertex AI
 * (`…/publishers/anthropic/models/{id}:rawPredict` and `:streamRawPredict`). `GET /v1/models/{id}` reports
 * `max_input_tokens` from `models`.
 */
export class FakeAnthropicServer extends FakeLlmServer {
  /** Model id → max_input_tokens, for `GET /v1/models/{id}`. */
  readonly models = new Map<string, number>();
  /** Bedrock access key id → secret key, for checking SigV4 signatures (`sigv4Of`). */
  readonly awsSecrets = new Map<string, string>();
  /** A Google token endpoint at `/token`, for Vertex service-account keys whose `token_uri` names it. */
  readonly tokens = new FakeGoogleTokenEndpoint(this);

  static start(): Promise<FakeAnthropicServer> {
    const server = new FakeAnthropicServer();
    server.route('GET', /\/v1\/models\/[^/]+$/, (req) => {
      const id = decodeURIComponent(req.path.split('/').pop()!);
      const limit = server.models.get(id);
      return limit === undefined
        ? { status: 404, json: { type: 'error', error: { type: 'not_found_error', message: `model: ${id}` } } }
        : { status: 200, json: { type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z', max_input_tokens: limit, max_tokens: 8192 } };
    });
    return server.listen();
  }

  /** The Messages base URL the direct API is reached at (what a registration's `uri` names, plus `/v1/messages`). */
  get messagesUrl(): string {
    return `${this.url}/v1/messages`;
  }

  /** The SigV4 verdict on a received Bedrock request. */
  sigv4Of(req: FakeRequest): SigV4Check {
    return checkSigV4(req, this.awsSecrets);
  }

  routeOf(req: FakeRequest): Route | undefined {
    if (req.method !== 'POST') return undefined;
    if (req.path.endsWith('/v1/messages')) return 'direct';
    if (/\/model\/[^/]+\/invoke(-with-response-stream)?$/.test(req.path)) return 'bedrock';
    if (/\/publishers\/anthropic\/models\/[^/]+:(stream)?[rR]awPredict$/.test(req.path)) return 'vertex';
    return undefined;
  }

  protected recognise(req: FakeRequest): Generation | undefined {
    const route = this.routeOf(req);
    if (!route) return undefined;
    if (route === 'direct') return { stream: req.body?.stream === true, model: String(req.body?.model) };
    if (route === 'bedrock') {
      const [, model, stream] = /\/model\/([^/]+)\/invoke(-with-response-stream)?$/.exec(req.path)!;
      return { stream: stream !== undefined, model: decodeURIComponent(model) };
    }
    const [, model, stream] = /\/models\/([^/:]+(?:%3A[^/:]*)?):(stream)?[rR]awPredict$/.exec(req.path) ?? [];
    return { stream: stream !== undefined || req.body?.stream === true, model: decodeURIComponent(model ?? '') };
  }

  protected sendError(res: ServerResponse, status: number, message: string): void {
    const type = status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
    sendJson(res, status, { type: 'error', error: { type, message } });
  }

  protected async answer(req: FakeRequest, generation: Generation, reply: FakeReply, res: ServerResponse): Promise<void> {
    const id = `msg_fake_${++this.counter}`;
    const usage = usageOfReply(reply, req);
    // Anthropic counts cached input apart: input_tokens is the uncached rest.
    const inUsage = usage ? { input_tokens: usage.input - usage.cachedInput, cache_read_input_tokens: usage.cachedInput, cache_creation_input_tokens: 0 } : { input_tokens: 0 };
    const stop = reply.stop ?? 'end_turn';
    if (!generation.stream) {
      const message = { id, type: 'message', role: 'assistant', model: generation.model, content: [{ type: 'text', text: textOfReply(reply) }], stop_reason: stop, stop_sequence: null, usage: { ...inUsage, output_tokens: usage?.output ?? 0 } };
      return sendJson(res, 200, message);
    }
    const bedrock = this.routeOf(req) === 'bedrock';
    res.writeHead(200, { 'content-type': bedrock ? 'application/vnd.amazon.eventstream' : 'text/event-stream' });
    const send = (event: { type: string } & Record<string, unknown>) => res.write(bedrock ? bedrockChunk(event) : `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    send({ type: 'message_start', message: { id, type: 'message', role: 'assistant', model: generation.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...inUsage, output_tokens: 1 } } });
    send({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    if (!bedrock) send({ type: 'ping' });
    const finished = await streamPieces(reply, res, (piece) => send({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } }));
    if (!finished) return;
    if (reply.streamError) {
      send({ type: 'error', error: { type: 'overloaded_error', message: reply.streamError } });
      return void res.end();
    }
    send({ type: 'content_block_stop', index: 0 });
    send({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage?.output ?? 0 } });
    send({ type: 'message_stop' });
    res.end();
  }
}
