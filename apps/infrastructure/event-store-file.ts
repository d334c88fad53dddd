import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** Where the embedded event store lives, and why. */
export interface EventStoreFile {
  readonly path: string;
  /** True when the log stays in `service.db` beside the projections (a data dir made before `events.db`). */
  readonly legacy: boolean;
}

/**
 * The embedded event log has its own file, `DATA_DIR/events.db`, so its commits (on the writer thread or inline)
 * never share SQLite's one write lock with the projections' transactions in `service.db` (docs/architecture.md).
 * A data dir whose `service.db` already holds events keeps its log there: moving a log is a copy of the truth made
 * while nothing may append, and a half-moved log is worse than a slower one, so it is left to an operator who
 * stops the service (docs/deployment.md). Every process on one data dir decides alike from the files alone.
 */
export function eventStoreFile(dataDir: string): EventStoreFile {
  const events = join(dataDir, 'events.db');
  const service = join(dataDir, 'service.db');
  if (existsSync(events) || !existsSync(service)) return { path: events, legacy: false };
  return serviceDbHoldsEvents(service) ? { path: service, legacy: true } : { path: events, legacy: false };
}

function serviceDbHoldsEvents(path: string): boolean {
  const db = new Database(path, { fileMustExist: true });
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'es_events'").get();
    return table !== undefined && db.prepare('SELECT 1 FROM es_events LIMIT 1').get() !== undefined;
  } finally {
    db.close();
  }
}
