import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CommandContext, Fold, StreamWriter, streamId } from '@lib/platform';
import { ChatEvent, ChatExchange, chatContext, chatFold, chatNotFound, ChatState, decideAddTurn } from '../../domain/chat';
import type { GenerationParams } from '../../domain/generation-params';
import { AnswerQuery } from '../answer-query/answer-query';
import type { QueryAnswer, QueryStreamEvent } from '../answer-query/query-answer';
import { StreamQueryAnswer } from '../answer-query/stream-query-answer';
import type { QueryCorpora } from '../query/query-corpora';
import { CorpusReadable, QueryHistory } from '../query-history/query-history';
import type { QueryTrace } from '../query-history/query-trace';

export const chatStream = (id: string) => streamId('chat', id);
export const CHAT_FOLD: Fold<ChatState, ChatEvent> = chatFold;

/** One turn asked of a chat: `chatId` absent starts a chat (`POST /v2/chats`). */
export interface ChatTurnRequest {
  readonly chatId?: string;
  /** The request as the reference's `QueryRequest` (what the query history keeps). */
  readonly request: Readonly<Record<string, unknown>>;
  readonly retrieval: QueryCorpora;
  readonly generation: GenerationParams;
  /** `save_history`, else `chat.store`: whether the turn is kept (and recorded in the query history). */
  readonly store: boolean;
  readonly readable: CorpusReadable;
  readonly ctx: CommandContext;
  readonly signal?: AbortSignal;
}

/** The reference's `ChatStreamedResponse` events: the query's, plus `chat_info` after `search_results`. */
export type ChatStreamEvent = QueryStreamEvent | { readonly type: 'chat_info'; readonly chat_id: string; readonly turn_id: string };

interface PreparedTurn {
  readonly chatId: string;
  readonly turnId: string;
  readonly history: readonly ChatExchange[];
  readonly trace?: QueryTrace;
}

/**
 * A chat turn is a query with generation whose prompt holds the chat's earlier enabled turns (docs/chats.md).
 * The turn is appended to `chat-<id>` once the answer is whole (for a stream, before `end`), and its query is
 * recorded in the query history with the chat's id; a request with `save_history: false` keeps neither.
 */
@Injectable()
export class ChatTurns {
  constructor(
    private readonly queries: QueryBus,
    private readonly streams: StreamWriter,
    private readonly history: QueryHistory,
  ) {}

  private async prepare(r: ChatTurnRequest): Promise<PreparedTurn> {
    let history: ChatExchange[] = [];
    if (r.chatId !== undefined) {
      const state = await this.streams.state(chatStream(r.chatId), CHAT_FOLD);
      if (state.status !== 'active' || !state.corpusKeys.every(r.readable)) throw chatNotFound(r.chatId);
      history = chatContext(state);
    }
    const random = () => this.history.newQueryId().slice('qry_'.length);
    return { chatId: r.chatId ?? `cht_${random()}`, turnId: `trn_${random()}`, history, trace: r.store ? this.history.newTrace(r.ctx.now) : undefined };
  }

  private async keep(r: ChatTurnRequest, turn: PreparedTurn, answer: string): Promise<void> {
    if (!turn.trace) return;
    const corpusKeys = r.retrieval.corpora.map((c) => c.corpusKey);
    const added = { chatId: turn.chatId, turnId: turn.turnId, query: r.retrieval.query, answer, corpusKeys, queryId: turn.trace.queryId };
    await this.streams.write(chatStream(turn.chatId), CHAT_FOLD, (s) => decideAddTurn(s, added, r.ctx.now), r.ctx, ['chats']);
    await this.history.record(turn.trace, { request: r.request, corpusKeys, chatId: turn.chatId, turnId: turn.turnId }, r.ctx);
  }

  /** The reference's `ChatFullResponse`; `chat_id` and `turn_id` only when the turn was kept. */
  async answer(r: ChatTurnRequest): Promise<Record<string, unknown>> {
    const turn = await this.prepare(r);
    const a: QueryAnswer = await this.queries.execute(new AnswerQuery(r.retrieval, r.generation, r.ctx, r.signal, { trace: turn.trace, chatHistory: turn.history }));
    await this.keep(r, turn, a.summary ?? '');
    return {
      ...(turn.trace ? { chat_id: turn.chatId, turn_id: turn.turnId } : {}),
      answer: a.summary,
      response_language: a.response_language,
      search_results: a.search_results,
      ...(a.factual_consistency_score !== undefined ? { factual_consistency_score: a.factual_consistency_score } : {}),
      ...(a.rendered_prompt !== undefined ? { rendered_prompt: a.rendered_prompt } : {}),
      ...(a.warnings ? { warnings: a.warnings } : {}),
    };
  }

  /** Resolves once everything that can fail as a plain HTTP error has run (as a streamed query does). */
  async stream(r: ChatTurnRequest): Promise<AsyncIterable<ChatStreamEvent>> {
    const turn = await this.prepare(r);
    const events: AsyncIterable<QueryStreamEvent> = await this.queries.execute(new StreamQueryAnswer(r.retrieval, r.generation, r.ctx, r.signal, { trace: turn.trace, chatHistory: turn.history }));
    return this.withChatInfo(r, turn, events);
  }

  private async *withChatInfo(r: ChatTurnRequest, turn: PreparedTurn, events: AsyncIterable<QueryStreamEvent>): AsyncGenerator<ChatStreamEvent> {
    let answer = '';
    for await (const event of events) {
      if (event.type === 'generation_chunk') answer += event.generation_chunk;
      if (event.type === 'end') await this.keep(r, turn, answer);
      yield event;
      if (event.type === 'search_results' && turn.trace) yield { type: 'chat_info', chat_id: turn.chatId, turn_id: turn.turnId };
    }
  }
}
