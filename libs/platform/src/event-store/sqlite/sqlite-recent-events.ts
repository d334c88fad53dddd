import type { EventFilter } from '../event-store.port';
import { categoryOf, RecordedEvent } from '../events';
import type { EncodedEvent } from './sqlite-appender';
import { EventRow, storedChars, toRecorded } from './sqlite-event-rows';

interface Entry {
  readonly row: EventRow;
  readonly category: string;
  decoded?: RecordedEvent;
}

/** How much of the tail is kept: enough for every projection woken by a burst of appends to find its events here. */
const MAX_EVENTS = 4096;
const MAX_JSON_CHARS = 16 * 2 ** 20;

/**
 * The newest events this process appended, as stored, so that the projections woken by an append read it without a
 * query and decode it once between them (three projections read every DocumentIndexed: from the file, ~70 µs per
 * document of the event loop's ~2 ms, ~15 µs from here; docs/benchmarks/2026-11-25-session-14.md). It is only ever a copy of
 * part of the log: the positions it holds are contiguous (a commit's are, since it held the write lock, and a
 * commit that does not follow on from the last one starts the tail afresh), so it answers for every position from
 * its first to its last, and the store reads what lies beyond its last (a commit not yet reported by the writer
 * thread, another process's) from the file.
 */
export class RecentEvents {
  private entries: Entry[] = [];
  private chars = 0;

  /** The position of the last event held (0 when empty). */
  get last(): number {
    return this.entries.length ? this.entries[this.entries.length - 1].row.position : 0;
  }

  /** Adds a committed append's events, stored at positions `position - events.length + 1 … position`. */
  add(streamId: string, events: readonly EncodedEvent[], position: number, nextExpectedRevision: number, recordedAt: number): void {
    const first = position - events.length + 1;
    if (this.entries.length > 0 && first !== this.last + 1) this.clear();
    const category = categoryOf(streamId);
    events.forEach((e, i) => {
      const row: EventRow = {
        position: first + i,
        stream_id: streamId,
        revision: nextExpectedRevision - events.length + 1 + i,
        event_id: e.id,
        type: e.type,
        data: e.data,
        metadata: e.metadata,
        recorded_at: recordedAt,
      };
      this.entries.push({ row, category });
      this.chars += storedChars(e);
    });
    let drop = 0;
    while (this.entries.length - drop > 1 && (this.entries.length - drop > MAX_EVENTS || this.chars > MAX_JSON_CHARS)) {
      this.chars -= storedChars(this.entries[drop].row);
      drop += 1;
    }
    if (drop > 0) this.entries = this.entries.slice(drop);
  }

  clear(): void {
    this.entries = [];
    this.chars = 0;
  }

  /**
   * The events after `after` up to `last` matching `filter`, oldest first, at most `maxCount`, as a forwards read
   * of the file would return them, stopping after the event that brings their JSON to `maxChars`; undefined when the
   * tail does not hold every position after `after`. The events returned are shared with every other caller: they
   * must not be changed.
   */
  read(after: number, maxCount: number, filter: EventFilter | undefined, maxChars = Infinity): { events: RecordedEvent[]; chars: number } | undefined {
    if (this.entries.length === 0) return undefined;
    const start = after + 1 - this.entries[0].row.position;
    if (start < 0) return undefined;
    const types = filter?.types?.length ? new Set(filter.types) : undefined;
    const categories = filter?.categories?.length ? new Set(filter.categories) : undefined;
    const out: RecordedEvent[] = [];
    let chars = 0;
    for (let i = start; i < this.entries.length && out.length !== maxCount && chars < maxChars; i++) {
      const entry = this.entries[i];
      if (types && !types.has(entry.row.type)) continue;
      if (categories && !categories.has(entry.category)) continue;
      entry.decoded ??= toRecorded(entry.row);
      out.push(entry.decoded);
      chars += storedChars(entry.row);
    }
    return { events: out, chars };
  }
}
