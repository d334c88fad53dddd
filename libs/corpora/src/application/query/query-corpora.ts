import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { FilterExpr, READ_STORE, ReadStore, SEARCH_INDEX, SearchHit, SearchIndex } from '@lib/platform';
import { corpusNotFound } from '../../domain/corpus';
import { compileFilter } from '../filters';
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

export class QueryCorpora {
  constructor(
    readonly query: string,
    readonly corpora: readonly CorpusSearch[],
    readonly limit: number,
    readonly offset: number,
    readonly maxBy?: 'doc.id',
  ) {}
}

export interface SearchResult {
  text: string;
  score: number;
  part_metadata: Record<string, unknown>;
  document_metadata: Record<string, unknown>;
  document_id: string;
  corpus_key: string;
  request_corpora_index: number;
  result_type: 'text';
}

export interface QueryResponse {
  search_results: SearchResult[];
  warnings?: string[];
}

/** BM25 is unbounded; this squashes it monotonically into the 0–1 score range the API promises. */
const lexicalScore = (bm25: number): number => bm25 / (bm25 + 10);

@QueryHandler(QueryCorpora)
export class QueryCorporaHandler implements IQueryHandler<QueryCorpora, QueryResponse> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(SEARCH_INDEX) private readonly search: SearchIndex,
  ) {}

  async execute(q: QueryCorpora): Promise<QueryResponse> {
    const filters: (FilterExpr | undefined)[] = [];
    for (const c of q.corpora) {
      const row = await this.reads.get<CorpusRow>(CORPORA, c.corpusKey);
      if (!row) throw corpusNotFound(c.corpusKey);
      filters.push(compileFilter(c.metadataFilter, row.filter_attributes, c.filterField ?? 'metadata_filter'));
    }
    // max_by keeps one result per document: fetch deeper so that a page still fills after de-duplication.
    const depth = (q.offset + q.limit) * (q.maxBy ? 5 : 1);
    const perCorpus = await Promise.all(
      q.corpora.map(async (c, index) => {
        const hits = await this.search.search(c.corpusKey, { mode: 'lexical', text: q.query, limit: depth, filter: filters[index] });
        return hits.map((h) => toResult(h, c.corpusKey, index));
      }),
    );
    let results = perCorpus.flat().sort((a, b) => b.score - a.score);
    if (q.maxBy === 'doc.id') {
      const seen = new Set<string>();
      results = results.filter((r) => {
        const key = `${r.request_corpora_index}\u0000${r.document_id}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
    const response: QueryResponse = { search_results: results.slice(q.offset, q.offset + q.limit) };
    if (q.corpora.some((c) => c.lexicalInterpolation < 1)) {
      response.warnings = ['semantic_search_unavailable: no encoder is configured yet, so results are ranked lexically (BM25) only'];
    }
    return response;
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
  };
}
