import { createLocalJWKSet, importPKCS8, JSONWebKeySet, jwtVerify, SignJWT } from 'jose';
import { invalid } from '@lib/platform';
import type { ConnectorPlatform, ConnectorPlatformSettings, Inbound, InboundRequest, LiveConnector } from '../../application/connectors/connector-platform.port';
import { header, upstreamFailure } from '../platform-http';

/** Who Google Chat's ID tokens name as their subject email (Chat apps with the endpoint URL as audience). */
const CHAT_SENDER = 'chat@system.gserviceaccount.com';
const CHAT_BOT_SCOPE = 'https://www.googleapis.com/auth/chat.bot';
const KEYS_TTL_MS = 10 * 60_000;

/**
 * Google Chat apps over HTTP: each event carries an ID token (`Authorization: Bearer`) signed by Google, whose
 * audience is the connector's `audience_url`; keys are fetched through the guarded client and cached (a token
 * signed with an unknown key refreshes them, at most once a minute). Replies are posted to the message's thread
 * with `spaces.messages.create`, authenticated as the Chat app's service account (JWT-bearer grant).
 */
export class GoogleChatPlatform implements ConnectorPlatform {
  private keys?: { set: ReturnType<typeof createLocalJWKSet>; at: number };
  private readonly tokens = new Map<string, { value: string; until: number }>();

  constructor(
    private readonly settings: ConnectorPlatformSettings,
    private readonly fetch: typeof globalThis.fetch,
  ) {}

  private async keySet(refresh: boolean): Promise<ReturnType<typeof createLocalJWKSet>> {
    const age = this.keys ? Date.now() - this.keys.at : Infinity;
    if (this.keys && age < KEYS_TTL_MS && !(refresh && age > 60_000)) return this.keys.set;
    const res = await this.fetch(this.settings.gchatJwksUrl, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw await upstreamFailure('Google key endpoint', res);
    this.keys = { set: createLocalJWKSet((await res.json()) as JSONWebKeySet), at: Date.now() };
    return this.keys.set;
  }

  async verify(connector: LiveConnector, req: InboundRequest): Promise<boolean> {
    const auth = header(req, 'authorization') ?? '';
    if (!auth.startsWith('Bearer ')) return false;
    const token = auth.slice(7).trim();
    const options = { issuer: this.settings.gchatIssuer, audience: String(connector.settings.plain.audience_url), currentDate: req.now, algorithms: ['RS256'] };
    for (const refresh of [false, true]) {
      try {
        const { payload } = await jwtVerify(token, await this.keySet(refresh), options);
        return payload.email === CHAT_SENDER && payload.email_verified === true;
      } catch (e) {
        if ((e as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY' || refresh) return false;
      }
    }
    return false;
  }

  parse(_connector: LiveConnector, req: InboundRequest): Inbound {
    const body = (req.body ?? {}) as { type?: string; space?: { name?: string }; message?: { name?: string; text?: string; argumentText?: string; thread?: { name?: string }; sender?: { type?: string } } };
    if (body.type !== 'MESSAGE' || body.message?.sender?.type === 'BOT') return { kind: 'ignore' };
    const space = body.space?.name;
    const message = body.message;
    if (!space || !message?.name) throw invalid('connector.event_parse_failed', 'The Chat event has no space or message name', { message: 'needs space.name and message.name' });
    const thread = message.thread?.name ?? message.name;
    return { kind: 'message', deliveryId: message.name, conversation: thread, text: (message.argumentText ?? message.text ?? '').trim(), replyTo: { space, thread } };
  }

  acknowledgement(): unknown {
    // An empty answer posts nothing: the reply follows through the API once the turn is done.
    return {};
  }

  async reply(connector: LiveConnector, replyTo: Readonly<Record<string, string>>, text: string): Promise<void> {
    const token = await this.accessToken(connector);
    const url = `${this.settings.gchatApiUrl}/v1/${replyTo.space}/messages?messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD`;
    const res = await this.fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ text, thread: { name: replyTo.thread } }), signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw await upstreamFailure('Google Chat spaces.messages.create', res);
  }

  private async accessToken(connector: LiveConnector): Promise<string> {
    const cached = this.tokens.get(connector.connectorId);
    if (cached && Date.now() < cached.until) return cached.value;
    const key = JSON.parse(connector.credentials.service_account_key ?? '{}') as { client_email?: string; private_key?: string; private_key_id?: string; token_uri?: string };
    if (!key.client_email || !key.private_key) throw new Error('the service account key is not available (its agent secret was removed?)');
    const tokenUri = key.token_uri ?? 'https://oauth2.googleapis.com/token';
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ scope: CHAT_BOT_SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) })
      .setIssuer(key.client_email)
      .setAudience(tokenUri)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(await importPKCS8(key.private_key, 'RS256'));
    const res = await this.fetch(tokenUri, { method: 'POST', body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }), signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw await upstreamFailure('Google token endpoint', res);
    const body = (await res.json()) as { access_token?: string; expires_in?: number };
    if (!body.access_token) throw new Error('Google token endpoint gave no access token');
    this.tokens.set(connector.connectorId, { value: body.access_token, until: Date.now() + Math.max(0, (body.expires_in ?? 3600) - 60) * 1000 });
    return body.access_token;
  }
}
