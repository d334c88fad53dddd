import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { AnswerQueryHandler } from './application/answer-query/answer-query';
import { StreamQueryAnswerHandler } from './application/answer-query/stream-query-answer';
import { ListGenerationPresetsHandler } from './application/list-presets/list-presets';
import { GenerationModels } from './application/model/generation-models';

export interface GenerationModuleOptions {
  /** The module that provides `ChatCompletions` and `FactualConsistency`: the app's one `LlmsModule.forRoot(…)`. */
  readonly llms: DynamicModule;
}

/** Generation for queries (RAG answers, citations, presets). Retrieval is `QueryCorpora` over the query bus. */
@Module({})
export class GenerationModule {
  static forRoot(options: GenerationModuleOptions): DynamicModule {
    return {
      module: GenerationModule,
      imports: [CqrsModule, options.llms],
      providers: [GenerationModels, AnswerQueryHandler, StreamQueryAnswerHandler, ListGenerationPresetsHandler],
    };
  }
}
