import { Logger } from '@nestjs/common';
import type { Response } from 'express';
import { splitWarnings } from '@lib/retrieval';
import { CallerAborted } from '@lib/llms';
import { DomainError } from '@lib/platform';
import { SseStream } from '../http/sse';

const log = new Logger('query-stream');

/**
 * Writes a query's (or a summary's) events as server-sent events in the reference's framing (`event:<type>` and `data:<json>`
 * repeating `type`). Past the headers a failure can only be an event: `error` with its message, then `end`.
 * A client that went away is not written to; its model call was cancelled through the abort signal.
 */
export async function writeQueryStream(res: Response, events: AsyncIterable<{ readonly type: string }>, requestId: string): Promise<void> {
  const stream = SseStream.open(res);
  const send = (event: { type: string }) => stream.send({ event: event.type, data: JSON.stringify(event) });
  try {
    for await (const event of events) {
      if (stream.closed) break;
      if (event.type === 'end') {
        // Past the headers, notices the reference's warning values cannot say are only logged (docs/search.md).
        const { warnings, notices } = splitWarnings('warnings' in event ? (event.warnings as readonly string[] | undefined) : undefined);
        if (notices.length) log.log(`query stream ${requestId}: ${notices.join(' | ')}`);
        send({ type: 'end', ...(warnings.length ? { warnings } : {}) } as { type: string });
      } else send(event);
    }
  } catch (e) {
    if (!(e instanceof CallerAborted) && !stream.closed) {
      if (!(e instanceof DomainError)) log.error(`query stream ${requestId} failed: ${(e as Error).stack ?? String(e)}`);
      send({ type: 'error', messages: [e instanceof DomainError ? e.message : 'Internal server error.'], request_id: requestId } as { type: string });
      send({ type: 'end' });
    }
  } finally {
    stream.end();
  }
}
