/** The retrieval context's events (chats, query history), for projections; loads no use case or framework. */
export type { ChatEvent } from './domain/chat';
export type { QueryHistoryEvent, QueryHistoryRecord, RecordedResult, RecordedSpan } from './domain/query-history';
