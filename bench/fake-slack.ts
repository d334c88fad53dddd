import { createHmac } from 'node:crypto';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { now } from './common';

/**
 * Slack's Web API `chat.postMessage` (and a Zoom Contact Center callback, `/zoom/callback`) on 127.0.0.1, as the
 * benchmark needs them: answers `{ok: true}` at once and notes when each thread's (engagement's) reply arrived (the test suite's FakePlatforms lives under test/, which a built bench
 * cannot load, and records whole calls, which grows over a long run).
 */
export class FakeSlack {
  /** `channel:thread_ts` (Slack) or `zoom:engagement_id` → arrival time (ms, `now()`) and the text posted. */
  readonly replies = new Map<string, { at: number; text: string; auth: string }>();
  private waiters = new Map<string, () => void>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeSlack> {
    const server = createServer();
    const slack = new FakeSlack(server);
    server.on('request', (req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const at = now();
        const zoom = (req.url ?? '').startsWith('/zoom/callback');
        if (!zoom && !(req.url ?? '').startsWith('/api/chat.postMessage')) return void res.writeHead(404).end();
        const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { channel: string; thread_ts: string; text: string; engagement_id: string; message: { text: string } };
        const thread = zoom ? `zoom:${body.engagement_id}` : `${body.channel}:${body.thread_ts}`;
        slack.replies.set(thread, { at, text: zoom ? body.message.text : body.text, auth: String(req.headers.authorization ?? '') });
        slack.waiters.get(thread)?.();
        slack.waiters.delete(thread);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, ts: body.thread_ts }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return slack;
  }

  get apiUrl(): string {
    return `${this.url}/api`;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves with the reply's arrival time once the thread's (`channel:thread_ts`) reply is posted; rejects after `timeoutMs`. */
  reply(thread: string, timeoutMs = 120_000): Promise<number> {
    const seen = this.replies.get(thread);
    if (seen) return Promise.resolve(seen.at);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply in thread ${thread} after ${timeoutMs} ms`)), timeoutMs);
      this.waiters.set(thread, () => {
        clearTimeout(timer);
        resolve(this.replies.get(thread)!.at);
      });
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** An `app_mention` in a new thread, signed as Slack signs each Events API delivery (v0 HMAC-SHA256). */
export function signedMention(signingSecret: string, appId: string, channel: string, ts: string, text: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ type: 'event_callback', api_app_id: appId, team_id: 'T1', event_id: `Ev${channel}${ts}`, event_time: Math.floor(Date.now() / 1000), event: { type: 'app_mention', user: 'U1', text: `<@UBOT> ${text}`, channel, ts } });
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { body, headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature } };
}
