import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { FilterExpr, READ_STORE, ReadStore, SEARCH_INDEX, SearchHit, SearchIndex } from '@lib/platform';
import { corpusNotFound } from '../../domain/corpus';
import { ContextWindow, hasContext, withContext } from '../../domain/context-window';
import { compileFilter } from '../filters';
import { ModelRerankers } from './model-rerankers';
import { rerank, RerankerSpec } from './rerankers';
import type { SearchResult } from './search-result';

export type { SearchResult } from './search-result';
import { CORPORA, CorpusRow } from '../read-models';

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
}

export class QueryCorpora {
  constructor(
    readonly query: string,
    readonly corpora: readonly CorpusSearch[],
    readonly options: QueryOptions,
    readonly now: Date = new Date(),
  ) {}
}


export interface QueryResponse {
  search_results: Omit<SearchResult, 'seq'>[];
  warnings?: string[];
}

/** Candidates a reranker sees when the page is smaller. */
const RERANK_POOL = 100;

/** BM25 is unbounded; this squashes it monotonically into the 0–1 score range the API promises. */
const lexicalScore = (bm25: number): number => bm25 / (bm25 + 10);

@QueryHandler(QueryCorpora)
export class QueryCorporaHandler implements IQueryHandler<QueryCorpora, QueryResponse> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(SEARCH_INDEX) private readonly search: SearchIndex,
    private readonly models: ModelRerankers,
  ) {}

  async execute(q: QueryCorpora): Promise<QueryResponse> {
    const filters: (FilterExpr | undefined)[] = [];
    for (const c of q.corpora) {
      const row = await this.reads.get<CorpusRow>(CORPORA, c.corpusKey);
      if (!row) throw corpusNotFound(c.corpusKey);
      filters.push(compileFilter(c.metadataFilter, row.filter_attributes, c.filterField ?? 'metadata_filter'));
    }
    const { limit, offset, maxBy, reranker, context } = q.options;
    // max_by keeps one result per document and rerankers reorder a wider pool: fetch deeper for both.
    const depth = Math.max((offset + limit) * (maxBy ? 5 : 1), reranker && reranker.type !== 'none' ? RERANK_POOL : 0);
    const perCorpus = await Promise.all(
      q.corpora.map(async (c, index) => {
        const hits = await this.search.search(c.corpusKey, { mode: 'lexical', text: q.query, limit: depth, filter: filters[index] });
        return hits.map((h) => toResult(h, c.corpusKey, index));
      }),
    );
    let results = perCorpus.flat().sort((a, b) => b.score - a.score);
    if (reranker) {
      const ctx = { query: q.query, now: q.now, field: 'search.reranker', model: (name: string, field: string) => this.models.get(name, field) };
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
    const shown = hasContext(context) ? await this.withContext(page, context!) : page;
    const response: QueryResponse = { search_results: shown.map(({ seq: _seq, ...result }) => result) };
    if (q.corpora.some((c) => c.lexicalInterpolation < 1)) {
      response.warnings = ['semantic_search_unavailable: corpora are not embedded yet (the encoders listed by /v2/encoders are not wired into indexing), so results are ranked lexically (BM25) only'];
    }
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

function toResult(hit: SearchHit, corpusKey: string, index: number): SearchResult {
  return {
    text: hit.text,
    score: lexicalScore(hit.textScore ?? hit.score),
    part_metadata: hit.sectionTitle !== undefined ? { ...hit.partMetadata, section: hit.sectionTitle } : hit.partMetadata,
    document_metadata: hit.documentMetadata,
    document_id: hit.documentId,
    corpus_key: corpusKey,
    request_corpora_index: index,
    result_type: 'text',
    seq: hit.seq,
  };
}
