import { Injectable } from '@nestjs/common';
import { Authenticator } from './authenticator';
import { TokenService } from './tokens';

export type TokenResult =
  | { ok: true; accessToken: string; expiresIn: number }
  | { ok: false; error: 'invalid_request' | 'unsupported_grant_type' | 'invalid_client'; description: string };

const END_USER = /^[A-Za-z0-9._@:-]{1,128}$/;

/** OAuth 2.0 client-credentials grant (RFC 6749 §4.4): an app client's id and secret for a bearer token. */
@Injectable()
export class OAuthTokens {
  constructor(
    private readonly authenticator: Authenticator,
    private readonly tokens: TokenService,
  ) {}

  /** `endUser` (an extension parameter, `end_user`): the token is for one end user of the app (docs/end-user-sessions.md). */
  async grant(params: { grantType?: unknown; clientId?: unknown; clientSecret?: unknown; endUser?: unknown }): Promise<TokenResult> {
    const { grantType, clientId, clientSecret, endUser } = params;
    if (endUser !== undefined && (typeof endUser !== 'string' || !END_USER.test(endUser))) return { ok: false, error: 'invalid_request', description: 'end_user must be 1 to 128 letters, digits and . _ @ : -' };
    if (typeof grantType !== 'string' || !grantType) return { ok: false, error: 'invalid_request', description: 'grant_type is required' };
    if (grantType !== 'client_credentials') return { ok: false, error: 'unsupported_grant_type', description: 'Only grant_type=client_credentials is supported' };
    if (typeof clientId !== 'string' || typeof clientSecret !== 'string' || !clientId || !clientSecret) {
      return { ok: false, error: 'invalid_request', description: 'client_id and client_secret are required' };
    }
    const client = await this.authenticator.clientCredentials(clientId, clientSecret);
    if (!client) return { ok: false, error: 'invalid_client', description: 'Unknown client or wrong secret' };
    const { accessToken, expiresIn } = await this.tokens.issue(client.id, endUser as string | undefined);
    return { ok: true, accessToken, expiresIn };
  }
}
