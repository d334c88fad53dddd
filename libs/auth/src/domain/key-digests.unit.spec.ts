import { randomBytes } from 'node:crypto';
import { ApiKeyEvent, apiKeyFold } from './api-key';
import { digestMatches, digestOf, keyedDigestOf } from './credentials';

const fold = (events: ApiKeyEvent[]) => events.reduce(apiKeyFold.evolve, apiKeyFold.initialState);
const creator = { kind: 'user' as const, userId: 'usr_1', username: 'owner' };
const grants = { apiRoles: [], corpusRoles: [], agentRoles: [] };

describe('keyed digests (the bootstrap key)', () => {
  const key = randomBytes(32);
  const chosen = 'correct-horse-battery-staple';

  it('matches only under the same server key, and never without one', () => {
    const stored = keyedDigestOf(chosen, key);
    expect(stored).not.toBe(digestOf(chosen));
    expect(digestMatches(chosen, stored, 'hmac-sha256', key)).toBe(true);
    expect(digestMatches(chosen, stored, 'hmac-sha256', randomBytes(32))).toBe(false);
    expect(digestMatches(chosen, stored, 'hmac-sha256')).toBe(false);
    expect(digestMatches(chosen, stored, 'sha256', key)).toBe(false);
    expect(digestMatches(`${chosen}x`, stored, 'hmac-sha256', key)).toBe(false);
  });

  it('reads an ApiKeyCreated written before digestKind existed as a plain SHA-256 digest', () => {
    const old = JSON.parse(
      `{"type":"ApiKeyCreated","data":{"keyId":"aky_owner","name":"Bootstrap owner key","keyType":"personal","grants":{"apiRoles":[],"corpusRoles":[],"agentRoles":[]},"creator":{"kind":"user","userId":"usr_1","username":"owner"},"digest":"${digestOf(chosen)}","createdAt":"2024-01-01T00:00:00.000Z"}}`,
    ) as ApiKeyEvent;
    const state = fold([old]);
    expect(state).toMatchObject({ status: 'enabled', digestKind: 'sha256' });
    expect(state.status !== 'absent' && digestMatches(chosen, state.digest, state.digestKind, key)).toBe(true);
  });

  it('folds a replacement with its kind, and an old replacement without one as plain', () => {
    const created: ApiKeyEvent = { type: 'ApiKeyCreated', data: { keyId: 'aky_owner', name: 'b', keyType: 'personal', grants, creator, digest: digestOf(chosen), createdAt: 'x' } };
    const keyed = keyedDigestOf(chosen, key);
    expect(fold([created, { type: 'ApiKeySecretReplaced', data: { keyId: 'aky_owner', digest: keyed, digestKind: 'hmac-sha256', at: 'y' } }])).toMatchObject({ digest: keyed, digestKind: 'hmac-sha256' });
    expect(fold([created, { type: 'ApiKeySecretReplaced', data: { keyId: 'aky_owner', digest: 'ab', at: 'y' } }])).toMatchObject({ digest: 'ab', digestKind: 'sha256' });
  });
});
