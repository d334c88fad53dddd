import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A delivery as the receiver got it: the raw body (what a signature covers) and the headers. */
export interface ReceivedWebhook {
  readonly path: string;
  readonly body: string;
  readonly headers: Record<string, string>;
  readonly at: number;
}

/** What the receiver does with the next request: answer with a status, or hold it open until `release()`. */
export type Reply = number | 'hold';

/**
 * A webhook receiver on 127.0.0.1 (random port) for the tests of docs/webhooks.md: it records every request and
 * answers from a queue of replies per path, then `fallback` (200).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  fallback: Reply = 200;
  private readonly replies = new Map<string, Reply[]>();
  private readonly held: ServerResponse[] = [];
  url = '';

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => void receiver.handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return receiver;
  }

  /** The next requests to `path` get these replies, in order. */
  reply(path: string, ...replies: Reply[]): this {
    this.replies.set(path, [...(this.replies.get(path) ?? []), ...replies]);
    return this;
  }

  /** Requests to one path (each test registers its own). */
  at(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Answers the held requests (their sender may be gone). */
  release(status = 200): void {
    for (const res of this.held.splice(0)) if (!res.writableEnded) res.writeHead(status).end();
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]));
    this.received.push({ path: req.url ?? '/', body: Buffer.concat(chunks).toString('utf8'), headers, at: Date.now() });
    const reply = this.replies.get(req.url ?? '/')?.shift() ?? this.fallback;
    if (reply === 'hold') this.held.push(res);
    else res.writeHead(reply, { 'content-type': 'text/plain' }).end(reply < 300 ? 'ok' : 'nope');
  }
}
