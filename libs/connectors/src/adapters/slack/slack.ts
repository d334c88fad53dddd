import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalid } from '@lib/platform';
import type { ConnectorPlatform, ConnectorPlatformSettings, Inbound, InboundRequest, LiveConnector } from '../../application/connectors/connector-platform.port';
import { header, upstreamFailure } from '../platform-http';

/** Slack refuses signatures older than five minutes; so does this (replays of a captured request). */
const MAX_SKEW_SECONDS = 300;

interface SlackEvent {
  type?: string;
  subtype?: string;
  bot_id?: string;
  text?: string;
  channel?: string;
  ts?: string;
  thread_ts?: string;
}

/**
 * Slack's Events API: requests signed with the app's signing secret (`v0=` HMAC-SHA256 of `v0:<timestamp>:<raw
 * body>`), the URL verification challenge answered, mentions answered in their thread by `chat.postMessage`.
 */
export class SlackPlatform implements ConnectorPlatform {
  constructor(
    private readonly settings: ConnectorPlatformSettings,
    private readonly fetch: typeof globalThis.fetch,
  ) {}

  async verify(connector: LiveConnector, req: InboundRequest): Promise<boolean> {
    const secret = connector.credentials.signing_secret;
    const timestamp = header(req, 'x-slack-request-timestamp') ?? '';
    const signature = header(req, 'x-slack-signature') ?? '';
    if (!secret || !/^\d{1,12}$/.test(timestamp) || !signature.startsWith('v0=')) return false;
    if (Math.abs(req.now.getTime() / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) return false;
    const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(req.rawBody).digest('hex')}`);
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  parse(connector: LiveConnector, req: InboundRequest): Inbound {
    const body = (req.body ?? {}) as { type?: string; challenge?: string; api_app_id?: string; event?: SlackEvent };
    if (body.type === 'url_verification') return { kind: 'respond', body: { challenge: String(body.challenge ?? '') } };
    if (body.type !== 'event_callback') return { kind: 'ignore' };
    // An app's events carry its id: another app's events sent here are not this connector's.
    if (body.api_app_id !== connector.settings.plain.api_app_id) return { kind: 'ignore' };
    const event = body.event ?? {};
    // The bot's own messages (and edits, joins) come back as events: answering them would loop.
    if (event.bot_id || event.subtype) return { kind: 'ignore' };
    const mention = event.type === 'app_mention';
    const threadReply = event.type === 'message' && !!event.thread_ts && event.thread_ts !== event.ts && connector.settings.plain.respond_to_thread_replies === true;
    if (!mention && !threadReply) return { kind: 'ignore' };
    if (!event.channel || !event.ts) throw invalid('connector.event_parse_failed', 'The Slack event has no channel or ts', { event: 'needs channel and ts' });
    const thread = event.thread_ts ?? event.ts;
    const text = (event.text ?? '').replace(/<@[A-Z0-9]+>/g, '').trim();
    // Keyed by the message (channel + ts), not the event id: a mention arrives as app_mention and message events.
    return { kind: 'message', deliveryId: `${event.channel}:${event.ts}`, conversation: `${event.channel}:${thread}`, text, replyTo: { channel: event.channel, thread_ts: thread }, onlyInKnownConversation: !mention };
  }

  acknowledgement(_connector: LiveConnector, inbound: Inbound): unknown {
    return inbound.kind === 'respond' ? inbound.body : {};
  }

  async reply(connector: LiveConnector, replyTo: Readonly<Record<string, string>>, text: string): Promise<void> {
    const token = connector.credentials.bot_token;
    if (!token) throw new Error('the bot token is not available (its agent secret was removed?)');
    const res = await this.fetch(`${this.settings.slackApiUrl}/chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ channel: replyTo.channel, thread_ts: replyTo.thread_ts, text }),
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) throw await upstreamFailure('Slack chat.postMessage', res);
    const body = (await res.json().catch(() => ({}))) as { ok?: boolean; error?: string };
    if (!body.ok) throw new Error(`Slack chat.postMessage refused: ${String(body.error ?? 'unknown error').slice(0, 100)}`);
  }
}
