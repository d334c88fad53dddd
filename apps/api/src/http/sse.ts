import type { Response } from 'express';

/** One server-sent event: `data` is written as given (JSON already serialised, or OpenAI's `[DONE]`). */
export interface SseEvent {
  readonly event?: string;
  readonly id?: string | number;
  readonly data: string;
}

/** How long a stream waits for a client that reads nothing before it closes it (its subscription and buffer go too). */
export const SSE_STALL_MS = 120_000;

/**
 * A server-sent-events response, for every streaming route (query, chat completions, the event feed): the
 * headers that keep proxies from buffering, a comment line every `heartbeatMs` so an idle stream (a model
 * thinking) is not closed by a proxy, framing, and nothing written once the client has gone.
 *
 * A route that relays something long (the event log from a position, a session's history, an upstream's chunks)
 * sends with {@link SseStream.paced}: it waits while the socket's buffer is full, so a client that reads slowly
 * holds back the reading of the log (or the upstream) instead of the server buffering all of it in memory.
 */
export class SseStream {
  private readonly heartbeat: NodeJS.Timeout;

  private constructor(
    private readonly res: Response,
    private readonly stallMs: number,
    status: number,
  ) {
    res.status(status).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.flushHeaders();
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), 15_000);
    this.heartbeat.unref();
    res.once('close', () => clearInterval(this.heartbeat));
  }

  /** `status`: 200, or 201 for a stream that answers a creation (a session input, as the reference lists). */
  static open(res: Response, stallMs = SSE_STALL_MS, status = 200): SseStream {
    return new SseStream(res, stallMs, status);
  }

  /** Whether the client went away (writes are dropped from then on). */
  get closed(): boolean {
    return this.res.destroyed;
  }

  send(e: SseEvent): void {
    this.write(`${e.id !== undefined ? `id:${e.id}\n` : ''}${e.event !== undefined ? `event:${e.event}\n` : ''}data:${e.data}\n\n`);
  }

  /**
   * Sends, then, if the socket's buffer is past its mark, waits until it drains or the client goes. A client that
   * drains nothing for the stall time is disconnected.
   */
  async paced(e: SseEvent): Promise<void> {
    this.send(e);
    if (this.res.destroyed || !this.res.writableNeedDrain) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(stall);
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      const stall = setTimeout(() => {
        done();
        this.res.destroy();
      }, this.stallMs);
      this.res.once('drain', done);
      this.res.once('close', done);
    });
  }

  /** Ends the stream, after a last event if given. */
  end(last?: SseEvent): void {
    clearInterval(this.heartbeat);
    if (last) this.send(last);
    if (!this.res.destroyed) this.res.end();
  }

  private write(text: string): void {
    if (!this.res.destroyed) this.res.write(text);
  }
}
