import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import type { TestApp } from './test-app';

export interface Roles {
  api_roles?: string[];
  corpus_roles?: { corpus_key: string; role: string }[];
  agent_roles?: { agent_key: string; role: string }[];
}

async function ok(app: TestApp, method: string, path: string, body: unknown, key = app.key, expected = [200, 201, 204]) {
  const res = await app.call(method, path, body, { 'x-api-key': key });
  if (!expected.includes(res.status)) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a user with roles (as the owner) and returns its first personal key. */
export async function createUser(app: TestApp, username: string, roles: Roles): Promise<string> {
  const body = await ok(app, 'POST', '/v2/users', { email: `${username}@example.com`, username, ...roles });
  return body.api_key as string;
}

/** Creates an API key with `asKey` and returns id and the full key. */
export async function createKey(app: TestApp, body: Record<string, unknown>, asKey = app.key): Promise<{ id: string; secret_key: string }> {
  return ok(app, 'POST', '/v2/api_keys', body, asKey);
}

export async function createClient(app: TestApp, name: string, roles: Roles): Promise<{ id: string; client_id: string; client_secret: string }> {
  return ok(app, 'POST', '/v2/app_clients', { type: 'client_credentials', name, ...roles });
}

/** A client-credentials token from the JSON token endpoint. */
export async function tokenFor(app: TestApp, client: { client_id: string; client_secret: string }): Promise<string> {
  const res = await fetch(`${app.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`token → ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A token an app client mints for one of its end users (`end_user`, docs/end-user-sessions.md). */
export async function endUserTokenFor(app: TestApp, client: { client_id: string; client_secret: string }, endUser: string): Promise<string> {
  const res = await fetch(`${app.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret, end_user: endUser }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`end-user token → ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A token for an existing app client, correctly signed with the service's key, that expired a minute ago. */
export async function expiredTokenFor(app: TestApp, appClientId: string): Promise<string> {
  const key = new TextEncoder().encode(readFileSync(join(app.dataDir, 'oauth-signing-key'), 'utf8').trim());
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(appClientId)
    .setIssuer('agent-retrieval-service')
    .setIssuedAt(now - 3600)
    .setExpirationTime(now - 60)
    .sign(key);
}

export const asKey = (key: string) => ({ 'x-api-key': key });
export const asBearer = (token: string) => ({ 'x-api-key': '', authorization: `Bearer ${token}` });
