import { randomUUID } from 'node:crypto';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createDatabase } = require('./postgres-cluster') as { createDatabase: (url: string, name: string) => Promise<string> };

/**
 * A fresh database on the run's PostgreSQL cluster (test/support/postgres-global.js), or undefined (with the reason
 * printed) when there is none: PostgreSQL not installed and POSTGRES_URL not set.
 */
export async function testDatabase(label: string): Promise<string | undefined> {
  const url = process.env.ARS_TEST_POSTGRES_URL;
  if (!url) return undefined;
  return createDatabase(url, `t_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase().slice(0, 30)}_${randomUUID().replace(/-/g, '').slice(0, 10)}`);
}

/** Whether this run has PostgreSQL; prints why a suite skips otherwise (stderr: jest drops the console of an all-skipped file). */
export function havePostgres(suite: string): boolean {
  if (process.env.ARS_TEST_POSTGRES_URL) return true;
  process.stderr.write(`skipped: ${suite}: PostgreSQL is not installed and POSTGRES_URL is not set for the run (apt-get install postgresql)\n`);
  return false;
}
