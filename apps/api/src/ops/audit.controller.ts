import { Controller, Get, Inject, Query } from '@nestjs/common';
import { EVENT_STORE, EventStore, invalid, RecordedEvent } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Policy } from '../http/policy';
import { redact } from './redact';

/** How many events one audit request reads at most while looking for matches (it then returns a cursor). */
const SCAN_LIMIT = 10_000;
/** The events' JSON one answer holds at most (plus one entry); past it the answer ends with a cursor. */
const ANSWER_BYTES = 16 * 2 ** 20;

const entry = (e: RecordedEvent) => ({
  position: e.position,
  recorded_at: e.recordedAt,
  type: e.type,
  stream_id: e.streamId,
  actor: e.metadata.actor,
  request_id: e.metadata.requestId,
  data: redact(e.data),
});

/**
 * Who did what: every event with the actor that caused it (user, key, app client or system) and the request it
 * came from, oldest first, filtered by actor and category. Credential digests are redacted.
 */
@Controller('v2/audit')
export class AuditController {
  constructor(@Inject(EVENT_STORE) private readonly events: EventStore) {}

  @Get()
  @Policy('audit.read')
  async list(@Query('after') after?: string, @Query('limit') limit?: string, @Query('actor') actor?: string, @Query('category') category?: string) {
    const from = after === undefined || after === '' ? 0 : Number(after);
    if (!Number.isSafeInteger(from) || from < 0) throw invalid('request.invalid', 'after must be a non-negative integer position', { after: 'must be a non-negative integer' });
    const n = pageLimit(limit, 100, 1000);
    const categories = category ? category.split(',').map((c) => c.trim()).filter(Boolean) : undefined;
    const matches: RecordedEvent[] = [];
    let cursor = from;
    let scanned = 0;
    let bytes = 0;
    let done = false;
    while (matches.length < n && scanned < SCAN_LIMIT && bytes < ANSWER_BYTES) {
      // A batch shorter than asked may have stopped at its byte bound: only an empty one ends the log.
      const batch = await this.events.readAll({ after: cursor, maxCount: 500, maxBytes: ANSWER_BYTES, filter: { categories } });
      if (!batch.length) {
        done = true;
        break;
      }
      for (const e of batch) {
        scanned++;
        cursor = e.position;
        if (actor && e.metadata.actor.id !== actor && e.metadata.actor.via !== actor) continue;
        matches.push(e);
        bytes += JSON.stringify(e.data).length;
        if (matches.length === n || bytes >= ANSWER_BYTES) break;
      }
    }
    const more = !done && (matches.length === n || scanned >= SCAN_LIMIT || bytes >= ANSWER_BYTES);
    return { entries: matches.map(entry), metadata: more ? { after: cursor } : {} };
  }
}
