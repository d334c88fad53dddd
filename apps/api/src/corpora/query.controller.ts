import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { AnswerQuery, QueryAnswer, QueryCorpora, QueryHistory, QueryResponse, QueryStreamEvent, StreamQueryAnswer } from '@lib/retrieval';
import { CallerAborted } from '@lib/llms';
import { CommandContext, invalid } from '@lib/platform';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { sendJson } from '../http/send-json';
import { generationParams } from './generation-input';
import { pageLimit, pageOffset } from '../http/paging';
import { MAX_QUERY_LENGTH, QUERY_DEFAULTS, QueryCorpusRequestDto, QueryRequestDto } from './query.dto';
import { multiCorpusRetrieval, refuseUnsupported, rewriting, searchOptions } from './query-input';
import { writeQueryStream } from './query-stream';
import { withReferenceWarnings } from './query-warnings';
import { OpenApi } from '../openapi/openapi.decorator';

/** Per-corpus search fields of the single-corpus form, moved into `search.corpora[0]` for the query history. */
const CORPUS_FIELDS = ['metadata_filter', 'lexical_interpolation', 'semantics', 'custom_dimensions'] as const;

@Controller('v2')
export class QueryController {
  constructor(
    private readonly queries: QueryBus,
    private readonly history: QueryHistory,
  ) {}

  @OpenApi({ body: QueryRequestDto, stream: true, status: 200 })
  @Post('query')
  @Policy('query.corpora')
  async query(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res() res: Response): Promise<void> {
    const dto = validateBody(QueryRequestDto, body);
    await this.answer(dto, body as Record<string, unknown>, multiCorpusRetrieval(dto, ctx), ctx, res);
  }

  @OpenApi({ body: QueryCorpusRequestDto, stream: true, status: 200 })
  @Post('corpora/:corpus_key/query')
  @Policy('corpus.read')
  async queryCorpus(@Param('corpus_key') corpusKey: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res() res: Response): Promise<void> {
    const dto = validateBody(QueryCorpusRequestDto, body);
    const search = dto.search ?? {};
    refuseUnsupported([search], '');
    const corpora = [{ corpusKey, lexicalInterpolation: search.lexical_interpolation ?? QUERY_DEFAULTS.lexicalInterpolation, metadataFilter: search.metadata_filter, filterField: 'search.metadata_filter' }];
    // The history keeps the reference's QueryRequest: the corpus and its fields go into search.corpora.
    const sent = (body as { search?: Record<string, unknown> }).search ?? {};
    const corpus: Record<string, unknown> = { corpus_key: corpusKey };
    const rest: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(sent)) ((CORPUS_FIELDS as readonly string[]).includes(k) ? corpus : rest)[k] = v;
    const request = { ...(body as Record<string, unknown>), search: { ...rest, corpora: [corpus] } };
    await this.answer(dto, request, new QueryCorpora(dto.query, corpora, { ...searchOptions(search), ...rewriting(dto, ctx) }, ctx.now), ctx, res);
  }

  /**
   * Retrieval alone, retrieval with generation, or either streamed (docs/generation.md). Anything that fails
   * before a stream starts (validation, an unknown corpus, no model, the model refusing the call) is a plain
   * JSON error. A caller that disconnects cancels the model call. A saved query (`save_history`, or a corpus
   * that saves its queries) is recorded once answered (docs/chats.md).
   */
  private async answer(dto: Pick<QueryRequestDto, 'generation' | 'stream_response' | 'save_history'>, request: Record<string, unknown>, retrieval: QueryCorpora, ctx: CommandContext, res: Response): Promise<void> {
    const generation = generationParams(dto.generation);
    const corpusKeys = retrieval.corpora.map((c) => c.corpusKey);
    const trace = await this.history.traceFor(dto.save_history, corpusKeys, ctx.now);
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    try {
      if (dto.stream_response) {
        const events: AsyncIterable<QueryStreamEvent> = await this.queries.execute(new StreamQueryAnswer(retrieval, generation, ctx, abort.signal, { trace }));
        await writeQueryStream(res, trace ? this.history.recordAfter(events, trace, { request, corpusKeys }, ctx) : events, ctx.requestId);
        return;
      }
      const body: QueryAnswer | QueryResponse = await this.queries.execute(new AnswerQuery(retrieval, generation, ctx, abort.signal, { trace }));
      if (trace) await this.history.record(trace, { request, corpusKeys }, ctx);
      sendJson(res, 200, withReferenceWarnings(body, res));
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
