/** The retrieval read models (chats, turns, query history): rows, collections, views. Loads no use case or SDK. */
export * from './chats';
export * from './query-history';
