/**
 * One query recorded in the query history (`save_history`, stream `query-<qry id>`, docs/chats.md): what was
 * asked, which parts came back (ids only: their text is in the document streams), the answer and the stages'
 * timings. `GET /v2/queries/{id}` reads this event; the list reads the summary rows projected from it.
 */
export interface RecordedResult {
  readonly documentId: string;
  readonly corpusKey: string;
  /** The part's position in its document (`document-…` stream's parts). */
  readonly partIndex?: number;
  readonly requestCorporaIndex: number;
  readonly score: number;
}

/** A stage of the pipeline: `search` (retrieval and reranking), `generation`, `fcs`. */
export interface RecordedSpan {
  readonly type: 'search' | 'generation' | 'fcs';
  readonly startedAt: string;
  readonly latencyMillis: number;
}

export interface QueryHistoryRecord {
  readonly queryId: string;
  /** The request as the reference's `QueryRequest` (a single-corpus query names its corpus in `search.corpora`). */
  readonly request: Readonly<Record<string, unknown>>;
  readonly query: string;
  readonly corpusKeys: readonly string[];
  readonly chatId?: string;
  readonly turnId?: string;
  readonly results: readonly RecordedResult[];
  /** The rendered prompt and the answer as returned (citations rewritten); absent without generation. */
  readonly generation?: { readonly prompt: string; readonly answer: string };
  readonly factualConsistencyScore?: number;
  readonly spans: readonly RecordedSpan[];
  readonly startedAt: string;
  readonly latencyMillis: number;
}

export type QueryHistoryEvent = { type: 'QueryHistoryRecorded'; data: QueryHistoryRecord };
