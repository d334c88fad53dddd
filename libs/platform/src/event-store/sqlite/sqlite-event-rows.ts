import { EventFilter } from '../event-store.port';
import { RecordedEvent } from '../events';

/** The event store's tables and how a row reads back (sqlite-event-store.ts writes through sqlite-appender.ts). */
export interface EventRow {
  position: number;
  stream_id: string;
  revision: number;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  recorded_at: number;
}

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS es_events (
  position    INTEGER PRIMARY KEY AUTOINCREMENT,
  stream_id   TEXT    NOT NULL,
  revision    INTEGER NOT NULL,
  event_id    TEXT    NOT NULL,
  type        TEXT    NOT NULL,
  category    TEXT    NOT NULL,
  data        TEXT    NOT NULL,
  metadata    TEXT    NOT NULL,
  recorded_at INTEGER NOT NULL,
  UNIQUE (stream_id, revision),
  UNIQUE (stream_id, event_id)
);
CREATE INDEX IF NOT EXISTS es_events_category ON es_events (category, position);
CREATE INDEX IF NOT EXISTS es_events_type ON es_events (type, position);
CREATE TABLE IF NOT EXISTS es_streams (
  stream_id TEXT PRIMARY KEY,
  revision  INTEGER NOT NULL
) WITHOUT ROWID;
`;

export function filterClause(filter: EventFilter | undefined): { clause: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  if (filter?.categories?.length) {
    parts.push(`category IN (${filter.categories.map(() => '?').join(',')})`);
    params.push(...filter.categories);
  }
  if (filter?.types?.length) {
    parts.push(`type IN (${filter.types.map(() => '?').join(',')})`);
    params.push(...filter.types);
  }
  return { clause: parts.length ? `AND ${parts.join(' AND ')}` : '', params };
}

export function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    streamId: row.stream_id,
    revision: row.revision,
    position: row.position,
    recordedAt: new Date(row.recorded_at).toISOString(),
  };
}

/** An event's size as stored, in characters of its JSON: what the reads' byte bound (`maxBytes`) counts. */
export const storedChars = (e: { readonly data: string; readonly metadata: string }): number => e.data.length + e.metadata.length;

/**
 * The rows decoded, in order, up to and including the one that brings their stored JSON to `maxChars` (all of them
 * without a bound). Rows are pulled one at a time, so those past the bound are never read.
 */
export function decodeWithin(rows: Iterable<EventRow>, maxChars = Infinity): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  let chars = 0;
  for (const row of rows) {
    events.push(toRecorded(row));
    chars += storedChars(row);
    if (chars >= maxChars) break;
  }
  return events;
}
