import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Authenticator } from '@lib/auth';
import { loadConfig } from '@lib/platform';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { now, percentile, report, round } from './common';

/**
 * What authentication costs per request: the credential check alone (in process) and a whole authenticated
 * GET over HTTP, for each kind of credential, beside the public health route as the no-auth baseline.
 */
export async function authBench(args: string[]): Promise<void> {
  const n = Number(args[0] ?? 5000);
  const dir = mkdtempSync(join(tmpdir(), 'bench-auth-'));
  const owner = 'zut_bench_key_0123456789abcdefghijkl';
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: owner, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000' });
  const { app, url } = await startApp(config, 'all', createLogger('silent'), () => undefined);
  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as Record<string, any>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  try {
    const asOwner = { 'x-api-key': owner };
    await call('POST', '/v2/corpora', asOwner, { key: 'c1', name: 'C1' });
    const user = await call('POST', '/v2/users', asOwner, { email: 'u@example.com', username: 'u', corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
    const query = await call('POST', '/v2/api_keys', asOwner, { name: 'q', api_key_role: 'serving', corpus_keys: ['c1'] });
    const client = await call('POST', '/v2/app_clients', asOwner, { type: 'client_credentials', name: 'c', corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
    const token = await call('POST', '/oauth/token', {}, { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret });
    const credentials: [string, Record<string, string>][] = [
      ['bootstrap key (any form)', asOwner],
      ['personal key', { 'x-api-key': user.api_key }],
      ['query key (bounded by creator)', { 'x-api-key': query.secret_key }],
      ['OAuth bearer token', { authorization: `Bearer ${token.access_token}` }],
    ];
    const authenticator = app.get(Authenticator);
    const rows: Record<string, unknown>[] = [];
    const health: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = now();
      await fetch(`${url}/health`).then((r) => r.text());
      health.push(now() - t);
    }
    rows.push({ credential: 'none (GET /health, public)', 'check p50 µs': '-', 'check p99 µs': '-', 'HTTP p50 ms': round(percentile(health, 50), 3), 'HTTP p99 ms': round(percentile(health, 99), 3) });
    for (const [name, headers] of credentials) {
      const checks: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = now();
        const p = headers.authorization ? await authenticator.bearer(headers.authorization.slice(7)) : await authenticator.apiKey(headers['x-api-key']);
        checks.push(now() - t);
        if (!p) throw new Error(`${name} did not authenticate`);
      }
      const http: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = now();
        await call('GET', '/v2/corpora/c1', headers);
        http.push(now() - t);
      }
      rows.push({
        credential: name,
        'check p50 µs': round(percentile(checks, 50) * 1000, 0),
        'check p99 µs': round(percentile(checks, 99) * 1000, 0),
        'HTTP p50 ms': round(percentile(http, 50), 3),
        'HTTP p99 ms': round(percentile(http, 99), 3),
      });
    }
    report('auth', rows, { requests: `${n} per credential, one client, embedded SQLite read store`, rss: `${round(process.memoryUsage().rss / 2 ** 20, 0)} MB` });
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
