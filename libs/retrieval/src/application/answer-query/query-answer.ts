import type { QueryResponse } from '../query/query-corpora';

type SearchResults = QueryResponse['search_results'];

/** The reference's `QueryFullResponse`, fields in its order; generation fields only when generation ran. */
export interface QueryAnswer {
  summary?: string;
  response_language?: string;
  search_results: SearchResults;
  /** Only when the answer was scored. */
  factual_consistency_score?: number;
  rendered_prompt?: string;
  warnings?: string[];
}

/**
 * The reference's `QueryStreamedResponse` events, discriminated by `type`. `end` carries the request's
 * warnings (a field the reference does not list; its clients ignore unknown fields).
 */
export type QueryStreamEvent =
  | { readonly type: 'search_results'; readonly search_results: SearchResults }
  | { readonly type: 'generation_chunk'; readonly generation_chunk: string }
  | { readonly type: 'generation_info'; readonly rendered_prompt: string }
  | { readonly type: 'generation_end' }
  | { readonly type: 'factual_consistency_score'; readonly factual_consistency_score: number }
  | { readonly type: 'end'; readonly warnings?: readonly string[] };

/** The summary when retrieval found nothing to answer from (the model is not called); the reference's wording. */
export const NO_RESULTS_SUMMARY = 'The returned results did not contain sufficient information to the question.';
