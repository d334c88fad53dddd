/**
 * The embedded adapters (`@lib/platform/sqlite`): SQLite event store, read store, search index and projection
 * state, for the composition root (apps/infrastructure), tests and benches only. Kept out of the main entry so
 * that libraries depending on the ports never load better-sqlite3 or sqlite-vec.
 */
export * from './sqlite/sqlite-database';
export * from './event-store/sqlite/sqlite-event-store';
export * from './sqlite/sqlite-projection-state';
export * from './read-store/sqlite/sqlite-read-store';
export * from './search-index/sqlite/sqlite-search-index';
export * from './sqlite/sqlite-checkpointer';
