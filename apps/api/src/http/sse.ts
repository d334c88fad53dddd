import type { Response } from 'express';

/** One server-sent event: `data` is written as given (JSON already serialised, or OpenAI's `[DONE]`). */
export interface SseEvent {
  readonly event?: string;
  readonly id?: string | number;
  readonly data: string;
}

/**
 * A server-sent-events response, for every streaming route (query, chat completions, the event feed): the
 * headers that keep proxies from buffering, a comment line every `heartbeatMs` so an idle stream (a model
 * thinking) is not closed by a proxy, framing, and nothing written once the client has gone.
 */
export class SseStream {
  private readonly heartbeat: NodeJS.Timeout;

  private constructor(private readonly res: Response) {
    res.status(200).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.flushHeaders();
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), 15_000);
    this.heartbeat.unref();
    res.once('close', () => clearInterval(this.heartbeat));
  }

  static open(res: Response): SseStream {
    return new SseStream(res);
  }

  /** Whether the client went away (writes are dropped from then on). */
  get closed(): boolean {
    return this.res.destroyed;
  }

  send(e: SseEvent): void {
    this.write(`${e.id !== undefined ? `id:${e.id}\n` : ''}${e.event !== undefined ? `event:${e.event}\n` : ''}data:${e.data}\n\n`);
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
