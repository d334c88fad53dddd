import { DomainError } from '../kernel/errors';
import type { RecordedEvent } from './events';
import type { Subscription } from './event-store.port';

const CLOSED = Symbol('closed');

/** What one page of a subscription to the log holds at most (plus one event): the sources' byte bound. */
export const SUBSCRIPTION_PAGE_BYTES = 8 * 2 ** 20;

export interface CatchUpSource {
  /**
   * Events strictly after `after` (a position or revision), in order, at most `pageSize`, and fewer where they are
   * large (a byte bound): a page shorter than asked is not taken for the end, only an empty one is.
   */
  readPage(after: number, pageSize: number): Promise<RecordedEvent[]>;
  /** Resolves when something after `after` may exist, or after `timeoutMs`. */
  waitForMore(after: number, timeoutMs: number): Promise<void>;
  /** Current end of the source, read once when the subscription starts. */
  head(): Promise<number>;
  cursorOf(event: RecordedEvent): number;
}

/**
 * A catch-up subscription built on paged reads: each page starts strictly after the last delivered event, so
 * the switch from history to live can neither skip nor repeat an event (G5), whatever appends race with it.
 */
export function catchUpSubscription(source: CatchUpSource, start: number, pageSize = 500): Subscription {
  let closed = false;
  let wake: (() => void) | undefined;
  let resolveCaughtUp!: () => void;
  const caughtUp = new Promise<void>((r) => (resolveCaughtUp = r));
  const headAtStart = source.head();

  /**
   * A store that cannot be reached for a while (a database server restarting: `unavailable`) is waited for, from the
   * same cursor, so the subscriber neither fails nor misses anything; other errors end the subscription as before.
   */
  let retryMs = 0;
  async function patiently<T>(read: () => Promise<T>): Promise<T | typeof CLOSED> {
    for (;;) {
      if (closed) return CLOSED;
      try {
        const value = await read();
        retryMs = 0;
        return value;
      } catch (e) {
        if (!(e instanceof DomainError && e.kind === 'unavailable')) throw e;
        retryMs = Math.min(Math.max(retryMs * 2, 100), 5_000);
        await Promise.race([new Promise((r) => setTimeout(r, retryMs).unref()), new Promise<void>((r) => (wake = r))]);
      }
    }
  }
  const headAtStartPatiently = headAtStart.catch(() => patiently(() => source.head()));
  // An unhandled rejection of the first read is taken over by the retry above.
  headAtStart.catch(() => undefined);

  async function* iterate(): AsyncGenerator<RecordedEvent> {
    let cursor = start;
    const target = await headAtStartPatiently;
    if (target === CLOSED) return;
    if (cursor >= target) resolveCaughtUp();
    while (!closed) {
      // With a filter, the last delivered event may be far behind what was scanned: waiting for "anything
      // after the cursor" would then return at once, forever. Wait for something after the scanned head.
      const scanned = await patiently(() => source.head());
      const page = await patiently(() => source.readPage(cursor, pageSize));
      if (scanned === CLOSED || page === CLOSED) return;
      for (const event of page) {
        if (closed) return;
        cursor = source.cursorOf(event);
        yield event;
        if (cursor >= target) resolveCaughtUp();
      }
      // A short page may have stopped at the source's byte bound: read on until one comes back empty.
      if (page.length === 0) {
        resolveCaughtUp();
        if (closed) return;
        await Promise.race([source.waitForMore(Math.max(cursor, scanned), 1000).catch(() => undefined), new Promise<void>((r) => (wake = r))]);
      }
    }
  }

  const generator = iterate();
  return {
    caughtUp,
    [Symbol.asyncIterator]: () => generator,
    async close() {
      closed = true;
      wake?.();
      await generator.return(undefined);
    },
  };
}
