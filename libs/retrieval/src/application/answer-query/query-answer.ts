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
  rewritten_queries?: QueryResponse['rewritten_queries'];
}

/**
 * The reference's `QueryStreamedResponse` events, discriminated by `type`. `end` carries the request's
 * warnings, which the edge narrows to the reference's values (splitWarnings).
 */
export type QueryStreamEvent =
  | { readonly type: 'search_results'; readonly search_results: SearchResults; readonly rewritten_queries?: QueryResponse['rewritten_queries'] }
  | { readonly type: 'generation_chunk'; readonly generation_chunk: string }
  | { readonly type: 'generation_info'; readonly rendered_prompt: string; readonly rephrased_query: string }
  | { readonly type: 'generation_end' }
  | { readonly type: 'factual_consistency_score'; readonly factual_consistency_score: number }
  | { readonly type: 'end'; readonly warnings?: readonly string[] };

/** The summary when retrieval found nothing to answer from (the model is not called); the reference's wording. */
export const NO_RESULTS_SUMMARY = 'The returned results did not contain sufficient information to the question.';

/** The reference's `QueryWarning` values: the only ones a response's `warnings` may hold. */
export const QUERY_WARNINGS = ['exceeded_max_input_length_fcs', 'intelligent_query_rewriting_failed', 'fcs_language_not_supported'] as const;
export type QueryWarning = (typeof QUERY_WARNINGS)[number];

/**
 * Our warnings are `code: explanation`. Those whose code is a reference value go in `warnings` as the bare value;
 * the rest (semantic search unavailable, no factual consistency scorer…) are notices the edge reports apart
 * (docs/search.md), since a client validating against the reference would reject them in `warnings`.
 */
export function splitWarnings(warnings: readonly string[] | undefined): { warnings: QueryWarning[]; notices: string[] } {
  const out: { warnings: QueryWarning[]; notices: string[] } = { warnings: [], notices: [] };
  for (const w of warnings ?? []) {
    const code = w.split(':', 1)[0].trim();
    if ((QUERY_WARNINGS as readonly string[]).includes(code)) {
      if (!out.warnings.includes(code as QueryWarning)) out.warnings.push(code as QueryWarning);
    } else out.notices.push(w);
  }
  return out;
}
