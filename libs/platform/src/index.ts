/**
 * The main entry (`@lib/platform`): the kernel, the filter language, the ports (event store, read store, search
 * index, projections), the projection runtime, command plumbing and the guarded outbound HTTP client. No
 * adapter: the embedded ones are `@lib/platform/sqlite`, the production ones `@lib/platform/engines`, both for
 * the composition root. Domain code uses `@lib/platform/kernel` (and `@lib/platform/filter`) only.
 */
export * from './kernel/index';
export * from './kernel/config';
export * from './filter/index';
export * from './http/ip-address';
export * from './http/outbound-policy';
export * from './http/outbound-http';
export * from './http/read-up-to';
export * from './telemetry/tracing';
export * from './telemetry/traced-event-store';
export * from './event-store/event-store.port';
export * from './event-store/catch-up-subscription';
export * from './files/private-files';
export * from './read-store/read-store.port';
export * from './search-index/search-index.port';
export { queryTerms } from './search-index/query-terms';
export * from './projections/projection';
export * from './read-store/patch';
export * from './read-store/read-ops';
export * from './projections/projection-worker';
export * from './projections/projection-runtime';
export * from './commands/command-context';
export * from './commands/stream-decider';
export * from './commands/stream-writer';
export * from './work/lease';
export * from './work/leases';
export * from './work/liveness';
export * from './work/timer';
export * from './work/durable-timers';
export * from './work/woken-runner';
export * from './work/log-follower';
export * from './work/cadence';
// Pure (no driver): the classification of PostgreSQL connection failures that adapters and the edge share.
export * from './kernel/store-errors';
