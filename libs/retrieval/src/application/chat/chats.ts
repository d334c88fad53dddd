import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, DomainError, READ_STORE, ReadStore, StreamWriter } from '@lib/platform';
import { ChatEvent, chatNotFound, ChatState, decideDeleteChat, decideDeleteTurn, decideUpdateTurn, turnNotFound } from '../../domain/chat';
import { CHAT_TURNS, ChatRow, CHATS, chatView, ChatTurnRow, turnView } from '../../read-models/chats';
import type { CorpusReadable } from '../query-history/query-history';
import { filteredPage } from '../query-history/filtered-page';
import { CHAT_FOLD, chatStream } from './chat-turns';

/**
 * Who may do what to a chat (docs/chats.md): see it when the caller may read every corpus the chat searched
 * (else it does not exist, as for a query on a hidden corpus); change or delete it when the caller also holds
 * the route's action (`corpus.write`, `corpus.delete`) on each of them (else 403).
 */
export interface ChatAccess {
  readonly readable: CorpusReadable;
  readonly allowed: (corpusKey: string) => boolean;
}

const forbidden = (chatId: string) => new DomainError('forbidden', 'chat.forbidden', `Permissions do not allow changing chat "${chatId}"`);

/** Chats and turns: reads from the `chats` projection, changes appended to `chat-<id>`. */
@Injectable()
export class Chats {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  private async visible(chatId: string, readable: CorpusReadable): Promise<ChatRow> {
    const row = await this.reads.get<ChatRow>(CHATS, chatId);
    if (!row || !row.corpus_keys.every(readable)) throw chatNotFound(chatId);
    return row;
  }

  async list(limit: number, pageKey: string | undefined, readable: CorpusReadable) {
    const page = await filteredPage<ChatRow>(this.reads, CHATS, { sort: { field: 'created_at', direction: 'desc' }, limit, pageKey }, (r) => r.corpus_keys.every(readable));
    return { chats: page.items.map(chatView), metadata: page.pageKey ? { page_key: page.pageKey } : {} };
  }

  async get(chatId: string, readable: CorpusReadable) {
    return chatView(await this.visible(chatId, readable));
  }

  private async turnRows(chatId: string): Promise<ChatTurnRow[]> {
    return (await this.reads.find<ChatTurnRow>(CHAT_TURNS, { where: [{ field: 'chat_id', op: 'eq', value: chatId }], sort: { field: 'seq', direction: 'asc' }, limit: 10_000 })).items;
  }

  async turns(chatId: string, readable: CorpusReadable) {
    await this.visible(chatId, readable);
    return { turns: (await this.turnRows(chatId)).map(turnView) };
  }

  async turn(chatId: string, turnId: string, readable: CorpusReadable) {
    await this.visible(chatId, readable);
    const row = await this.reads.get<ChatTurnRow>(CHAT_TURNS, turnId);
    if (!row || row.chat_id !== chatId) throw turnNotFound(chatId, turnId);
    return turnView(row);
  }

  private async change(chatId: string, access: ChatAccess, decide: (s: ChatState) => ChatEvent[], ctx: CommandContext): Promise<void> {
    const row = await this.visible(chatId, access.readable);
    if (!row.corpus_keys.every(access.allowed)) throw forbidden(chatId);
    await this.streams.write(chatStream(chatId), CHAT_FOLD, decide, ctx, ['chats']);
  }

  async deleteChat(chatId: string, access: ChatAccess, ctx: CommandContext): Promise<void> {
    await this.change(chatId, access, (s) => decideDeleteChat(s, chatId, ctx.now), ctx);
  }

  async deleteTurn(chatId: string, turnId: string, access: ChatAccess, ctx: CommandContext): Promise<void> {
    await this.change(chatId, access, (s) => decideDeleteTurn(s, chatId, turnId, ctx.now), ctx);
  }

  /** Disables the turn and the turns after it; answers the turn as it is now. */
  async updateTurn(chatId: string, turnId: string, enabled: boolean, access: ChatAccess, ctx: CommandContext) {
    await this.change(chatId, access, (s) => decideUpdateTurn(s, chatId, turnId, enabled, ctx.now), ctx);
    return this.turn(chatId, turnId, access.readable);
  }
}
