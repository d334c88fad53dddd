import { Pool } from 'pg';
import { PostgresProjectionState, PostgresReadStore } from '@lib/platform/engines';

/**
 * Read models and projection state in PostgreSQL (`READ_STORE=postgres` with POSTGRES_URL): one shared copy for every
 * process, instead of each process's embedded SQLite read models projected from the shared log (the default, see
 * docs/benchmarks/2026-12-03-issue-47-read-store.md). Creates the bookkeeping tables if absent; projections create
 * their own tables when they are prepared.
 */
export async function connectPostgresReads(
  url: string,
  options: { readonly poolSize?: number } = {},
): Promise<{ reads: PostgresReadStore; state: PostgresProjectionState; close: () => Promise<void> }> {
  const pool = new Pool({ connectionString: url, application_name: 'agent-retrieval-service reads', ...(options.poolSize ? { max: options.poolSize } : {}) });
  // An idle connection the server closed (a restart) is dropped from the pool; the next query opens another. Without
  // a listener, the pool's 'error' event would end the process.
  pool.on('error', () => undefined);
  const state = new PostgresProjectionState(pool);
  const reads = new PostgresReadStore(pool, state);
  try {
    await reads.ensureSchema();
  } catch (err) {
    await pool.end();
    throw err;
  }
  return { reads, state, close: () => pool.end() };
}
