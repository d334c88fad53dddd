import { Controller, Get, Param, Query } from '@nestjs/common';
import type { Principal } from '@lib/auth';
import { QueryHistory } from '@lib/retrieval';
import { Caller } from '../http/caller';
import { Policy } from '../http/policy';
import { pageLimit } from '../http/paging';
import { readableBy } from './chats.controller';

/** The query history (`save_history`): docs/chats.md. Histories on corpora the caller may not read are hidden. */
@Controller('v2/queries')
export class QueryHistoryController {
  constructor(private readonly history: QueryHistory) {}

  @Get()
  @Policy('query_history.read')
  list(
    @Caller() caller: Principal,
    @Query('corpus_key') corpusKey?: string,
    @Query('started_after') startedAfter?: string,
    @Query('started_before') startedBefore?: string,
    @Query('chat_id') chatId?: string,
    @Query('history_id') historyId?: string,
    @Query('limit') limit?: string,
    @Query('page_key') pageKey?: string,
  ) {
    return this.history.list({ corpusKey, startedAfter, startedBefore, chatId, historyId, limit: pageLimit(limit, 10, 100), pageKey }, readableBy(caller));
  }

  @Get(':query_id')
  @Policy('query_history.read')
  get(@Param('query_id') id: string, @Caller() caller: Principal) {
    return this.history.get(id, readableBy(caller));
  }
}
