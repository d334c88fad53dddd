import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase, SqliteEventStore } from '@lib/platform/sqlite';
import { asKey } from './support/auth-fixtures';
import { startTestApp, TestApp } from './support/test-app';
import { filesHeldOpen } from './support/open-files';

/** A key a person chose: short and guessable, exactly what must not be recoverable from the event log. */
const CHOSEN = 'correct-horse-battery-staple';

/** Every form in which the key, or a plain digest of it, could show. */
function forms(secret: string): string[] {
  const sha = createHash('sha256').update(secret).digest();
  return [secret, sha.toString('hex'), sha.toString('base64'), sha.toString('base64url'), sha.toString('base64').replace(/=+$/, '')];
}

async function allEvents(app: TestApp, key: string): Promise<{ text: string; events: { stream_id: string; type: string }[] }> {
  const events: { stream_id: string; type: string }[] = [];
  let text = '';
  for (let after = 0; ; ) {
    const page = await app.call('GET', `/v2/events?after=${after}&limit=1000`, undefined, asKey(key));
    expect(page.status).toBe(200);
    text += JSON.stringify(page.body);
    events.push(...page.body.events);
    if (page.body.metadata.after === undefined) return { text, events };
    after = page.body.metadata.after;
  }
}

/** The raw bytes of every database file under the data dir (the log, read models, WAL). */
function storeBytes(dataDir: string): string {
  return readdirSync(dataDir)
    .filter((f) => /^(service|events)\.db/.test(f))
    .map((f) => readFileSync(join(dataDir, f)).toString('latin1'))
    .join('\n');
}

const ownerEvents = (events: { stream_id: string; type: string }[]) => events.filter((e) => e.stream_id === 'user-owner' || e.stream_id === 'apikey-aky_owner').map((e) => e.type);

describe('the bootstrap key leaves no trace that could be guessed offline', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-bootstrap-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('writes neither ADMIN_API_KEY nor a plain digest of it into any event or file of the store, and restarts without new owner events', async () => {
    const first = await startTestApp({ dataDir, env: { ADMIN_API_KEY: CHOSEN } });
    try {
      expect((await first.call('GET', '/v2/users/owner', undefined, asKey(CHOSEN))).status).toBe(200);
      const { text, events } = await allEvents(first, CHOSEN);
      expect(ownerEvents(events)).toEqual(['UserCreated', 'ApiKeyCreated']);
      for (const form of forms(CHOSEN)) expect(text).not.toContain(form);
    } finally {
      await first.started.app.close();
    }
    // Closed means closed: no thread of the service still has a file of the dir open.
    expect(filesHeldOpen(dataDir)).toEqual([]);
    const bytes = storeBytes(dataDir);
    for (const form of forms(CHOSEN)) expect(bytes).not.toContain(form);

    const second = await startTestApp({ dataDir, env: { ADMIN_API_KEY: CHOSEN } });
    try {
      expect((await second.call('GET', '/v2/corpora', undefined, asKey(CHOSEN))).status).toBe(200);
      expect((await second.call('GET', '/v2/corpora', undefined, asKey('correct-horse-battery-stapler'))).status).toBe(401);
      expect(ownerEvents((await allEvents(second, CHOSEN)).events)).toEqual(['UserCreated', 'ApiKeyCreated']);
    } finally {
      await second.started.app.close();
    }
  });
});

describe('a store bootstrapped before digests were keyed', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-bootstrap-legacy-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('still lets the owner in, and the next start replaces the plain digest by a keyed one', async () => {
    const plain = createHash('sha256').update(CHOSEN).digest('hex');
    // The events exactly as the bootstrap wrote them then: a plain digest and no digestKind.
    const sqlite = new SqliteDatabase({ path: join(dataDir, 'service.db') });
    const store = new SqliteEventStore(sqlite);
    const metadata = { actor: { type: 'system' as const, id: 'bootstrap' }, requestId: 'bootstrap-1', correlationId: 'bootstrap-1', causationId: `bootstrap:${plain}`, schemaVersion: 1 };
    const grants = { apiRoles: [], corpusRoles: [], agentRoles: [] };
    await store.append('user-owner', [{ id: '3f0b8c1e-0000-5000-8000-000000000001', type: 'UserCreated', data: { userId: 'usr_1', username: 'owner', email: 'owner@localhost', description: 'Account owner', grants: { ...grants, apiRoles: ['owner'] }, createdAt: '2024-01-01T00:00:00.000Z' }, metadata }], { expectedRevision: 'no_stream' });
    await store.append('apikey-aky_owner', [{ id: '3f0b8c1e-0000-5000-8000-000000000002', type: 'ApiKeyCreated', data: { keyId: 'aky_owner', name: 'Bootstrap owner key', keyType: 'personal', grants, creator: { kind: 'user', userId: 'usr_1', username: 'owner' }, digest: plain, createdAt: '2024-01-01T00:00:00.000Z' }, metadata }], { expectedRevision: 'no_stream' });
    sqlite.close();

    const app = await startTestApp({ dataDir, env: { ADMIN_API_KEY: CHOSEN } });
    try {
      expect((await app.call('GET', '/v2/users/owner', undefined, asKey(CHOSEN))).status).toBe(200);
      const { events } = await allEvents(app, CHOSEN);
      expect(ownerEvents(events)).toEqual(['UserCreated', 'ApiKeyCreated', 'ApiKeySecretReplaced']);
      const replaced = (await app.call('GET', '/v2/events?type=ApiKeySecretReplaced', undefined, asKey(CHOSEN))).body.events[0];
      expect(replaced.data).toMatchObject({ keyId: 'aky_owner', digest: '****', digestKind: 'hmac-sha256' });
    } finally {
      await app.close();
    }
  });
});
