import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, Condition, EVENT_STORE, EventStore, ID_GENERATOR, IdGenerator, invalid, notFound, READ_STORE, ReadStore, StreamWriter, streamId } from '@lib/platform';
import { CORPORA, CorpusRow } from '@lib/corpora';
import type { QueryHistoryEvent, QueryHistoryRecord } from '../../domain/query-history';
import { QUERY_HISTORY, QueryHistoryRow, queryHistorySummaryView, queryHistoryView } from '../../read-models/query-history';
import type { QueryStreamEvent } from '../answer-query/query-answer';
import { filteredPage } from './filtered-page';
import { QueryTrace } from './query-trace';

/** Whether the caller may read a corpus (the query's own rule): histories naming one it may not read are hidden. */
export type CorpusReadable = (corpusKey: string) => boolean;

/** What a recorded query belongs to besides its corpora. */
export interface RecordedFor {
  /** The request as the reference's `QueryRequest`. */
  readonly request: Readonly<Record<string, unknown>>;
  readonly corpusKeys: readonly string[];
  readonly chatId?: string;
  readonly turnId?: string;
}

export interface HistoryFilters {
  readonly corpusKey?: string;
  readonly startedAfter?: string;
  readonly startedBefore?: string;
  readonly chatId?: string;
  readonly historyId?: string;
  readonly limit: number;
  readonly pageKey?: string;
}

const queryStream = (id: string) => streamId('query', id);
type Recorded = { recorded: boolean };
const recordedFold = { initialState: { recorded: false } as Recorded, evolve: (): Recorded => ({ recorded: true }) };

/**
 * The query history (docs/chats.md): one `QueryHistoryRecorded` per saved query on `query-<id>`, appended
 * after the answer is complete (for a stream, before its `end` event). Listing reads the projected summaries;
 * the detail is the event itself.
 */
@Injectable()
export class QueryHistory {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  newQueryId(): string {
    return `qry_${this.ids.uuid().replace(/-/g, '').slice(0, 20)}`;
  }

  /** A trace when the query is to be saved: `save_history` when the request says, else when a corpus saves its queries. */
  async traceFor(requested: boolean | undefined, corpusKeys: readonly string[], now: Date): Promise<QueryTrace | undefined> {
    let save = requested;
    if (save === undefined) {
      save = false;
      for (const key of corpusKeys) if ((await this.reads.get<CorpusRow>(CORPORA, key))?.save_history) save = true;
    }
    return save ? this.newTrace(now) : undefined;
  }

  newTrace(now: Date): QueryTrace {
    return new QueryTrace(this.newQueryId(), now);
  }

  async record(trace: QueryTrace, for_: RecordedFor, ctx: CommandContext): Promise<void> {
    const data: QueryHistoryRecord = {
      queryId: trace.queryId,
      request: for_.request,
      query: String(for_.request.query ?? ''),
      corpusKeys: [...for_.corpusKeys],
      ...(for_.chatId ? { chatId: for_.chatId } : {}),
      ...(for_.turnId ? { turnId: for_.turnId } : {}),
      results: trace.results,
      ...(trace.answer !== undefined ? { generation: { prompt: trace.prompt ?? '', answer: trace.answer } } : {}),
      ...(trace.score !== undefined ? { factualConsistencyScore: trace.score } : {}),
      spans: trace.spans,
      startedAt: trace.startedAt.toISOString(),
      latencyMillis: trace.latencyMillis(),
    };
    await this.streams.write<Recorded, QueryHistoryEvent>(queryStream(trace.queryId), recordedFold, (s) => (s.recorded ? [] : [{ type: 'QueryHistoryRecorded', data }]), ctx, ['query_history']);
  }

  /** The stream's events, the history recorded just before `end`, so a client that saw `end` finds it. */
  async *recordAfter(events: AsyncIterable<QueryStreamEvent>, trace: QueryTrace, for_: RecordedFor, ctx: CommandContext): AsyncGenerator<QueryStreamEvent> {
    for await (const event of events) {
      if (event.type === 'end') await this.record(trace, for_, ctx);
      yield event;
    }
  }

  /** The reference's `QueryHistory`, read from the query's stream; a query on a corpus the caller may not read is not found. */
  async get(id: string, readable: CorpusReadable): Promise<Record<string, unknown>> {
    const [event] = await this.events.readStream(queryStream(id));
    const record = event?.type === 'QueryHistoryRecorded' ? (event.data as QueryHistoryRecord) : undefined;
    if (!record || !record.corpusKeys.every(readable)) throw notFound('query_history.not_found', `Query history "${id}" does not exist`, id);
    return queryHistoryView(record);
  }

  /** Newest first; a page holds only histories whose every corpus the caller may read. */
  async list(f: HistoryFilters, readable: CorpusReadable): Promise<{ queries: Record<string, unknown>[]; metadata: { page_key?: string } }> {
    const where: Condition[] = [];
    for (const [field, value] of [['started_after', f.startedAfter], ['started_before', f.startedBefore]] as const) {
      if (value === undefined) continue;
      if (Number.isNaN(Date.parse(value))) throw invalid('request.invalid', `${field} must be an ISO 8601 date-time`, { [field]: 'must be an ISO 8601 date-time' });
      where.push({ field: 'started_at', op: field === 'started_after' ? 'gt' : 'lt', value: new Date(value).toISOString() });
    }
    if (f.chatId) where.push({ field: 'chat_id', op: 'eq', value: f.chatId });
    if (f.historyId) where.push({ field: 'id', op: 'eq', value: f.historyId });
    const keep = (r: QueryHistoryRow) => r.corpus_keys.every(readable) && (!f.corpusKey || r.corpus_keys.includes(f.corpusKey));
    const page = await filteredPage<QueryHistoryRow>(this.reads, QUERY_HISTORY, { where, sort: { field: 'started_at', direction: 'desc' }, limit: f.limit, pageKey: f.pageKey }, keep);
    return { queries: page.items.map(queryHistorySummaryView), metadata: page.pageKey ? { page_key: page.pageKey } : {} };
  }
}
