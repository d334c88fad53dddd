import { importPKCS8, SignJWT } from 'jose';
import { DomainError, outboundRefusal } from '@lib/platform';
import { parseServiceAccountKey } from '../../domain/auth';
import { scrub } from '../../application/provider/upstream-failure.port';

/** Google's OAuth token endpoint, used when a service-account key names none (`token_uri`). */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/**
 * What the Google Gen AI and Anthropic Vertex SDKs ask an auth client for: the headers of each request and the
 * project. Both accept such a client in place of google-auth-library's default chain, which would look for
 * the operator's own credentials (environment, metadata server) instead of the stored ones.
 */
export interface GoogleTokenSource {
  readonly projectId: string | undefined;
  getRequestHeaders(url?: string): Promise<Headers>;
}

/** A stored access token (`vertex_access_token`): sent as it is; when it expires Vertex says so (401 → 502). */
export function staticAccessToken(token: string, project: string | undefined): GoogleTokenSource {
  return { projectId: project, getRequestHeaders: async () => new Headers({ authorization: `Bearer ${token}` }) };
}

/**
 * Access tokens minted from a service-account key with the JWT-bearer grant (RFC 7523), as google-auth does:
 * an RS256 assertion signed with the key, sent to the key's `token_uri` (Google's endpoint when it names none,
 * as Google's Python library reads it), and the token reused until a minute before it expires.
 */
export function serviceAccountTokens(keyJson: string, project: string | undefined, outboundFetch: typeof fetch): GoogleTokenSource {
  const key = parseServiceAccountKey(keyJson);
  if (!key) throw new DomainError('invalid', 'llm.invalid_auth', 'The stored service-account key is not a Google service-account key JSON');
  const tokenUri = key.token_uri ?? GOOGLE_TOKEN_URI;
  let cached: { value: string; until: number } | undefined;
  let pending: Promise<{ value: string; until: number }> | undefined;
  const mint = async () => {
    const now = Math.floor(Date.now() / 1000);
    const signingKey = await importPKCS8(key.private_key, 'RS256');
    const assertion = await new SignJWT({ scope: CLOUD_PLATFORM_SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) })
      .setIssuer(key.client_email)
      .setAudience(tokenUri)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(signingKey);
    const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
    const res = await outboundFetch(tokenUri, { method: 'POST', body: form, signal: AbortSignal.timeout(30_000) }).catch((e: Error) => {
      const refused = outboundRefusal(e);
      if (refused) throw new DomainError('upstream', 'llm.outbound_refused', `The Google token endpoint cannot be called: ${refused.message}`);
      throw new DomainError('upstream', 'llm.google_token_failed', `The Google token endpoint could not be reached: ${scrub((e.cause as Error | undefined)?.message ?? e.message, [key.private_key])}`);
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: string; expires_in?: number; error?: string };
    if (!res.ok || !body.access_token) {
      throw new DomainError('upstream', 'llm.google_token_failed', `The Google token endpoint refused the service-account key (${res.status}${body.error ? `: ${String(body.error).slice(0, 80)}` : ''})`);
    }
    return { value: body.access_token, until: Date.now() + Math.max(0, (body.expires_in ?? 3600) - 60) * 1000 };
  };
  return {
    projectId: project ?? key.project_id,
    async getRequestHeaders() {
      if (!cached || Date.now() >= cached.until) {
        // One mint for concurrent requests.
        pending ??= mint().finally(() => (pending = undefined));
        cached = await pending;
      }
      return new Headers({ authorization: `Bearer ${cached.value}` });
    },
  };
}
