import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { QueryCorpora, QueryResponse } from '../query/query-corpora';
import { ChatCompletions, FactualConsistency } from '@lib/llms';
import type { CommandContext } from '@lib/platform';
import { rewriteCitations } from '../../domain/citations';
import type { ChatExchange } from '../../domain/chat';
import type { GenerationParams } from '../../domain/generation-params';
import { GenerationModels } from '../model/generation-models';
import { CustomerPresets } from '../presets/customer-presets';
import type { QueryTrace } from '../query-history/query-trace';
import { chatRequest, planGeneration, prepareGeneration, scoreAnswer } from './generation-plan';
import { NO_RESULTS_SUMMARY, QueryAnswer } from './query-answer';

/** What a query may add to the pipeline: a trace to record it (`save_history`), a chat's earlier turns. */
export interface AnswerExtras {
  readonly trace?: QueryTrace;
  readonly chatHistory?: readonly ChatExchange[];
}

/** A query answered whole (`stream_response` false): retrieval, and generation when asked for. */
export class AnswerQuery {
  constructor(
    readonly retrieval: QueryCorpora,
    readonly generation: GenerationParams | undefined,
    readonly ctx: CommandContext,
    /** Aborted when the caller goes away: the model call is cancelled. */
    readonly signal?: AbortSignal,
    readonly extras: AnswerExtras = {},
  ) {}
}

/**
 * Retrieval through `QueryCorpora` (after reranking and `max_by`), asked for at least as many results as the
 * generation uses, so that every used result is also a returned one and `[N]` is `search_results[N-1]`. A
 * traced query also asks for the parts' positions, keeps them in the trace, and returns the results without them.
 */
export async function retrieve(queries: QueryBus, q: QueryCorpora, maxUsed: number, trace?: QueryTrace): Promise<QueryResponse> {
  const limit = Math.max(q.options.limit, maxUsed);
  if (!trace) return queries.execute<QueryCorpora, QueryResponse>(limit === q.options.limit ? q : new QueryCorpora(q.query, q.corpora, { ...q.options, limit }, q.now));
  const end = trace.begin('search');
  const found = await queries.execute<QueryCorpora, QueryResponse>(new QueryCorpora(q.query, q.corpora, { ...q.options, limit, withPartIndex: true }, q.now));
  end();
  trace.keepResults(found.search_results);
  return { ...found, search_results: found.search_results.map(({ part_index: _, ...r }) => r) };
}

@QueryHandler(AnswerQuery)
export class AnswerQueryHandler implements IQueryHandler<AnswerQuery, QueryAnswer | QueryResponse> {
  constructor(
    private readonly queries: QueryBus,
    private readonly models: GenerationModels,
    private readonly presets: CustomerPresets,
    private readonly chat: ChatCompletions,
    private readonly fcs: FactualConsistency,
  ) {}

  async execute(q: AnswerQuery): Promise<QueryAnswer | QueryResponse> {
    const { trace, chatHistory } = q.extras;
    if (!q.generation) return retrieve(this.queries, q.retrieval, 0, trace);
    const plan = await planGeneration(q.generation, this.models, this.presets);
    const retrieved = await retrieve(this.queries, q.retrieval, plan.maxUsedSearchResults, trace);
    const { used, language, prompt } = prepareGeneration(plan, q.retrieval.query, retrieved.search_results, chatHistory);
    const warnings = [...(retrieved.warnings ?? [])];
    let summary = NO_RESULTS_SUMMARY;
    let score: number | undefined;
    if (prompt) {
      const endGeneration = trace?.begin('generation');
      const completion = await this.chat.complete(chatRequest(plan, prompt), q.ctx, q.signal);
      endGeneration?.();
      const answer = completion.choices[0]?.message?.content ?? '';
      summary = rewriteCitations(answer, plan.citations, used);
      if (plan.factualConsistency) {
        const endFcs = trace?.begin('fcs');
        const scored = await scoreAnswer(this.fcs, answer, used, q.ctx);
        endFcs?.();
        score = scored.score;
        if (scored.warning) warnings.push(scored.warning);
      }
    }
    if (trace) Object.assign(trace, { answer: summary, score, prompt: prompt?.text });
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
