import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import type { FakeLlmServer } from './fake-llm-server';

/** A Google service-account key made for a test: the JSON a user would paste, and the public half to trust. */
export function makeServiceAccountKey(options: { email?: string; project?: string; tokenUri: string }): { keyJson: string; publicKeyPem: string; email: string; privateKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const email = options.email ?? 'svc@test-project.iam.gserviceaccount.com';
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const keyJson = JSON.stringify({
    type: 'service_account',
    project_id: options.project ?? 'test-project',
    private_key_id: 'kid-1',
    private_key: privateKeyPem,
    client_email: email,
    client_id: '1234567890',
    token_uri: options.tokenUri,
  });
  return { keyJson, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), email, privateKeyPem };
}

/**
 * Google's OAuth token endpoint for the JWT-bearer grant (RFC 7523), on a fake server's `path`: the assertion
 * must be an RS256 JWT signed by a trusted service account, addressed to this endpoint, unexpired, asking for
 * the cloud-platform scope. Issued access tokens are remembered, so the model endpoints can check them.
 */
export class FakeGoogleTokenEndpoint {
  private readonly trusted = new Map<string, string>();
  /** Access token → the service account it was issued to. */
  readonly issued = new Map<string, string>();
  /** Every assertion received, for tests that check what was sent. */
  readonly assertions: string[] = [];

  constructor(
    server: FakeLlmServer,
    readonly path = '/token',
  ) {
    server.route('POST', path, (req) => {
      const form = new URLSearchParams(req.raw.toString('utf8'));
      return this.exchange(form, `${server.url}${path}`);
    });
  }

  trust(email: string, publicKeyPem: string): this {
    this.trusted.set(email, publicKeyPem);
    return this;
  }

  private exchange(form: URLSearchParams, audience: string): { status: number; json: unknown } {
    const refuse = (why: string) => ({ status: 400, json: { error: 'invalid_grant', error_description: why } });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse('grant_type must be jwt-bearer');
    const assertion = form.get('assertion') ?? '';
    this.assertions.push(assertion);
    const [head, payload, signature] = assertion.split('.');
    if (!head || !payload || !signature) return refuse('malformed assertion');
    const header = JSON.parse(Buffer.from(head, 'base64url').toString()) as { alg?: string };
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { iss?: string; aud?: string; scope?: string; exp?: number; iat?: number };
    const pem = claims.iss ? this.trusted.get(claims.iss) : undefined;
    if (header.alg !== 'RS256' || !pem) return refuse('unknown service account or algorithm');
    if (!verify('RSA-SHA256', Buffer.from(`${head}.${payload}`), createPublicKey(pem), Buffer.from(signature, 'base64url'))) return refuse('bad signature');
    const now = Date.now() / 1000;
    if (claims.aud !== audience) return refuse(`audience must be ${audience}`);
    if (!claims.exp || claims.exp < now || !claims.iat || claims.iat > now + 60) return refuse('expired or future assertion');
    if (!claims.scope?.split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) return refuse('scope must include cloud-platform');
    const token = `ya29.fake-${this.issued.size + 1}-${Math.random().toString(36).slice(2)}`;
    this.issued.set(token, claims.iss!);
    return { status: 200, json: { access_token: token, expires_in: 3599, token_type: 'Bearer' } };
  }
}
