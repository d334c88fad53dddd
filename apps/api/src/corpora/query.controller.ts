import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CorpusSearch, QueryCorpora, QueryResponse } from '@lib/corpora';
import { invalid } from '@lib/platform';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { pageLimit, pageOffset } from './paging';
import { CorpusSearchFieldsDto, MAX_QUERY_LENGTH, QueryCorpusRequestDto, QueryRequestDto } from './query.dto';

type Options = Pick<QueryRequestDto, 'generation' | 'stream_response' | 'intelligent_query_rewriting'> & {
  search?: Partial<Pick<QueryRequestDto['search'], 'context_configuration' | 'reranker'>>;
};

/**
 * Query features that later work adds (filters, encoders, rerankers, context windows, generation) are refused
 * with a 400 naming the field, never silently ignored.
 */
function refuseUnsupported(body: Options, corpora: readonly CorpusSearchFieldsDto[], prefix: string): void {
  const errors: Record<string, string> = {};
  corpora.forEach((c, i) => {
    const at = prefix ? `${prefix}[${i}].` : 'search.';
    if (c.custom_dimensions && Object.keys(c.custom_dimensions).length) errors[`${at}custom_dimensions`] = 'custom dimensions are not supported';
    if (c.semantics && c.semantics !== 'default') errors[`${at}semantics`] = 'only "default" semantics are supported';
  });
  const cc = body.search?.context_configuration;
  if (cc && (cc.characters_before || cc.characters_after || cc.sentences_before || cc.sentences_after || cc.full_document_context || cc.start_tag || cc.end_tag)) {
    errors['search.context_configuration'] = 'context windows are not supported yet';
  }
  const rr = body.search?.reranker;
  if (rr && rr.type !== 'none') errors['search.reranker'] = `reranker "${rr.type}" is not supported yet; use "none"`;
  if (body.generation && body.generation.enabled !== false) errors.generation = 'generation needs a registered language model, which is not supported yet';
  if (body.stream_response) errors.stream_response = 'streaming needs generation, which is not supported yet';
  if (body.intelligent_query_rewriting) errors.intelligent_query_rewriting = 'query rewriting is not supported';
  if (Object.keys(errors).length) throw invalid('query.unsupported', Object.values(errors)[0], errors);
}

@Controller('v2')
export class QueryController {
  constructor(private readonly queries: QueryBus) {}

  @Post('query')
  @Policy('query.corpora')
  @HttpCode(200)
  async query(@Body() body: unknown): Promise<QueryResponse> {
    const dto = validateBody(QueryRequestDto, body);
    refuseUnsupported(dto, dto.search.corpora, 'search.corpora');
    const overridden = dto.search.corpora.findIndex((c) => c.query !== undefined && c.query !== dto.query);
    if (overridden >= 0) throw invalid('query.unsupported', 'per-corpus query text is not supported yet', { [`search.corpora[${overridden}].query`]: 'not supported yet' });
    const corpora: CorpusSearch[] = dto.search.corpora.map((c, i) => ({
      corpusKey: c.corpus_key,
      lexicalInterpolation: c.lexical_interpolation ?? dto.search.lexical_interpolation ?? 0.005,
      metadataFilter: c.metadata_filter,
      filterField: `search.corpora[${i}].metadata_filter`,
    }));
    return this.queries.execute(new QueryCorpora(dto.query, corpora, dto.search.limit ?? 10, dto.search.offset ?? 0, dto.search.max_by));
  }

  @Post('corpora/:corpus_key/query')
  @Policy('corpus.read')
  @HttpCode(200)
  async queryCorpus(@Param('corpus_key') corpusKey: string, @Body() body: unknown): Promise<QueryResponse> {
    const dto = validateBody(QueryCorpusRequestDto, body);
    const search = dto.search ?? {};
    refuseUnsupported(dto, [search], '');
    const corpora = [{ corpusKey, lexicalInterpolation: search.lexical_interpolation ?? 0.005, metadataFilter: search.metadata_filter, filterField: 'search.metadata_filter' }];
    return this.queries.execute(new QueryCorpora(dto.query, corpora, search.limit ?? 10, search.offset ?? 0, search.max_by));
  }

  @Get('corpora/:corpus_key/query')
  @Policy('corpus.read')
  async searchCorpus(
    @Param('corpus_key') corpusKey: string,
    @Query('query') query?: string,
    @Query('limit') limit?: string,
    @Query('offset') offset?: string,
    @Query('metadata_filter') metadataFilter?: string,
  ): Promise<QueryResponse> {
    if (!query) throw invalid('request.invalid', 'query is required', { query: 'is required' });
    if (query.length > MAX_QUERY_LENGTH) throw invalid('request.invalid', `query must be at most ${MAX_QUERY_LENGTH} characters`, { query: `must be at most ${MAX_QUERY_LENGTH} characters` });
    // metadata_filter is ours (the reference GET has none): a filter a caller sends is applied, never ignored.
    const corpora = [{ corpusKey, lexicalInterpolation: 0.005, metadataFilter, filterField: 'metadata_filter' }];
    return this.queries.execute(new QueryCorpora(query, corpora, pageLimit(limit, 10, 1000), pageOffset(offset)));
  }
}
