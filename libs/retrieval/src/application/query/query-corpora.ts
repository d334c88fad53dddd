import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Encoder, ENCODER_REGISTRY, EncoderRegistry, NO_ENCODER } from '@lib/encoders';
import { FilterExpr, READ_STORE, ReadStore, SEARCH_INDEX, SearchHit, SearchIndex } from '@lib/platform';
import { ContextWindow, hasContext, withContext } from './context-window';
import { lexicalWeight } from './hybrid';
import { corpusCandidates, resultsOf } from './candidates';
import { ModelRerankers } from './model-rerankers';
import { rerank, RerankerSpec } from './rerankers';
import type { SearchResult } from './search-result';
import { resultAttachments, ResultAttachments } from './result-attachments';
import { QueryRewriter, RewriteRequest, RewrittenQuery } from './query-rewriting';
import { comparesResults } from './rerankers';

export type { ResultFields, SearchResult } from './search-result';
import { compileFilter, CORPORA, corpusNotFound, CorpusRow } from '@lib/corpora';

export interface CorpusSearch {
  readonly corpusKey: string;
  /** 0 = purely semantic, 1 = purely lexical. */
  readonly lexicalInterpolation: number;
  /** Filter text as sent; checked against the corpus's filter attributes. */
  readonly metadataFilter?: string;
  /** Where the filter came from, for the 400's field name (`search.corpora[0].metadata_filter`). */
  readonly filterField?: string;
}

export interface QueryOptions {
  readonly limit: number;
  readonly offset: number;
  readonly maxBy?: 'doc.id';
  readonly reranker?: RerankerSpec;
  readonly context?: ContextWindow;
  /** `intelligent_query_rewriting`: per corpus, a model rephrases the query and extracts a filter (query-rewriting.ts). */
  readonly rewrite?: RewriteRequest;
  /** Keep each result's part position (`part_index`): for callers that record which part was returned (query history). */
  readonly withPartIndex?: boolean;
}

export class QueryCorpora {
  constructor(
    readonly query: string,
    readonly corpora: readonly CorpusSearch[],
    readonly options: QueryOptions,
    readonly now: Date,
  ) {}
}


export interface QueryResponse {
  /** `table` / `image`: what the matched part was cut from (result-attachments.ts); `part_index` only when asked for. */
  search_results: (Omit<SearchResult, 'seq'> & ResultAttachments & { part_index?: number })[];
  warnings?: string[];
  /** Only when rewriting was asked for: the corpora whose query was rewritten. */
  rewritten_queries?: RewrittenQuery[];
}

/** Candidates a reranker sees when the page is smaller. */
const RERANK_POOL = 100;

/** Candidates each side of a hybrid search contributes at least (docs/search.md). */
const HYBRID_DEPTH = 100;

