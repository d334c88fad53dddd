import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { AnswerQueryHandler } from './application/answer-query/answer-query';
import { StreamQueryAnswerHandler } from './application/answer-query/stream-query-answer';
import { ListGenerationPresetsHandler } from './application/list-presets/list-presets';
import { GenerationModels } from './application/model/generation-models';
import { ModelRerankers } from './application/query/model-rerankers';
import { CustomerPresets } from './application/presets/customer-presets';
import { QueryCorporaHandler } from './application/query/query-corpora';
import { QueryHistory } from './application/query-history/query-history';
import { ChatTurns } from './application/chat/chat-turns';
import { Chats } from './application/chat/chats';
import { QueryRewriter } from './application/query/query-rewriting';
import { StreamSummarizeDocumentHandler, SummarizeDocumentHandler } from './application/summarize-document/summarize-document';
import { SummarizeTablesHandler } from './application/summarize-document/table-summaries';

export interface RetrievalModuleOptions {
  /** The module that provides `ChatCompletions` and `FactualConsistency`: the app's one `LlmsModule.forRoot(…)`. */
  readonly llms: DynamicModule;
}

/**
 * Retrieval: search over corpora (hybrid scoring, rerankers, context windows: `QueryCorpora`) and generation over
 * its results (RAG answers, citations, presets). Used by the query routes, and by agents' retrieval tools.
 */
@Module({})
export class RetrievalModule {
  static forRoot(options: RetrievalModuleOptions): DynamicModule {
    return {
      module: RetrievalModule,
      imports: [CqrsModule, options.llms],
      providers: [QueryCorporaHandler, QueryRewriter, ModelRerankers, GenerationModels, CustomerPresets, AnswerQueryHandler, StreamQueryAnswerHandler, ListGenerationPresetsHandler, SummarizeDocumentHandler, StreamSummarizeDocumentHandler, SummarizeTablesHandler, QueryHistory, ChatTurns, Chats],
      exports: [CustomerPresets, ModelRerankers, QueryHistory, ChatTurns, Chats],
    };
  }
}
