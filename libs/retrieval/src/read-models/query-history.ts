import { collection } from '@lib/platform/projections';
import type { QueryHistoryRecord } from '../domain/query-history';

/**
 * One summary row per recorded query (projections/query-history), keyed by query id; the detail is the
 * `QueryHistoryRecorded` event itself, read from its stream, so it is stored once.
 */
export type QueryHistoryRow = {
  readonly id: string;
  readonly query: string;
  /** The first corpus searched (the reference's summary names one); `corpus_keys` holds them all. */
  readonly corpus_key: string;
  readonly corpus_keys: readonly string[];
  readonly started_at: string;
  readonly latency_millis: number;
  readonly chat_id?: string;
  readonly generation?: string;
  readonly factual_consistency_score?: number;
};

export const QUERY_HISTORY = collection<QueryHistoryRow>('query_history');

export const queryHistoryRow = (r: QueryHistoryRecord): QueryHistoryRow => ({
  id: r.queryId,
  query: r.query,
  corpus_key: r.corpusKeys[0] ?? '',
  corpus_keys: [...r.corpusKeys],
  started_at: r.startedAt,
  latency_millis: r.latencyMillis,
  ...(r.chatId ? { chat_id: r.chatId } : {}),
  ...(r.generation ? { generation: r.generation.answer } : {}),
  ...(r.factualConsistencyScore !== undefined ? { factual_consistency_score: r.factualConsistencyScore } : {}),
});

/** The reference's `QueryHistorySummary`. */
export const queryHistorySummaryView = (row: QueryHistoryRow) => ({
  id: row.id,
  query: row.query,
  corpus_key: row.corpus_key,
  started_at: row.started_at,
  latency_millis: row.latency_millis,
  ...(row.chat_id ? { chat_id: row.chat_id } : {}),
  ...(row.generation !== undefined ? { generation: row.generation } : {}),
  ...(row.factual_consistency_score !== undefined ? { factual_consistency_score: row.factual_consistency_score } : {}),
});

/** The reference's `QueryHistory`, built from the recorded event: spans in pipeline order with what each produced. */
export function queryHistoryView(r: QueryHistoryRecord): Record<string, unknown> {
  const spans = r.spans.map((s) => {
    const base = { type: s.type, latency_millis: s.latencyMillis, started_at: s.startedAt };
    switch (s.type) {
      case 'search':
        return {
          ...base,
          search_results: r.results.map((x) => ({ result_type: 'text', document_id: x.documentId, corpus_key: x.corpusKey, request_corpora_index: x.requestCorporaIndex, score: x.score })),
        };
      case 'generation':
        return { ...base, ...(r.generation ? { prompt: r.generation.prompt, generation: r.generation.answer } : {}) };
      case 'fcs':
        return { ...base, ...(r.factualConsistencyScore !== undefined ? { score: r.factualConsistencyScore } : {}) };
    }
  });
  return { id: r.queryId, query: r.request, ...(r.chatId ? { chat_id: r.chatId } : {}), latency_millis: r.latencyMillis, started_at: r.startedAt, spans };
}
