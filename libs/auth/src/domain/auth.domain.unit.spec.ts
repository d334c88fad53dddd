import { DomainError } from '@lib/platform';
import { apiKeyFold, decideCreateApiKey, decideDeleteApiKey, decideSetKeyEnabled } from './api-key';
import { BOOTSTRAP_KEY_ID, digestMatches, digestOf, formatKey, keyIdOf, maskedKey, newSecret } from './credentials';
import { decide, POLICIES } from './policies';
import { allows, capabilitiesOf, Grants, intersect, maskForKeyType, NO_GRANTS } from './roles';
import { decideCreateUser, decideDeleteUser, decideUpdateUser, OWNER_USERNAME, userFold } from './user';

const at = new Date('2026-01-01T00:00:00Z');
const g = (over: Partial<Grants>): Grants => ({ ...NO_GRANTS, ...over });
const caps = (over: Partial<Grants>) => capabilitiesOf(g(over));
const kindOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof DomainError ? e.kind : 'not a DomainError';
  }
};

describe('roles and capabilities', () => {
  it('scopes corpus roles to their corpus and account roles to every one', () => {
    const viewer = caps({ corpusRoles: [{ corpusKey: 'a', role: 'viewer' }] });
    expect(allows(viewer, 'corpus.read', 'a')).toBe(true);
    expect(allows(viewer, 'corpus.read', 'b')).toBe(false);
    expect(allows(viewer, 'corpus.write', 'a')).toBe(false);
    const developer = caps({ apiRoles: ['corpus_developer'] });
    expect(allows(developer, 'corpus.write', 'any')).toBe(true);
    expect(allows(developer, 'corpus.delete', 'any')).toBe(false);
    expect(allows(caps({ apiRoles: ['administrator'] }), 'account.owner')).toBe(false);
    expect(allows(caps({ apiRoles: ['owner'] }), 'account.owner')).toBe(true);
  });

  it('keeps only data actions on QueryService and IndexService keys', () => {
    const admin = caps({ apiRoles: ['administrator'] });
    const serving = maskForKeyType(admin, 'serving');
    expect(allows(serving, 'corpus.read', 'x')).toBe(true);
    expect(allows(serving, 'corpus.write', 'x')).toBe(false);
    expect(allows(serving, 'users.manage')).toBe(false);
    expect(allows(maskForKeyType(admin, 'serving_and_indexing'), 'corpus.write', 'x')).toBe(true);
    expect(maskForKeyType(admin, 'personal')).toHaveLength(admin.length);
  });

  it('bounds a key by its creator: a wildcard narrows to what the creator holds', () => {
    const key = caps({ apiRoles: ['corpus_viewer'] });
    const creator = caps({ corpusRoles: [{ corpusKey: 'c1', role: 'viewer' }] });
    const effective = intersect(key, creator);
    expect(allows(effective, 'corpus.read', 'c1')).toBe(true);
    expect(allows(effective, 'corpus.read', 'c2')).toBe(false);
    expect(intersect(key, caps({}))).toEqual([]);
  });
});

describe('API keys', () => {
  const editorOnC1 = { creator: { kind: 'user' as const, userId: 'usr_1', username: 'u' }, isPersonal: true, caps: caps({ corpusRoles: [{ corpusKey: 'c1', role: 'editor' }] }) };
  const viewerOnC1 = { ...editorOnC1, caps: caps({ corpusRoles: [{ corpusKey: 'c1', role: 'viewer' }] }) };
  const writeKey = { name: 'k', keyType: 'serving_and_indexing' as const, grants: g({ corpusRoles: [{ corpusKey: 'c1', role: 'editor' }] }), digest: 'd' };

  it('never carries more than its creator holds', () => {
    expect(kindOf(() => decideCreateApiKey(apiKeyFold.initialState, 'aky_1', writeKey, viewerOnC1, at))).toBe('forbidden');
    const other = { ...writeKey, keyType: 'serving' as const, grants: g({ corpusRoles: [{ corpusKey: 'c2', role: 'viewer' }] }) };
    expect(kindOf(() => decideCreateApiKey(apiKeyFold.initialState, 'aky_1', other, editorOnC1, at))).toBe('forbidden');
    const events = decideCreateApiKey(apiKeyFold.initialState, 'aky_1', writeKey, editorOnC1, at);
    expect(events).toEqual([{ type: 'ApiKeyCreated', data: expect.objectContaining({ keyId: 'aky_1', keyType: 'serving_and_indexing', digest: 'd', grants: writeKey.grants }) }]);
  });

  it('keeps the personal-key rules: only users through personal keys, with no roles of their own', () => {
    const personal = { name: 'p', keyType: 'personal' as const, grants: NO_GRANTS, digest: 'd' };
    expect(kindOf(() => decideCreateApiKey(apiKeyFold.initialState, 'aky_1', personal, { ...editorOnC1, isPersonal: false }, at))).toBe('forbidden');
    expect(kindOf(() => decideCreateApiKey(apiKeyFold.initialState, 'aky_1', { ...personal, grants: g({ apiRoles: ['viewer'] }) }, editorOnC1, at))).toBe('invalid');
    expect(kindOf(() => decideCreateApiKey(apiKeyFold.initialState, 'aky_1', personal, { ...editorOnC1, caps: [] }, at))).toBe('forbidden');
    expect(decideCreateApiKey(apiKeyFold.initialState, 'aky_1', personal, editorOnC1, at)).toHaveLength(1);
    const useless = { ...writeKey, keyType: 'serving' as const, grants: g({ apiRoles: ['billing_administrator'] }) };
    expect(kindOf(() => decideCreateApiKey(apiKeyFold.initialState, 'aky_1', useless, { ...editorOnC1, caps: caps({ apiRoles: ['owner'] }) }, at))).toBe('invalid');
  });

  it('protects the bootstrap key and treats repeated enables as no change', () => {
    const state = apiKeyFold.evolve(apiKeyFold.initialState, decideCreateApiKey(apiKeyFold.initialState, BOOTSTRAP_KEY_ID, { name: 'b', keyType: 'personal', grants: NO_GRANTS, digest: 'd' }, editorOnC1, at)[0]);
    expect(kindOf(() => decideDeleteApiKey(state, BOOTSTRAP_KEY_ID, at))).toBe('conflict');
    expect(kindOf(() => decideSetKeyEnabled(state, BOOTSTRAP_KEY_ID, false, at))).toBe('conflict');
    expect(decideSetKeyEnabled(state, BOOTSTRAP_KEY_ID, true, at)).toEqual([]);
  });
});