@QueryHandler(QueryCorpora)
export class QueryCorporaHandler implements IQueryHandler<QueryCorpora, QueryResponse> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(SEARCH_INDEX) private readonly search: SearchIndex,
    private readonly models: ModelRerankers,
    @Inject(ENCODER_REGISTRY) private readonly encoders: EncoderRegistry,
    private readonly rewriter: QueryRewriter,
  ) {}

  async execute(q: QueryCorpora): Promise<QueryResponse> {
    const filters: (FilterExpr | undefined)[] = [];
    const rows: CorpusRow[] = [];
    for (const c of q.corpora) {
      const row = await this.reads.get<CorpusRow>(CORPORA, c.corpusKey);
      if (!row) throw corpusNotFound(c.corpusKey);
      rows.push(row);
      filters.push(compileFilter(c.metadataFilter, row.filter_attributes, c.filterField ?? 'metadata_filter'));
    }
    const { limit, offset, maxBy, reranker, context } = q.options;
    // max_by keeps one result per document and rerankers reorder a wider pool: fetch deeper for both.
    const depth = Math.max((offset + limit) * (maxBy ? 5 : 1), reranker && reranker.type !== 'none' ? RERANK_POOL : 0);
    // MMR compares results by their stored vectors: fetched with the hits only when a reranker needs them.
    const withVectors = reranker !== undefined && comparesResults(reranker);
    const rewrite = q.options.rewrite
      ? await this.rewriter.forCorpora(q.query, q.corpora.map((c, i) => ({ corpusKey: c.corpusKey, attributes: rows[i].filter_attributes, metadataFilter: c.metadataFilter, filter: filters[i], filterField: c.filterField ?? 'metadata_filter' })), q.options.rewrite)
      : undefined;
    const texts = rewrite?.texts ?? q.corpora.map(() => q.query);
    const searchFilters = rewrite?.filters ?? filters;
    const warnings: string[] = [...(rewrite?.warnings ?? [])];
    const vectors = new Map<string, Promise<number[]>>();
    const encoders = new Map<string, Promise<Encoder | undefined>>();
    const encoderOf = (name: string) => {
      if (!encoders.has(name)) encoders.set(name, this.encoders.lookup(name));
      return encoders.get(name)!;
    };
    const queryVector = (encoderName: string, text: string) => {
      const key = `${encoderName}\u0000${text}`;
      if (!vectors.has(key)) {
        vectors.set(key, encoderOf(encoderName).then((e) => e!.encode([text], 'query')).then(([v]) => Array.from(v)));
      }
      return vectors.get(key)!;
    };
    const perCorpus = await Promise.all(
      q.corpora.map(async (c, index) => {
        // A lexical-only corpus ranks by BM25 as its creator asked: nothing to warn about.
        const lexicalOnly = rows[index].encoder_name === NO_ENCODER;
        const encoderName = lexicalOnly ? null : rows[index].encoder_name;
        const encoder = encoderName ? await encoderOf(encoderName) : undefined;
        let weight = encoder ? lexicalWeight(c.lexicalInterpolation, encoder.lexicalUnit) : 1;
        if (c.lexicalInterpolation < 1 && !encoder && !lexicalOnly) {
          weight = 1;
          warnings.push(
            encoderName
              ? `semantic_search_unavailable: corpus "${c.corpusKey}" was embedded with encoder "${encoderName}", which this service does not have configured; ranked lexically (BM25) only`
              : `semantic_search_unavailable: corpus "${c.corpusKey}" was created before encoders were available and has no vectors; ranked lexically (BM25) only`,
          );
        }
        const text = texts[index];
        const corpus = { key: c.corpusKey, index, encoder: encoderName ?? undefined };
        const request = { text, filter: searchFilters[index], weight, depth, side: Math.max(depth, HYBRID_DEPTH), withVectors };
        return corpusCandidates(this.search, corpus, request, encoderName ? () => queryVector(encoderName, text) : undefined);
      }),
    );
    const candidates = perCorpus.flat().sort((a, b) => b.score - a.score);
    // A reranker and max_by read every candidate; otherwise only the page's content is read.
    let results = await resultsOf(this.search, candidates, reranker || maxBy ? candidates.length : offset + limit, withVectors);
    if (reranker) {
      const ctx = {
        query: q.query,
        now: q.now,
        field: 'search.reranker',
        model: (name: string, field: string) => this.models.get(name, field),
        ...(hasContext(context) ? { withContext: async (rs: readonly SearchResult[]) => (await this.withContext([...rs], context!)).map((r) => r.text) } : {}),
      };
      results = await rerank(reranker, results, ctx);
    }
    if (maxBy === 'doc.id') {
      const seen = new Set<string>();
      results = results.filter((r) => {
        const key = `${r.request_corpora_index}\u0000${r.document_id}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
    const page = results.slice(offset, offset + limit);
    const windowed = hasContext(context) ? await this.withContext(page, context!) : page;
    // Only corpora that ever held a table or an image need their results' document rows read (≈ 1 ms a page).
    const withAttachments = new Set(rows.filter((r) => r.has_attachments !== false).map((r) => r.key));
    const shown = withAttachments.size ? await resultAttachments(this.reads, windowed, (r) => withAttachments.has(r.corpus_key)) : windowed;
    const withIndex = q.options.withPartIndex === true;
    const response: QueryResponse = { search_results: shown.map((r) => publicResult(r, withIndex)) };
    if (warnings.length) response.warnings = warnings;
    if (rewrite) response.rewritten_queries = rewrite.rewritten;
    return response;
  }

  /** Each result's text with its context window, from its document's parts (read once per document). */
  private async withContext(page: SearchResult[], window: ContextWindow): Promise<SearchResult[]> {
    const parts = new Map<string, Promise<SearchHit[]>>();
    return Promise.all(
      page.map(async (r) => {
        const key = `${r.corpus_key}\u0000${r.document_id}`;
        if (!parts.has(key)) parts.set(key, this.search.documentParts(r.corpus_key, r.document_id));
        const texts = (await parts.get(key)!).map((p) => p.text);
        const index = (await parts.get(key)!).findIndex((p) => p.seq === r.seq);
        return index < 0 ? r : { ...r, text: withContext(texts, index, window) };
      }),
    );
  }
}

/**
 * A result as sent: one object built with its fields named (the order is the response's), rather than copies that
 * drop the internal fields by rest and spread (two copies per result at 100 results a page).
 */
function publicResult(r: SearchResult & ResultAttachments, withIndex: boolean): QueryResponse['search_results'][number] {
  const shown: QueryResponse['search_results'][number] = {
    text: r.text,
    score: r.score,
    part_metadata: r.part_metadata,
    document_metadata: r.document_metadata,
    document_id: r.document_id,
    corpus_key: r.corpus_key,
    request_corpora_index: r.request_corpora_index,
    result_type: r.result_type,
  };
  if (r.table) shown.table = r.table;
  if (r.image) shown.image = r.image;
  if (withIndex) shown.part_index = r.seq;
  return shown;
}
