/** The fields of a result that user functions (`get('$.…')`) and prompt templates (`$qResult`) read. */
export type ResultFields = Readonly<Pick<SearchResult, 'text' | 'score' | 'document_id' | 'corpus_key' | 'part_metadata' | 'document_metadata'>>;

/** One result as the query API returns it, plus the part's position for context windows. */
export interface SearchResult {
  text: string;
  score: number;
  part_metadata: Record<string, unknown>;
  document_metadata: Record<string, unknown>;
  document_id: string;
  corpus_key: string;
  request_corpora_index: number;
  result_type: 'text';
  /** The part's position in its document, for context windows; not sent. */
  seq: number;
  /** The part's stored vector and the encoder that made it, when a reranker compares results (MMR); not sent. */
  vector?: Float32Array;
  encoder?: string;
}
