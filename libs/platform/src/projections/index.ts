/**
 * The projections entry (`@lib/platform/projections`): what a projection is written against — the kernel, the
 * projection types and the read-store and search-index operations it returns. Loads no adapter, runtime or
 * HTTP client.
 */
export * from '../kernel/index';
export * from './projection';
export type { CollectionSpec, ReadOp, RowGuard } from '../read-store/read-store.port';
export type { SearchOp, IndexedDocument } from '../search-index/search-index.port';
export * from '../read-store/read-ops';
