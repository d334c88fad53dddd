import { Inject, Injectable } from '@nestjs/common';
import { errors, jwtVerify, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { Clock, CLOCK } from '@lib/platform';

export const AUTH_OPTIONS = Symbol('AuthOptions');
export interface AuthOptions {
  /** HS256 key for access tokens (configuration, or generated under DATA_DIR). */
  readonly signingKey: string;
  /** The 32-byte secrets key (SECRETS_KEY, or generated under DATA_DIR): keys the bootstrap key's digest. */
  readonly secretsKey: Buffer;
}

/** OAuth 2.0 access tokens are HS256 JWTs that expire 30 minutes after issue (the reference API's lifetime). */
export const TOKEN_LIFETIME_SECONDS = 30 * 60;
const ISSUER = 'agent-retrieval-service';

@Injectable()
export class TokenService {
  private readonly key: Uint8Array;

  constructor(
    @Inject(AUTH_OPTIONS) options: AuthOptions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.key = new TextEncoder().encode(options.signingKey);
  }

  /** `endUser`: a token the app client mints for one of its end users (docs/end-user-sessions.md). */
  async issue(appClientId: string, endUser?: string): Promise<{ accessToken: string; expiresIn: number }> {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const accessToken = await new SignJWT(endUser ? { end_user: endUser } : {})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(appClientId)
      .setIssuer(ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_LIFETIME_SECONDS)
      .setJti(randomUUID())
      .sign(this.key);
    return { accessToken, expiresIn: TOKEN_LIFETIME_SECONDS };
  }

  /** The app client id (and end user) of a valid, unexpired token; undefined for anything else. */
  async verify(token: string): Promise<{ appClientId: string; endUser?: string } | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER, currentDate: this.clock.now() });
      if (typeof payload.sub !== 'string') return undefined;
      return { appClientId: payload.sub, ...(typeof payload.end_user === 'string' ? { endUser: payload.end_user } : {}) };
    } catch (e) {
      if (e instanceof errors.JOSEError || e instanceof TypeError) return undefined;
      throw e;
    }
  }
}
