import type { ServerResponse } from 'node:http';
import { FakeLlmServer, FakeReply, FakeRequest, Generation, sendJson, streamPieces, textOfReply, usageOfReply } from './fake-llm-server';

/**
 * OpenAI's Responses API on 127.0.0.1 (`POST /v1/responses`): a response object, or when streaming its
 * typed server-sent events (`response.created` … `response.output_text.delta` … `response.completed`, or
 * `response.failed`). `reply.stop: 'incomplete'` ends a response incomplete at `max_output_tokens`.
 */
export class FakeOpenAIResponsesServer extends FakeLlmServer {
  static start(): Promise<FakeOpenAIResponsesServer> {
    return new FakeOpenAIResponsesServer().listen();
  }

  /** The Responses URL a registration names (`uri`). */
  get responsesUrl(): string {
    return `${this.url}/v1/responses`;
  }

  protected recognise(req: FakeRequest): Generation | undefined {
    return req.method === 'POST' && req.path.endsWith('/responses') ? { stream: req.body?.stream === true, model: String(req.body?.model) } : undefined;
  }

  protected sendError(res: ServerResponse, status: number, message: string): void {
    sendJson(res, status, { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } });
  }

  protected async answer(req: FakeRequest, generation: Generation, reply: FakeReply, res: ServerResponse): Promise<void> {
    const id = `resp_fake_${++this.counter}`;
    const messageId = `msg_fake_${this.counter}`;
    const u = usageOfReply(reply, req);
    const usage = u && {
      input_tokens: u.input,
      input_tokens_details: { cached_tokens: u.cachedInput },
      output_tokens: u.output,
      output_tokens_details: { reasoning_tokens: u.reasoning },
      total_tokens: u.input + u.output,
    };
    const incomplete = reply.stop === 'incomplete';
    const text = textOfReply(reply);
    const message = (t: string, status: string) => ({ id: messageId, type: 'message', role: 'assistant', status, content: [{ type: 'output_text', text: t, annotations: [] }] });
    const response = (status: string, output: object[], extra: object = {}) => ({
      id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status,
      model: generation.model,
      output,
      error: null,
      incomplete_details: incomplete && status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
      usage: status === 'in_progress' ? null : (usage ?? null),
      ...extra,
    });
    const endStatus = incomplete ? 'incomplete' : 'completed';
    if (!generation.stream) return sendJson(res, 200, response(endStatus, [message(text, endStatus)]));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let sequence = 0;
    const send = (type: string, body: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...body })}\n\n`);
    send('response.created', { response: response('in_progress', []) });
    send('response.in_progress', { response: response('in_progress', []) });
    send('response.output_item.added', { output_index: 0, item: { id: messageId, type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
    send('response.content_part.added', { item_id: messageId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    const finished = await streamPieces(reply, res, (delta) => send('response.output_text.delta', { item_id: messageId, output_index: 0, content_index: 0, delta, logprobs: [] }));
    if (!finished) return;
    if (reply.streamError) {
      send('response.failed', { response: response('failed', [], { error: { code: 'server_error', message: reply.streamError } }) });
      return void res.end();
    }
    send('response.output_text.done', { item_id: messageId, output_index: 0, content_index: 0, text, logprobs: [] });
    send('response.content_part.done', { item_id: messageId, output_index: 0, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
    send('response.output_item.done', { output_index: 0, item: message(text, endStatus) });
    send(`response.${endStatus}`, { response: response(endStatus, [message(text, endStatus)]) });
    res.end();
  }
}
