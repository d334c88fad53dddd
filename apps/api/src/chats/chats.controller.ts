import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { allows, Action, Principal } from '@lib/auth';
import { ChatAccess, Chats, ChatTurns, CorpusReadable } from '@lib/retrieval';
import { CallerAborted } from '@lib/llms';
import { CommandContext, invalid } from '@lib/platform';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { generationParams } from '../corpora/generation-input';
import { pageLimit } from '../http/paging';
import { multiCorpusRetrieval } from '../corpora/query-input';
import { writeQueryStream } from '../corpora/query-stream';
import { ChatRequestDto, UpdateTurnDto } from './chat.dto';
import { OpenApi } from '../openapi/openapi.decorator';

export const readableBy = (caller: Principal): CorpusReadable => (key) => allows(caller.caps, 'corpus.read', key);
const accessOf = (caller: Principal, action: Action): ChatAccess => ({ readable: readableBy(caller), allowed: (key) => allows(caller.caps, action, key) });

/** Chats (deprecated in the reference, still used by its clients): docs/chats.md. */
@Controller('v2/chats')
export class ChatsController {
  constructor(
    private readonly turnsOf: ChatTurns,
    private readonly chats: Chats,
  ) {}

  @OpenApi({ body: ChatRequestDto, stream: true, status: 200 })
  @Post()
  @Policy('chat.turn')
  async create(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res() res: Response): Promise<void> {
    await this.turn(undefined, body, caller, ctx, res);
  }

  @OpenApi({ body: ChatRequestDto, stream: true, status: 200 })
  @Post(':chat_id/turns')
  @Policy('chat.turn')
  async createTurn(@Param('chat_id') chatId: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res() res: Response): Promise<void> {
    await this.turn(chatId, body, caller, ctx, res);
  }

  /** A turn is a query with generation (always: a chat answers); errors before a stream starts are plain JSON. */
  private async turn(chatId: string | undefined, body: unknown, caller: Principal, ctx: CommandContext, res: Response): Promise<void> {
    const dto = validateBody(ChatRequestDto, body);
    const generation = generationParams(dto.generation ?? {});
    if (!generation) throw invalid('request.invalid', 'A chat turn needs generation: generation.enabled may not be false', { 'generation.enabled': 'a chat turn always generates an answer' });
    const { chat: _chat, ...request } = body as Record<string, unknown>;
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const turn = {
      chatId,
      request,
      retrieval: multiCorpusRetrieval(dto, ctx),
      generation,
      store: dto.save_history ?? dto.chat?.store ?? true,
      readable: readableBy(caller),
      ctx,
      signal: abort.signal,
    };
    try {
      if (dto.stream_response) return void (await writeQueryStream(res, await this.turnsOf.stream(turn), ctx.requestId));
      res.status(200).json(await this.turnsOf.answer(turn));
    } catch (e) {
      if (e instanceof CallerAborted || res.destroyed) return void res.end();
      throw e;
    }
  }

  @Get()
  @Policy('chat.read')
  list(@Caller() caller: Principal, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    return this.chats.list(pageLimit(limit, 1000, 10_000), pageKey, readableBy(caller));
  }

  @Get(':chat_id')
  @Policy('chat.read')
  get(@Param('chat_id') chatId: string, @Caller() caller: Principal) {
    return this.chats.get(chatId, readableBy(caller));
  }

  @Delete(':chat_id')
  @Policy('chat.delete')
  @HttpCode(204)
  async remove(@Param('chat_id') chatId: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext): Promise<void> {
    await this.chats.deleteChat(chatId, accessOf(caller, 'corpus.delete'), ctx);
  }

  @Get(':chat_id/turns')
  @Policy('chat.read')
  turns(@Param('chat_id') chatId: string, @Caller() caller: Principal) {
    return this.chats.turns(chatId, readableBy(caller));
  }

  @Get(':chat_id/turns/:turn_id')
  @Policy('chat.read')
  getTurn(@Param('chat_id') chatId: string, @Param('turn_id') turnId: string, @Caller() caller: Principal) {
    return this.chats.turn(chatId, turnId, readableBy(caller));
  }

  @Delete(':chat_id/turns/:turn_id')
  @Policy('chat.delete')
  @HttpCode(204)
  async removeTurn(@Param('chat_id') chatId: string, @Param('turn_id') turnId: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext): Promise<void> {
    await this.chats.deleteTurn(chatId, turnId, accessOf(caller, 'corpus.delete'), ctx);
  }

  @OpenApi({ body: UpdateTurnDto })
  @Patch(':chat_id/turns/:turn_id')
  @Policy('chat.update')
  updateTurn(@Param('chat_id') chatId: string, @Param('turn_id') turnId: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    const dto = validateBody(UpdateTurnDto, body);
    if (dto.enabled === undefined) return this.chats.turn(chatId, turnId, readableBy(caller));
    return this.chats.updateTurn(chatId, turnId, dto.enabled, accessOf(caller, 'corpus.write'), ctx);
  }
}
