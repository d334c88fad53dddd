import { Body, Controller, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CallerAborted, ChatCompletions, ChatRequest } from '@lib/llms';
import { CommandContext, DomainError, invalid } from '@lib/platform';
import { Ctx } from '../http/command-context';
import { SseStream } from '../http/sse';
import { BodyLimit } from '../http/body-limit';
import { Policy } from '../http/policy';
import { checkDto, validationError } from '../http/validation';
import { sendJson } from '../http/send-json';
import { ChatCompletionDto } from './chat.dto';
import { OpenApi } from '../openapi/openapi.decorator';

/** Checks the fields the service reads; unknown fields are the upstream's business, so they are not refused. */
function validateChat(body: unknown): ChatRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('request.invalid', 'The request body must be a JSON object', { body: 'must be a JSON object' });
  const errors = checkDto(ChatCompletionDto, body as Record<string, unknown>, { forbidUnknownValues: true }).errors;
  const messages = (body as { messages?: unknown }).messages;
  if (Array.isArray(messages)) {
    messages.forEach((m: { role?: unknown; content?: unknown; tool_calls?: unknown }, i) => {
      const ok = typeof m?.content === 'string' || Array.isArray(m?.content) || (m?.role === 'assistant' && (m.content === null || m.content === undefined) && Array.isArray(m.tool_calls));
      if (!ok) errors[`messages.${i}.content`] = 'must be a string or an array of content parts';
    });
  }
  if (Object.keys(errors).length) throw validationError(errors);
  return body as ChatRequest;
}

/** OpenAI-compatible chat completions; `stream: true` answers with server-sent `chat.completion.chunk`s and `[DONE]`. */
@Controller('v2/llms/chat')
export class ChatController {
  constructor(private readonly chat: ChatCompletions) {}

  @OpenApi({ body: ChatCompletionDto, stream: true, status: 200 })
  @Post('completions')
  @BodyLimit(50) // a model's whole context, images included
  @Policy('llm.use')
  async create(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res() res: Response): Promise<void> {
    const request = validateChat(body);
    // A caller that disconnects cancels the upstream call.
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    try {
      if (!request.stream) {
        sendJson(res, 200, await this.chat.complete(request, ctx, abort.signal));
        return;
      }
      const chunks = await this.chat.streamJson(request, ctx, abort.signal);
      const stream = SseStream.open(res);
      try {
        for await (const chunk of chunks) {
          if (stream.closed) break;
          await stream.paced({ data: ` ${chunk}` });
        }
        stream.end({ data: ' [DONE]' });
      } catch (e) {
        // Past the headers a failure can only be an event: OpenAI clients raise it as an APIError.
        stream.end({ data: ` ${JSON.stringify({ error: errorBody(e, ctx.requestId) })}` });
      }
    } catch (e) {
      if (e instanceof CallerAborted || res.destroyed) return void res.end();
      throw e;
    }
  }
}

function errorBody(e: unknown, requestId: string) {
  if (e instanceof DomainError) return { message: e.message, type: e.kind, code: e.code, request_id: requestId };
  return { message: 'Internal server error.', type: 'internal', code: null, request_id: requestId };
}
