import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { QueryCorpora, QueryResponse } from '../query/query-corpora';
import { ChatCompletions, FactualConsistency } from '@lib/llms';
import type { CommandContext } from '@lib/platform';
import { CitationRewriter } from '../../domain/citations';
import type { GenerationParams } from '../../domain/generation-params';
import { GenerationModels } from '../model/generation-models';
import { CustomerPresets } from '../presets/customer-presets';
import { AnswerExtras, retrieve } from './answer-query';
import type { QueryTrace } from '../query-history/query-trace';
import { chatRequest, GenerationPlan, planGeneration, PreparedGeneration, prepareGeneration, scoreAnswer } from './generation-plan';
import { NO_RESULTS_SUMMARY, QueryStreamEvent } from './query-answer';

type ModelChunks = Awaited<ReturnType<ChatCompletions['stream']>>;

/** A query answered as a stream of the reference's events (`stream_response` true), with or without generation. */
export class StreamQueryAnswer {
  constructor(
    readonly retrieval: QueryCorpora,
    readonly generation: GenerationParams | undefined,
    readonly ctx: CommandContext,
    readonly signal?: AbortSignal,
    readonly extras: AnswerExtras = {},
  ) {}
}

/**
 * Resolves once everything that can fail as a plain HTTP error has run: validation, retrieval, rendering the
 * prompt, and the model accepting the call (quota, credentials, reachability). The events then follow:
 * `search_results`, `generation_chunk`*, `generation_info`, `generation_end`, `factual_consistency_score`,
 * `end`. A failure while iterating is the caller's to send as an `error` event. A consumer that stops
 * iterating (a disconnected client) ends the model call.
 */
@QueryHandler(StreamQueryAnswer)
export class StreamQueryAnswerHandler implements IQueryHandler<StreamQueryAnswer, AsyncIterable<QueryStreamEvent>> {
  constructor(
    private readonly queries: QueryBus,
    private readonly models: GenerationModels,
    private readonly presets: CustomerPresets,
    private readonly chat: ChatCompletions,
    private readonly fcs: FactualConsistency,
  ) {}

  async execute(q: StreamQueryAnswer): Promise<AsyncIterable<QueryStreamEvent>> {
    const { trace, chatHistory } = q.extras;
    if (!q.generation) {
      const retrieved = await retrieve(this.queries, q.retrieval, 0, trace);
      return searchOnly(retrieved);
    }
    const plan = await planGeneration(q.generation, this.models, this.presets);
    const retrieved = await retrieve(this.queries, q.retrieval, plan.maxUsedSearchResults, trace);
    const prepared = prepareGeneration(plan, q.retrieval.query, retrieved.search_results, chatHistory);
    const endGeneration = prepared.prompt ? trace?.begin('generation') : undefined;
    const chunks = prepared.prompt ? await this.chat.stream(chatRequest(plan, prepared.prompt), q.ctx, q.signal) : undefined;
    return this.events(plan, q.retrieval.query, retrieved, prepared, chunks, q.ctx, trace, endGeneration);
  }

  private async *events(
    plan: GenerationPlan,
    query: string,
    retrieved: QueryResponse,
    prepared: PreparedGeneration,
    chunks: ModelChunks | undefined,
    ctx: CommandContext,
    trace?: QueryTrace,
    endGeneration?: () => void,
  ): AsyncGenerator<QueryStreamEvent> {
    yield searchResults(retrieved);
    const warnings = [...(retrieved.warnings ?? [])];
    if (!chunks || !prepared.prompt) {
      if (trace) trace.answer = NO_RESULTS_SUMMARY;
      yield { type: 'generation_chunk', generation_chunk: NO_RESULTS_SUMMARY };
      yield { type: 'generation_end' };
      yield end(warnings);
      return;
    }
    const rewriter = new CitationRewriter(plan.citations, prepared.used);
    let answer = '';
    let sent = '';
    for await (const chunk of chunks) {
      const piece = chunk.choices.map((c) => c.delta?.content ?? '').join('');
      answer += piece;
      const text = rewriter.push(piece);
      sent += text;
      if (text) yield { type: 'generation_chunk', generation_chunk: text };
    }
    const rest = rewriter.end();
    sent += rest;
    if (rest) yield { type: 'generation_chunk', generation_chunk: rest };
    endGeneration?.();
    if (trace) Object.assign(trace, { answer: sent, prompt: prepared.prompt.text });
    // The query the search ran: the first corpus's rewritten query when rewriting ran, else the one sent.
    yield { type: 'generation_info', rendered_prompt: prepared.prompt.text, rephrased_query: retrieved.rewritten_queries?.[0]?.filter_extraction.query ?? query };
    yield { type: 'generation_end' };
    if (plan.factualConsistency) {
      const endFcs = trace?.begin('fcs');
      const scored = await scoreAnswer(this.fcs, answer, prepared.used, ctx);
      endFcs?.();
      if (trace) trace.score = scored.score;
      if (scored.score !== undefined) yield { type: 'factual_consistency_score', factual_consistency_score: scored.score };
      if (scored.warning) warnings.push(scored.warning);
    }
    yield end(warnings);
  }
}

const searchResults = (retrieved: QueryResponse): QueryStreamEvent => ({
  type: 'search_results',
  search_results: retrieved.search_results,
  ...(retrieved.rewritten_queries ? { rewritten_queries: retrieved.rewritten_queries } : {}),
});

async function* searchOnly(retrieved: QueryResponse): AsyncGenerator<QueryStreamEvent> {
  yield searchResults(retrieved);
  yield end(retrieved.warnings ?? []);
}

const end = (warnings: readonly string[]): QueryStreamEvent => ({ type: 'end', ...(warnings.length ? { warnings } : {}) });