describe('users', () => {
  const admin = caps({ apiRoles: ['administrator'] });
  const input = (username: string, grants: Grants) => ({ username, email: `${username}@example.com`, description: '', grants });

  it('lets an administrator grant what it holds, never owner', () => {
    expect(kindOf(() => decideCreateUser(userFold.initialState, input('o', g({ apiRoles: ['owner'] })), admin, at, () => 'usr_1'))).toBe('forbidden');
    expect(decideCreateUser(userFold.initialState, input('c', g({ apiRoles: ['corpus_administrator'] })), admin, at, () => 'usr_1')).toHaveLength(1);
    expect(kindOf(() => decideCreateUser(userFold.initialState, { ...input('x', NO_GRANTS), email: 'not-an-email' }, admin, at, () => 'usr_1'))).toBe('invalid');
  });

  it('keeps the owner an owner, and owners out of an administrator’s reach', () => {
    const owner = userFold.evolve(userFold.initialState, decideCreateUser(userFold.initialState, input(OWNER_USERNAME, g({ apiRoles: ['owner'] })), caps({ apiRoles: ['owner'] }), at, () => 'usr_0')[0]);
    const all = caps({ apiRoles: ['owner'] });
    expect(kindOf(() => decideDeleteUser(owner, OWNER_USERNAME, all, at))).toBe('conflict');
    expect(kindOf(() => decideUpdateUser(owner, OWNER_USERNAME, { enabled: false }, all, at))).toBe('conflict');
    expect(kindOf(() => decideUpdateUser(owner, OWNER_USERNAME, { grants: NO_GRANTS }, all, at))).toBe('conflict');
    const second = userFold.evolve(userFold.initialState, decideCreateUser(userFold.initialState, input('o2', g({ apiRoles: ['owner'] })), all, at, () => 'usr_2')[0]);
    expect(kindOf(() => decideDeleteUser(second, 'o2', admin, at))).toBe('forbidden');
    const disabled = decideUpdateUser(second, 'o2', { enabled: false }, all, at).reduce(userFold.evolve, second);
    expect(disabled.status).toBe('disabled');
  });
});

describe('policies', () => {
  const viewer = caps({ corpusRoles: [{ corpusKey: 'c1', role: 'viewer' }] });
  it('hides unreadable corpora, forbids what a reader may not do, allows the rest', () => {
    expect(decide(POLICIES['corpus.write'], viewer, ['c1'])).toEqual({ outcome: 'forbidden' });
    expect(decide(POLICIES['corpus.write'], viewer, ['c2'])).toEqual({ outcome: 'hidden', corpusKey: 'c2' });
    expect(decide(POLICIES['corpus.write'], caps({ corpusRoles: [{ corpusKey: 'c1', role: 'editor' }] }), ['c1'])).toEqual({ outcome: 'allow' });
    expect(decide(POLICIES['query.corpora'], viewer, ['c1', 'c2'])).toEqual({ outcome: 'hidden', corpusKey: 'c2' });
    expect(decide(POLICIES['corpus.list'], viewer, [])).toEqual({ outcome: 'allow' });
    expect(decide(POLICIES['users.manage'], caps({ apiRoles: ['corpus_administrator'] }), [])).toEqual({ outcome: 'forbidden' });
    expect(decide(POLICIES['keys.own'], viewer, [], true)).toEqual({ outcome: 'forbidden' });
    expect(decide(POLICIES.member, [], [])).toEqual({ outcome: 'forbidden' });
  });
});

describe('credentials', () => {
  it('finds the key id without the secret, and compares digests exactly', () => {
    const secret = newSecret();
    const key = formatKey('serving', 'aky_123', secret);
    expect(keyIdOf(key)).toBe('aky_123');
    expect(keyIdOf('garbage')).toBeUndefined();
    expect(digestMatches(key, digestOf(key))).toBe(true);
    expect(digestMatches(`${key.slice(0, -1)}x`, digestOf(key))).toBe(key.endsWith('x'));
    expect(digestMatches(key, 'abc')).toBe(false);
    expect(maskedKey('serving', 'aky_123')).not.toContain(secret);
  });
});
