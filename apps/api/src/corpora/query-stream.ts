import { Logger } from '@nestjs/common';
import type { Response } from 'express';
import type { QueryStreamEvent } from '@lib/generation';
import { CallerAborted } from '@lib/llms';
import { DomainError } from '@lib/platform';

const log = new Logger('query-stream');

/**
 * Writes a query's events as server-sent events in the reference's framing (`event:<type>` and `data:<json>`
 * repeating `type`). Past the headers a failure can only be an event: `error` with its message, then `end`.
 * A client that went away is not written to; its model call was cancelled through the abort signal.
 */
export async function writeQueryStream(res: Response, events: AsyncIterable<QueryStreamEvent>, requestId: string): Promise<void> {
  res.status(200).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  const send = (event: { type: string }) => res.write(`event:${event.type}\ndata:${JSON.stringify(event)}\n\n`);
  // The model or the scorer may think for a while: a comment line keeps proxies from closing an idle stream.
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  try {
    for await (const event of events) {
      if (res.destroyed) break;
      send(event);
    }
  } catch (e) {
    if (!(e instanceof CallerAborted) && !res.destroyed) {
      if (!(e instanceof DomainError)) log.error(`query stream ${requestId} failed: ${(e as Error).stack ?? String(e)}`);
      send({ type: 'error', messages: [e instanceof DomainError ? e.message : 'Internal server error.'], request_id: requestId } as { type: string });
      send({ type: 'end' });
    }
  } finally {
    clearInterval(heartbeat);
    if (!res.destroyed) res.end();
  }
}
