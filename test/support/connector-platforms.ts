import { createHmac } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, JWK, KeyLike, SignJWT } from 'jose';

/** A call the service made to a platform's API. */
export interface PlatformCall {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: any;
}

/**
 * Plays Slack's Web API, Google's key and token endpoints with the Chat API, and a Zoom Contact Center callback
 * on 127.0.0.1: records each call, and fails the next `failNext[path]` calls to a path with a 500.
 */
export class FakePlatforms {
  readonly calls: PlatformCall[] = [];
  readonly failNext: Record<string, number> = {};
  private jwks: { keys: JWK[] } = { keys: [] };
  private signingKey!: KeyLike;
  readonly issuedTokens = new Set<string>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakePlatforms> {
    const server = createServer();
    const platforms = new FakePlatforms(server);
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    platforms.signingKey = privateKey;
    platforms.jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'google-1', alg: 'RS256', use: 'sig' }] };
    server.on('request', (req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(parts).toString('utf8');
        const path = (req.url ?? '/').split('?')[0];
        const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        if (path === '/jwks') return send(200, platforms.jwks);
        if (path === '/token') {
          const token = `ya29.chat-${platforms.issuedTokens.size + 1}`;
          platforms.issuedTokens.add(token);
          return send(200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
        }
        let body: unknown = raw;
        try {
          body = JSON.parse(raw);
        } catch {
          /* not JSON */
        }
        platforms.calls.push({ path: req.url ?? '/', headers: req.headers, body });
        if ((platforms.failNext[path] ?? 0) > 0) {
          platforms.failNext[path]--;
          return send(500, { ok: false, error: 'internal_error' });
        }
        return send(200, path.endsWith('chat.postMessage') ? { ok: true, ts: '2.0' } : { name: 'spaces/AAA/messages/reply' });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return platforms;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The service's settings that point it here. */
  get env(): Record<string, string> {
    return { SLACK_API_URL: `${this.url}/api`, GOOGLE_CHAT_API_URL: this.url, GOOGLE_CHAT_JWKS_URL: `${this.url}/jwks`, GOOGLE_CHAT_ISSUER: 'https://accounts.google.com' };
  }

  callsTo(path: string): PlatformCall[] {
    return this.calls.filter((c) => c.path.split('?')[0] === path);
  }

  /** A Google Chat ID token as Google signs it (or with another key: `forge`). */
  async chatToken(audience: string, opts: { forge?: boolean; expiredSecondsAgo?: number } = {}): Promise<string> {
    const key = opts.forge ? (await generateKeyPair('RS256')).privateKey : this.signingKey;
    const now = Math.floor(Date.now() / 1000) - (opts.expiredSecondsAgo ? opts.expiredSecondsAgo + 3600 : 0);
    return new SignJWT({ email: 'chat@system.gserviceaccount.com', email_verified: true })
      .setProtectedHeader({ alg: 'RS256', kid: 'google-1', typ: 'JWT' })
      .setIssuer('https://accounts.google.com')
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(key);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** Slack's request signing (v0): what Slack sends with each Events API delivery. */
export function slackHeaders(signingSecret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  const signature = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature };
}
