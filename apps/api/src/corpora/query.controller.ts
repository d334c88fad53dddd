import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { AnswerQuery, ContextWindow, CorpusSearch, QueryAnswer, QueryCorpora, QueryOptions, QueryResponse, QueryStreamEvent, RerankerSpec, StreamQueryAnswer } from '@lib/retrieval';
import { CallerAborted } from '@lib/llms';
import { CommandContext, invalid } from '@lib/platform';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { generationParams } from './generation-input';
import { pageLimit, pageOffset } from './paging';
import { ContextConfigurationDto, CorpusSearchFieldsDto, MAX_QUERY_LENGTH, MAX_RERANKER_STAGES, QUERY_DEFAULTS, QueryCorpusRequestDto, QueryRequestDto, RerankerDto } from './query.dto';
import { writeQueryStream } from './query-stream';
import { withReferenceWarnings } from './query-warnings';

/** Query features not built (custom dimensions, semantics) are refused with a 400 naming the field, never silently ignored. */
function refuseUnsupported(corpora: readonly CorpusSearchFieldsDto[], prefix: string): void {
  const errors: Record<string, string> = {};
  corpora.forEach((c, i) => {
    const at = prefix ? `${prefix}[${i}].` : 'search.';
    if (c.custom_dimensions && Object.keys(c.custom_dimensions).length) errors[`${at}custom_dimensions`] = 'custom dimensions are not supported';
    if (c.semantics && c.semantics !== 'default') errors[`${at}semantics`] = 'only "default" semantics are supported';
  });
  if (Object.keys(errors).length) throw invalid('query.unsupported', Object.values(errors)[0], errors);
}

/** The request's reranker as the query side takes it; a chain of more than 50 stages in all is a 400. */
function rerankerSpec(dto: RerankerDto | undefined): RerankerSpec | undefined {
  if (!dto) return undefined;
  let stages = 0;
  const map = (r: RerankerDto): RerankerSpec => {
    if (++stages > MAX_RERANKER_STAGES) throw invalid('request.invalid', `A reranker chain may hold at most ${MAX_RERANKER_STAGES} stages`, { 'search.reranker': `more than ${MAX_RERANKER_STAGES} stages` });
    const cut = { ...(r.limit !== undefined ? { limit: r.limit } : {}), ...(r.cutoff !== undefined ? { cutoff: r.cutoff } : {}) };
    switch (r.type) {
      case 'none':
        return { type: 'none', ...(r.limit !== undefined ? { limit: r.limit } : {}) };
      case 'mmr':
        return { type: 'mmr', diversityBias: r.diversity_bias!, ...cut };
      case 'userfn':
        return { type: 'userfn', userFunction: r.user_function!, ...cut };
      case 'customer_reranker':
        // `reranker_id` (GET /v2/rerankers) names the same reranker; an unknown id is a name no reranker has (400).
        if (r.instructions !== undefined && r.instructions !== '') throw invalid('query.unsupported', 'Invalid search.reranker.instructions: the configured rerank endpoint takes no instructions', { 'search.reranker.instructions': 'not supported by the configured reranker' });
        return { type: 'customer_reranker', rerankerName: r.reranker_name ?? `id:${r.reranker_id}`, ...(r.include_context !== undefined ? { includeContext: r.include_context } : {}), ...cut };
      case 'chain':
        return { type: 'chain', rerankers: r.rerankers!.map(map) };
    }
  };
  return map(dto);
}

function contextWindow(dto: ContextConfigurationDto | undefined): ContextWindow | undefined {
  if (!dto) return undefined;
  return {
    sentencesBefore: dto.sentences_before,
    sentencesAfter: dto.sentences_after,
    charactersBefore: dto.characters_before,
    charactersAfter: dto.characters_after,
    startTag: dto.start_tag,
    endTag: dto.end_tag,
    fullDocument: dto.full_document_context,
  };
}

const searchOptions = (search: { limit?: number; offset?: number; max_by?: 'doc.id'; reranker?: RerankerDto; context_configuration?: ContextConfigurationDto }): QueryOptions => ({
  limit: search.limit ?? QUERY_DEFAULTS.limit,
  offset: search.offset ?? QUERY_DEFAULTS.offset,
  maxBy: search.max_by,
  reranker: rerankerSpec(search.reranker),
  context: contextWindow(search.context_configuration),
});

/** `intelligent_query_rewriting`: by the generation's model when the request names one, else the default model (docs/search.md). */
const rewriting = (dto: Pick<QueryRequestDto, 'intelligent_query_rewriting' | 'generation'>, ctx: CommandContext): Pick<QueryOptions, 'rewrite'> =>
  dto.intelligent_query_rewriting ? { rewrite: { llmName: dto.generation?.model_parameters?.llm_name, ctx } } : {};

