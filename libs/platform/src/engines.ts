/**
 * The production adapters, kept apart from the main entry point so that the embedded default never loads
 * the EventStoreDB, MongoDB or Typesense drivers.
 */
export { PostgresEventStore } from './event-store/postgres/postgres-event-store';
export { EventStoreDbEventStore } from './event-store/eventstoredb/eventstoredb-event-store';
export { MongoReadStore } from './read-store/mongo/mongo-read-store';
export { MongoProjectionState } from './read-store/mongo/mongo-projection-state';
export { TypesenseSearchIndex } from './search-index/typesense/typesense-search-index';
export { PostgresReadStore } from './read-store/postgres/postgres-read-store';
export { PostgresProjectionState } from './read-store/postgres/postgres-projection-state';
