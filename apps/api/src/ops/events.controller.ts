import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { categoryOf, EventFilter, invalid, LEASE_CATEGORY, RecordedEvent } from '@lib/platform';
import type { Infrastructure } from '../../../infrastructure/infrastructure';
import { pageLimit } from '../http/paging';
import { Policy } from '../http/policy';
import { OpenApi } from '../openapi/openapi.decorator';
import { SseStream } from '../http/sse';
import { INFRASTRUCTURE } from '../tokens';
import { redact } from './redact';

/**
 * A page holds at most this much of the log's JSON (plus one event): a thousand events of large documents (tens
 * of MB each, with their vectors) would be gigabytes in one answer. The page then ends early, with `after`.
 */
export const PAGE_BYTES = 16 * 2 ** 20;

const view = (e: RecordedEvent) => ({
  position: e.position,
  id: e.id,
  stream_id: e.streamId,
  revision: e.revision,
  type: e.type,
  data: redact(e.data),
  metadata: e.metadata,
  recorded_at: e.recordedAt,
});

function position(raw: string | undefined, name: string): number {
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw invalid('request.invalid', `${name} must be a non-negative integer position`, { [name]: 'must be a non-negative integer' });
  return n;
}

const list = (raw: string | string[] | undefined): string[] | undefined => {
  const items = (Array.isArray(raw) ? raw : raw ? [raw] : []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  return items.length ? items : undefined;
};

/** Lease renewals are bookkeeping of the worker wing: shown only to a caller who asks for `category=lease`. */
const shown = (filter: EventFilter) => (e: RecordedEvent) => !!filter.categories || categoryOf(e.streamId) !== LEASE_CATEGORY;

/**
 * The global event log for downstream consumers: a page from a position, or a live server-sent-event feed
 * that resumes from `Last-Event-ID`. Owners and administrators only (`audit.read`); credential digests are redacted.
 */
@Controller('v2/events')
export class EventsController {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  @Get()
  @Policy('audit.read')
  async page(@Query('after') after?: string, @Query('limit') limit?: string, @Query('category') category?: string | string[], @Query('type') type?: string | string[]) {
    const n = pageLimit(limit, 100, 1000);
    const filter: EventFilter = { categories: list(category), types: list(type) };
    const events = await this.infra.events.readAll({ after: position(after, 'after'), maxCount: n, maxBytes: PAGE_BYTES, filter });
    const last = events[events.length - 1];
    // A page cut short by its bytes says where the next starts as a full one does; so does one left with fewer
    // events than read (leases hidden).
    const more = last !== undefined && (events.length === n || (last.position < (await this.infra.events.headPosition()) && (await this.hasAfter(last.position, filter))));
    return { events: events.filter(shown(filter)).map(view), metadata: more ? { after: last.position } : {} };
  }

  /** Whether an event of the filter follows: a read of one (a short page at the log's head needs none). */
  private async hasAfter(position: number, filter: EventFilter): Promise<boolean> {
    return (await this.infra.events.readAll({ after: position, maxCount: 1, filter })).length > 0;
  }

  @OpenApi({ stream: true })
  @Get('stream')
  @Policy('audit.read')
  async stream(
    @Req() req: Request,
    @Res() res: Response,
    @Query('after') after?: string,
    @Query('category') category?: string | string[],
    @Query('type') type?: string | string[],
  ): Promise<void> {
    const from = position(req.header('last-event-id') ?? after, 'after');
    const filter: EventFilter = { categories: list(category), types: list(type) };
    const visible = shown(filter);
    const sub = this.infra.events.subscribeToAll({ after: from, filter });
    const stream = SseStream.open(res);
    req.on('close', () => void sub.close());
    void sub.caughtUp.then(() => stream.send({ event: 'caught_up', data: '{"type":"caught_up"}' }));
    try {
      for await (const e of sub) {
        if (stream.closed) break;
        if (visible(e)) await stream.paced({ id: e.position, event: e.type, data: JSON.stringify(view(e)) });
      }
    } finally {
      stream.end();
    }
  }
}