@Controller('v2')
export class QueryController {
  constructor(private readonly queries: QueryBus) {}

  @Post('query')
  @Policy('query.corpora')
  async query(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res() res: Response): Promise<void> {
    const dto = validateBody(QueryRequestDto, body);
    refuseUnsupported(dto.search.corpora, 'search.corpora');
    const overridden = dto.search.corpora.findIndex((c) => c.query !== undefined && c.query !== dto.query);
    if (overridden >= 0) throw invalid('query.unsupported', 'per-corpus query text is not supported yet', { [`search.corpora[${overridden}].query`]: 'not supported yet' });
    const corpora: CorpusSearch[] = dto.search.corpora.map((c, i) => ({
      corpusKey: c.corpus_key,
      lexicalInterpolation: c.lexical_interpolation ?? dto.search.lexical_interpolation ?? QUERY_DEFAULTS.lexicalInterpolation,
      metadataFilter: c.metadata_filter,
      filterField: `search.corpora[${i}].metadata_filter`,
    }));
    await this.answer(dto, new QueryCorpora(dto.query, corpora, { ...searchOptions(dto.search), ...rewriting(dto, ctx) }, ctx.now), ctx, res);
  }

  @Post('corpora/:corpus_key/query')
  @Policy('corpus.read')
  async queryCorpus(@Param('corpus_key') corpusKey: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res() res: Response): Promise<void> {
    const dto = validateBody(QueryCorpusRequestDto, body);
    const search = dto.search ?? {};
    refuseUnsupported([search], '');
    const corpora = [{ corpusKey, lexicalInterpolation: search.lexical_interpolation ?? QUERY_DEFAULTS.lexicalInterpolation, metadataFilter: search.metadata_filter, filterField: 'search.metadata_filter' }];
    await this.answer(dto, new QueryCorpora(dto.query, corpora, { ...searchOptions(search), ...rewriting(dto, ctx) }, ctx.now), ctx, res);
  }

  /**
   * Retrieval alone, retrieval with generation, or either streamed (docs/generation.md). Anything that fails
   * before a stream starts (validation, an unknown corpus, no model, the model refusing the call) is a plain
   * JSON error. A caller that disconnects cancels the model call.
   */
  private async answer(dto: Pick<QueryRequestDto, 'generation' | 'stream_response'>, retrieval: QueryCorpora, ctx: CommandContext, res: Response): Promise<void> {
    const generation = generationParams(dto.generation);
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    try {
      if (dto.stream_response) {
        const events: AsyncIterable<QueryStreamEvent> = await this.queries.execute(new StreamQueryAnswer(retrieval, generation, ctx, abort.signal));
        await writeQueryStream(res, events, ctx.requestId);
        return;
      }
      const body: QueryAnswer | QueryResponse = generation ? await this.queries.execute(new AnswerQuery(retrieval, generation, ctx, abort.signal)) : await this.queries.execute(retrieval);
      res.status(200).json(withReferenceWarnings(body, res));
    } catch (e) {
      if (e instanceof CallerAborted || res.destroyed) return void res.end();
      throw e;
    }
  }

  @Get('corpora/:corpus_key/query')
  @Policy('corpus.read')
  async searchCorpus(
    @Ctx() ctx: CommandContext,
    @Param('corpus_key') corpusKey: string,
    @Query('query') query: string | undefined,
    @Query('limit') limit: string | undefined,
    @Query('offset') offset: string | undefined,
    @Query('metadata_filter') metadataFilter: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    if (!query) throw invalid('request.invalid', 'query is required', { query: 'is required' });
    if (query.length > MAX_QUERY_LENGTH) throw invalid('request.invalid', `query must be at most ${MAX_QUERY_LENGTH} characters`, { query: `must be at most ${MAX_QUERY_LENGTH} characters` });
    // metadata_filter is ours (the reference GET has none): a filter a caller sends is applied, never ignored.
    const corpora = [{ corpusKey, lexicalInterpolation: QUERY_DEFAULTS.lexicalInterpolation, metadataFilter, filterField: 'metadata_filter' }];
    const found: QueryResponse = await this.queries.execute(new QueryCorpora(query, corpora, { limit: pageLimit(limit, QUERY_DEFAULTS.limit, QUERY_DEFAULTS.maxLimit), offset: pageOffset(offset) }, ctx.now));
    return withReferenceWarnings(found, res);
  }
}
