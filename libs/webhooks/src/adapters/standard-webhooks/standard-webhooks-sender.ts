import { Webhook } from 'standardwebhooks';
import { OutboundHttp, OutboundPolicy, outboundRefusal, ServiceConfig } from '@lib/platform';
import { SendResult, WebhookSender } from '../../application/delivery/webhook-sender.port';

/**
 * Signs with the `standardwebhooks` package (HMAC-SHA256 over `id.timestamp.body`, `v1,<base64>`) and sends
 * through a guarded client of its own, with the webhooks' outbound policy (OUTBOUND_WEBHOOKS_*): every connection,
 * a redirect's too, is checked against it. Redirects are not followed: a receiver answers where it was registered.
 */
export class StandardWebhooksSender extends WebhookSender {
  private readonly http: OutboundHttp;

  constructor(config: ServiceConfig) {
    super();
    this.http = new OutboundHttp(new OutboundPolicy(config.outboundWebhooks));
  }

  async refusal(url: string): Promise<string | undefined> {
    return (await this.http.policy.checkResolved(url))?.message;
  }

  async send({ url, secret, messageId, body, timeoutMs, signal }: Parameters<WebhookSender['send']>[0]): Promise<SendResult> {
    const now = new Date();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'agent-retrieval-service-webhooks/1',
      'webhook-id': messageId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(messageId, now, body),
    };
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const res = await this.http.request(url, { method: 'POST', headers, body, maxRedirections: 0, signal: signal ? AbortSignal.any([timeout, signal]) : timeout });
      // The answer's body is not read into memory: a receiver owes nothing but its status.
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      return { statusCode: res.statusCode };
    } catch (e) {
      const refused = outboundRefusal(e);
      if (refused) return { statusCode: null, error: refused.message };
      if (timeout.aborted) return { statusCode: null, error: `no answer within ${timeoutMs / 1000} s` };
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      return { statusCode: null, error: `${(e as Error).message}${cause?.code ? ` (${cause.code})` : cause?.message ? ` (${cause.message})` : ''}`.slice(0, 300) };
    }
  }

  /** Nest calls it on shutdown, after the deliverer stopped sending (at module destruction). */
  onApplicationShutdown(): Promise<void> {
    return this.http.close();
  }
}
