import { createHash, timingSafeEqual } from 'node:crypto';
import { invalid } from '@lib/platform';
import type { ConnectorPlatform, Inbound, InboundRequest, LiveConnector } from '../../application/connectors/connector-platform.port';
import { header, upstreamFailure } from '../platform-http';

type ZoomBody = { engagement_id?: string; engagementId?: string; message_id?: string; messageId?: string; message?: string | { text?: string }; text?: string; payload?: ZoomBody };

/**
 * Zoom Contact Center's bot connector: deliveries carry the connector's generated token in
 * `x-zoom-connector-token` (compared in constant time); the webhook answers with a typing indicator at once and
 * the agent's answer is POSTed to the connector's `callback_url` (bearer `callback_access_token` when set).
 */
export class ZoomPlatform implements ConnectorPlatform {
  constructor(private readonly fetch: typeof globalThis.fetch) {}

  async verify(connector: LiveConnector, req: InboundRequest): Promise<boolean> {
    const expected = connector.credentials.connector_token;
    const given = header(req, 'x-zoom-connector-token');
    if (!expected || !given) return false;
    // Hashes first: equal lengths for timingSafeEqual, and no length leak.
    const digest = (v: string) => createHash('sha256').update(v).digest();
    return timingSafeEqual(digest(given), digest(expected));
  }

  parse(_connector: LiveConnector, req: InboundRequest): Inbound {
    const raw = (req.body ?? {}) as ZoomBody;
    const body = raw.payload ?? raw;
    const engagement = body.engagement_id ?? body.engagementId;
    const messageId = body.message_id ?? body.messageId;
    const text = typeof body.message === 'string' ? body.message : (body.message?.text ?? body.text);
    if (typeof engagement !== 'string' || !engagement) throw invalid('connector.missing_engagement', 'The Zoom delivery has no engagement_id', { engagement_id: 'is required' });
    if (typeof messageId !== 'string' || !messageId || typeof text !== 'string') throw invalid('connector.event_parse_failed', 'The Zoom delivery needs message_id and a text message', { message: 'needs message_id and text' });
    return { kind: 'message', deliveryId: `${engagement}:${messageId}`, conversation: engagement, text: text.trim(), replyTo: { engagement_id: engagement, message_id: messageId } };
  }

  acknowledgement(connector: LiveConnector, inbound: Inbound): unknown {
    const seconds = Number(connector.settings.plain.typing_duration_seconds ?? 60);
    return inbound.kind === 'message' ? { type: 'typing', engagement_id: inbound.replyTo.engagement_id, typing_duration_seconds: seconds } : {};
  }

  async reply(connector: LiveConnector, replyTo: Readonly<Record<string, string>>, text: string): Promise<void> {
    const token = connector.credentials.callback_access_token;
    const res = await this.fetch(String(connector.settings.plain.callback_url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ engagement_id: replyTo.engagement_id, in_reply_to: replyTo.message_id, message: { type: 'text', text } }),
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) throw await upstreamFailure('Zoom callback', res);
  }
}
