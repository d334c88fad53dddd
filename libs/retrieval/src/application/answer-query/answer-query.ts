import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { QueryCorpora, QueryResponse } from '../query/query-corpora';
import { ChatCompletions, FactualConsistency } from '@lib/llms';
import type { CommandContext } from '@lib/platform';
import { rewriteCitations } from '../../domain/citations';
import type { GenerationParams } from '../../domain/generation-params';
import { GenerationModels } from '../model/generation-models';
import { CustomerPresets } from '../presets/customer-presets';
import { chatRequest, planGeneration, prepareGeneration, scoreAnswer } from './generation-plan';
import { NO_RESULTS_SUMMARY, QueryAnswer } from './query-answer';

/** A query with generation, answered whole (`stream_response` false). */
export class AnswerQuery {
  constructor(
    readonly retrieval: QueryCorpora,
    readonly generation: GenerationParams,
    readonly ctx: CommandContext,
    /** Aborted when the caller goes away: the model call is cancelled. */
    readonly signal?: AbortSignal,
  ) {}
}

/**
 * Retrieval through `QueryCorpora` (after reranking and `max_by`), asked for at least as many results as the
 * generation uses, so that every used result is also a returned one and `[N]` is `search_results[N-1]`.
 */
export function retrieve(queries: QueryBus, q: QueryCorpora, maxUsed: number): Promise<QueryResponse> {
  const limit = Math.max(q.options.limit, maxUsed);
  return queries.execute<QueryCorpora, QueryResponse>(limit === q.options.limit ? q : new QueryCorpora(q.query, q.corpora, { ...q.options, limit }, q.now));
}

@QueryHandler(AnswerQuery)
export class AnswerQueryHandler implements IQueryHandler<AnswerQuery, QueryAnswer> {
  constructor(
    private readonly queries: QueryBus,
    private readonly models: GenerationModels,
    private readonly presets: CustomerPresets,
    private readonly chat: ChatCompletions,
    private readonly fcs: FactualConsistency,
  ) {}

  async execute(q: AnswerQuery): Promise<QueryAnswer> {
    const plan = await planGeneration(q.generation, this.models, this.presets);
    const retrieved = await retrieve(this.queries, q.retrieval, plan.maxUsedSearchResults);
    const { used, language, prompt } = prepareGeneration(plan, q.retrieval.query, retrieved.search_results);
    const warnings = [...(retrieved.warnings ?? [])];
    let summary = NO_RESULTS_SUMMARY;
    let score: number | undefined;
    if (prompt) {
      const completion = await this.chat.complete(chatRequest(plan, prompt), q.ctx, q.signal);
      const answer = completion.choices[0]?.message?.content ?? '';
      summary = rewriteCitations(answer, plan.citations, used);
      if (plan.factualConsistency) {
        const scored = await scoreAnswer(this.fcs, answer, used, q.ctx);
        score = scored.score;
        if (scored.warning) warnings.push(scored.warning);
      }
    }
    return {
      summary,
      response_language: language.code,
      search_results: retrieved.search_results,
      ...(score !== undefined ? { factual_consistency_score: score } : {}),
      ...(prompt ? { rendered_prompt: prompt.text } : {}),
      ...(warnings.length ? { warnings } : {}),
      ...(retrieved.rewritten_queries ? { rewritten_queries: retrieved.rewritten_queries } : {}),
    };
  }
}
