import type { RecordedResult, RecordedSpan } from '../../domain/query-history';
import type { QueryResponse } from '../query/query-corpora';

/**
 * What a query's pipeline did, collected while it runs when the query is to be recorded (`save_history`):
 * the stages' timings, the returned parts' ids, the prompt, the answer and its score. Latencies are measured
 * on the monotonic clock; `startedAt` is the request's time (the injected clock's).
 */
export class QueryTrace {
  readonly spans: RecordedSpan[] = [];
  results: RecordedResult[] = [];
  prompt?: string;
  answer?: string;
  score?: number;
  private readonly t0 = performance.now();

  constructor(
    readonly queryId: string,
    readonly startedAt: Date,
  ) {}

  /** Starts a span; the returned function ends it. */
  begin(type: RecordedSpan['type']): () => void {
    const start = performance.now();
    const startedAt = new Date(this.startedAt.getTime() + Math.round(start - this.t0)).toISOString();
    return () => {
      this.spans.push({ type, startedAt, latencyMillis: Math.round(performance.now() - start) });
    };
  }

  /** Keeps the ids of the returned parts (the response's part_index is removed before it is sent). */
  keepResults(results: QueryResponse['search_results']): void {
    this.results = results.map((r) => ({
      documentId: r.document_id,
      corpusKey: r.corpus_key,
      ...(r.part_index !== undefined ? { partIndex: r.part_index } : {}),
      requestCorporaIndex: r.request_corpora_index,
      score: r.score,
    }));
  }

  latencyMillis(): number {
    return Math.round(performance.now() - this.t0);
  }
}
