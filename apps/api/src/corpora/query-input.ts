import { ContextWindow, CorpusSearch, QueryCorpora, QueryOptions, RerankerSpec } from '@lib/retrieval';
import { CommandContext, invalid } from '@lib/platform';
import { ContextConfigurationDto, CorpusSearchFieldsDto, MAX_RERANKER_STAGES, QUERY_DEFAULTS, QueryRequestDto, RerankerDto } from './query.dto';

/** Query features not built (custom dimensions, semantics) are refused with a 400 naming the field, never silently ignored. */
export function refuseUnsupported(corpora: readonly CorpusSearchFieldsDto[], prefix: string): void {
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

export const searchOptions = (search: { limit?: number; offset?: number; max_by?: 'doc.id'; reranker?: RerankerDto; context_configuration?: ContextConfigurationDto }): QueryOptions => ({
  limit: search.limit ?? QUERY_DEFAULTS.limit,
  offset: search.offset ?? QUERY_DEFAULTS.offset,
  maxBy: search.max_by,
  reranker: rerankerSpec(search.reranker),
  context: contextWindow(search.context_configuration),
});

/** `intelligent_query_rewriting`: by the generation's model when the request names one, else the default model (docs/search.md). */
export const rewriting = (dto: Pick<QueryRequestDto, 'intelligent_query_rewriting' | 'generation'>, ctx: CommandContext): Pick<QueryOptions, 'rewrite'> =>
  dto.intelligent_query_rewriting ? { rewrite: { llmName: dto.generation?.model_parameters?.llm_name, ctx } } : {};

/** The multi-corpus request's retrieval (`/v2/query`, `/v2/chats`): unsupported options are 400s naming the field. */
export function multiCorpusRetrieval(dto: QueryRequestDto, ctx: CommandContext): QueryCorpora {
  refuseUnsupported(dto.search.corpora, 'search.corpora');
  const overridden = dto.search.corpora.findIndex((c) => c.query !== undefined && c.query !== dto.query);
  if (overridden >= 0) throw invalid('query.unsupported', 'per-corpus query text is not supported yet', { [`search.corpora[${overridden}].query`]: 'not supported yet' });
  const corpora: CorpusSearch[] = dto.search.corpora.map((c, i) => ({
    corpusKey: c.corpus_key,
    lexicalInterpolation: c.lexical_interpolation ?? dto.search.lexical_interpolation ?? QUERY_DEFAULTS.lexicalInterpolation,
    metadataFilter: c.metadata_filter,
    filterField: `search.corpora[${i}].metadata_filter`,
  }));
  return new QueryCorpora(dto.query, corpora, { ...searchOptions(dto.search), ...rewriting(dto, ctx) }, ctx.now);
}
