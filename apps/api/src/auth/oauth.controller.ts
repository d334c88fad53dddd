import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { OAuthTokens } from '@lib/auth';
import { AuthFailures, rateLimited } from '../http/auth-failures';
import { Policy } from '../http/policy';
import { OpenApi } from '../openapi/openapi.decorator';

/**
 * Client id and secret from HTTP Basic (RFC 6749 §2.3.1) when the body does not carry them; a header that is
 * not well-formed Basic credentials yields an id and secret no client has, so it is answered like any wrong
 * secret (401 invalid_client) rather than as a server error.
 */
function basicCredentials(req: Request): { clientId?: string; clientSecret?: string } {
  const header = req.header('authorization');
  if (!header?.startsWith('Basic ')) return {};
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return { clientId: '', clientSecret: '' };
  try {
    return { clientId: decodeURIComponent(decoded.slice(0, i)), clientSecret: decodeURIComponent(decoded.slice(i + 1)) };
  } catch {
    return { clientId: '', clientSecret: '' };
  }
}

/**
 * Client-credentials tokens: `POST /oauth2/token` (form-encoded, as the reference's docs post it) and
 * `POST /oauth/token` (JSON). Errors carry RFC 6749's `error` and `error_description` beside the usual
 * `messages` and `request_id`.
 */
@Controller()
export class OAuthController {
  constructor(
    private readonly tokens: OAuthTokens,
    private readonly failures: AuthFailures,
  ) {}

  @OpenApi({ freeBody: true, statuses: [400, 401] })
  @Post('oauth2/token')
  @Policy('public')
  @HttpCode(200)
  form(@Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    return this.token(body, req, res);
  }

  @OpenApi({ freeBody: true, statuses: [400, 401] })
  @Post('oauth/token')
  @Policy('public')
  @HttpCode(200)
  json(@Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    return this.token(body, req, res);
  }

  private async token(body: unknown, req: Request, res: Response) {
    const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const basic = basicCredentials(req);
    const clientId = b.client_id ?? basic.clientId;
    const address = req.ip ?? 'unknown';
    // Wrong client secrets count against the address like wrong API keys (one limit for every credential).
    const blocked = await this.failures.blockedFor(address);
    const result = await this.tokens.grant({ grantType: b.grant_type, clientId, clientSecret: b.client_secret ?? basic.clientSecret, endUser: b.end_user });
    res.setHeader('cache-control', 'no-store');
    if (result.ok) {
      this.failures.admit(address, `client:${String(clientId)}`, blocked, 'failed authentications from this address');
      return { access_token: result.accessToken, token_type: 'Bearer', expires_in: result.expiresIn };
    }
    if (result.error === 'invalid_client') {
      if (blocked) throw rateLimited(blocked, 'failed authentications from this address');
      await this.failures.failed(address);
    }
    res.status(result.error === 'invalid_client' ? 401 : 400);
    if (result.error === 'invalid_client') res.setHeader('www-authenticate', 'Basic realm="oauth"');
    return { error: result.error, error_description: result.description, messages: [result.description], request_id: req.requestId };
  }
}
