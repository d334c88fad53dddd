import { DomainError } from '@lib/platform';
import { givenEvents } from '@lib/testing';
import { ApiKeyEvent, apiKeyFold, ApiKeyState, CreateKeyInput, decideCreateApiKey, decideDeleteApiKey, decideSetKeyEnabled, KeyCreatorContext } from './api-key';
import { appClientFold, decideCreateAppClient, decideDeleteAppClient, decideUpdateAppClient } from './app-client';
import { BOOTSTRAP_KEY_ID, digestMatches, digestOf, formatKey, keyIdOf, KEY_PREFIX, maskedKey, newSecret } from './credentials';
import { decide, POLICIES } from './policies';
import { Action, allows, allowsSome, capabilitiesOf, fromWireGrants, Grants, intersect, maskForKeyType, NO_GRANTS, notCovered, scopesOf, toWireGrants } from './roles';
import { decideCreateUser, decideDeleteUser, decideUpdateUser, OWNER_USERNAME, UserEvent, userFold, UserState } from './user';

const at = new Date('2026-01-01T00:00:00Z');
const g = (over: Partial<Grants>): Grants => ({ ...NO_GRANTS, ...over });
const caps = (over: Partial<Grants>) => capabilitiesOf(g(over));
/** The kind of the DomainError `fn` throws, `undefined` if it returns. */
const kindOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof DomainError ? e.kind : 'not a DomainError';
  }
};
const actionsOf = (c: ReturnType<typeof capabilitiesOf>): Action[] => [...new Set(c.map((x) => x.action))].sort();

const ownerCaps = caps({ apiRoles: ['owner'] });
const adminCaps = caps({ apiRoles: ['administrator'] });
const viewerOn = (corpusKey: string) => caps({ corpusRoles: [{ corpusKey, role: 'viewer' }] });
const editorOn = (corpusKey: string) => caps({ corpusRoles: [{ corpusKey, role: 'editor' }] });

describe('roles and capabilities', () => {
  it('gives the owner every action, account.owner included, on every resource', () => {
    for (const action of ['account.owner', 'billing.manage', 'users.manage', 'keys.manage', 'clients.manage', 'audit.read', 'corpus.delete', 'agent.administer', 'pipeline.administer'] as const) {
      expect(allows(ownerCaps, action, 'anything')).toBe(true);
    }
    expect(ownerCaps.every((c) => c.scope === '*')).toBe(true);
  });

  it('gives an administrator everything but account.owner and billing.manage', () => {
    expect(allows(adminCaps, 'account.owner')).toBe(false);
    expect(allows(adminCaps, 'billing.manage')).toBe(false);
    expect(allows(adminCaps, 'users.manage')).toBe(true);
    expect(allows(adminCaps, 'corpus.delete', 'c1')).toBe(true);
    expect(actionsOf(ownerCaps).filter((a) => !allows(adminCaps, a))).toEqual(['account.owner', 'billing.manage']);
  });

  it('scopes a corpus role to its corpus, and a corpus role to its actions', () => {
    const viewer = viewerOn('a');
    expect(allows(viewer, 'corpus.read', 'a')).toBe(true);
    expect(allows(viewer, 'corpus.read', 'b')).toBe(false);
    expect(allows(viewer, 'corpus.write', 'a')).toBe(false);
    // A scoped grant never answers a question about every corpus.
    expect(allows(viewer, 'corpus.read')).toBe(false);
    expect(allowsSome(viewer, 'corpus.read')).toBe(true);
    expect(allowsSome(viewer, 'corpus.write')).toBe(false);
  });

  it('gives account-tier corpus_developer write on any corpus, never delete', () => {
    const developer = caps({ apiRoles: ['corpus_developer'] });
    expect(allows(developer, 'corpus.write', 'any')).toBe(true);
    expect(allows(developer, 'corpus.write', 'other')).toBe(true);
    expect(allows(developer, 'corpus.delete', 'any')).toBe(false);
    expect(allows(developer, 'corpus.create')).toBe(false);
  });

  it('scopes an agent role to its agent', () => {
    const user = caps({ agentRoles: [{ agentKey: 'x', role: 'agent_user' }] });
    expect(allows(user, 'agent.use', 'x')).toBe(true);
    expect(allows(user, 'agent.use', 'y')).toBe(false);
    expect(allows(user, 'agent.view', 'x')).toBe(false);
    expect(allows(user, 'corpus.read', 'x')).toBe(false);
  });

  it('lists the scopes of an action: * when any grant is account-wide, else the distinct keys', () => {
    const two = caps({ corpusRoles: [{ corpusKey: 'c1', role: 'viewer' }, { corpusKey: 'c2', role: 'editor' }, { corpusKey: 'c1', role: 'editor' }] });
    expect(scopesOf(two, 'corpus.read')).toEqual(['c1', 'c2']);
    expect(scopesOf(two, 'corpus.delete')).toEqual([]);
    expect(scopesOf([...two, ...caps({ apiRoles: ['corpus_viewer'] })], 'corpus.read')).toBe('*');
  });
});

describe('key type masks', () => {
  it('keeps only the data actions on a QueryService (serving) key', () => {
    const serving = maskForKeyType(adminCaps, 'serving');
    expect(actionsOf(serving)).toEqual(['agent.end_user', 'agent.use', 'agent.view', 'corpus.read', 'llm.use']);
    expect(allows(serving, 'corpus.read', 'x')).toBe(true);
    expect(allows(serving, 'corpus.write', 'x')).toBe(false);
    expect(allows(serving, 'users.manage')).toBe(false);
    expect(allows(serving, 'keys.manage')).toBe(false);
  });

  it('adds corpus.write, and nothing else, on an IndexService (serving_and_indexing) key', () => {
    const indexing = maskForKeyType(adminCaps, 'serving_and_indexing');
    expect(actionsOf(indexing)).toEqual(['agent.end_user', 'agent.use', 'agent.view', 'corpus.read', 'corpus.write', 'llm.use']);
    expect(allows(indexing, 'corpus.write', 'x')).toBe(true);
    expect(allows(indexing, 'corpus.configure', 'x')).toBe(false);
    expect(allows(indexing, 'users.manage')).toBe(false);
  });

  it('keeps everything on a personal key', () => {
    const personal = maskForKeyType(adminCaps, 'personal');
    expect(personal).toEqual(adminCaps);
    expect(allows(personal, 'users.manage')).toBe(true);
  });
});

describe('intersect and notCovered', () => {
  it('narrows a wildcard key capability to what the creator holds', () => {
    const key = caps({ apiRoles: ['corpus_viewer'] }); // users.read@*, corpus.read@*
    const effective = intersect(key, viewerOn('c1'));
    expect(effective).toEqual([{ action: 'corpus.read', scope: 'c1' }]);
    expect(allows(effective, 'corpus.read', 'c1')).toBe(true);
    expect(allows(effective, 'corpus.read', 'c2')).toBe(false);
  });

  it('drops a key capability the creator lacks entirely', () => {
    const key = caps({ apiRoles: ['corpus_viewer'] });
    expect(intersect(key, [])).toEqual([]);
    expect(intersect(caps({ agentRoles: [{ agentKey: 'x', role: 'agent_user' }] }), viewerOn('c1'))).toEqual([]);
    expect(intersect(editorOn('c1'), viewerOn('c1'))).toEqual([{ action: 'corpus.read', scope: 'c1' }]);
  });

  it('keeps a scoped key capability the creator covers with a wildcard, and keeps wildcards under wildcards', () => {
    expect(intersect(viewerOn('c9'), adminCaps)).toEqual([{ action: 'corpus.read', scope: 'c9' }]);
    const key = caps({ apiRoles: ['corpus_viewer'] });
    expect(intersect(key, adminCaps)).toEqual(key);
  });

  it('reports what a holder does not cover', () => {
    expect(notCovered(editorOn('c1'), viewerOn('c1'))).toEqual([{ action: 'corpus.write', scope: 'c1' }]);
    expect(notCovered(viewerOn('c2'), editorOn('c1'))).toEqual([{ action: 'corpus.read', scope: 'c2' }]);
    expect(notCovered(viewerOn('c1'), caps({ apiRoles: ['corpus_viewer'] }))).toEqual([]);
    // A scoped grant never covers a wildcard.
    expect(notCovered(caps({ apiRoles: ['corpus_viewer'] }), viewerOn('c1'))).toContainEqual({ action: 'corpus.read', scope: '*' });
  });
});

describe('API keys', () => {
  const creator = { kind: 'user' as const, userId: 'usr_1', username: 'u' };
  const editorCtx: KeyCreatorContext = { creator, isPersonal: true, caps: editorOn('c1') };
  const viewerCtx: KeyCreatorContext = { ...editorCtx, caps: viewerOn('c1') };
  const writeKey: CreateKeyInput = { name: 'k', keyType: 'serving_and_indexing', grants: g({ corpusRoles: [{ corpusKey: 'c1', role: 'editor' }] }), digest: 'd' };
  const personal: CreateKeyInput = { name: 'p', keyType: 'personal', grants: NO_GRANTS, digest: 'd' };
  const create = (input: CreateKeyInput, caller: KeyCreatorContext, history: ApiKeyEvent[] = [], keyId = 'aky_1') =>
    givenEvents(apiKeyFold, history).when((s) => decideCreateApiKey(s, keyId, input, caller, at));

  describe('escalation', () => {
    it('refuses a write key from a creator who may only read that corpus', () => {
      create(writeKey, viewerCtx).thenFails({ kind: 'forbidden', code: 'auth.escalation', details: { fieldErrors: { corpus_roles: expect.any(String) } } });
    });

    it('creates the same key for an editor of the corpus: one ApiKeyCreated with the grants and digest', () => {
      create(writeKey, editorCtx).then([
        { type: 'ApiKeyCreated', data: { keyId: 'aky_1', name: 'k', keyType: 'serving_and_indexing', grants: writeKey.grants, creator, digest: 'd', createdAt: at.toISOString() } },
      ]);
    });

    it('refuses a key on a corpus the creator holds nothing on', () => {
      const other: CreateKeyInput = { ...writeKey, keyType: 'serving', grants: g({ corpusRoles: [{ corpusKey: 'c2', role: 'viewer' }] }) };
      create(other, editorCtx).thenFails({ kind: 'forbidden', code: 'auth.escalation' });
    });

    it('judges the key on its masked capabilities: an IndexService key with corpus owner on c1 needs only read and write', () => {
      // corpus owner grants delete and configure, but an IndexService key keeps only read and write.
      const ownerKey: CreateKeyInput = { ...writeKey, grants: g({ corpusRoles: [{ corpusKey: 'c1', role: 'owner' }] }) };
      expect(decideCreateApiKey(apiKeyFold.initialState, 'aky_1', ownerKey, editorCtx, at)).toHaveLength(1);
      // A QueryService key with an account-wide role needs that role's data actions everywhere.
      create({ ...writeKey, keyType: 'serving', grants: g({ apiRoles: ['corpus_viewer'] }) }, editorCtx).thenFails({ kind: 'forbidden' });
    });
  });

  describe('personal keys', () => {
    it('refuses a personal key to a caller that is not a user on a personal key (app client or data key)', () => {
      create(personal, { ...editorCtx, isPersonal: false }).thenFails({ kind: 'forbidden', code: 'api_key.personal' });
      create(personal, { creator: { kind: 'app_client', appClientId: 'apc_1' }, isPersonal: false, caps: ownerCaps }).thenFails({ kind: 'forbidden' });
    });

    it('creates a personal key without roles for a user on a personal key', () => {
      const events = decideCreateApiKey(apiKeyFold.initialState, 'aky_1', personal, editorCtx, at);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: 'ApiKeyCreated', data: { keyType: 'personal', grants: NO_GRANTS, creator } });
    });

    it('refuses roles on a personal key as invalid', () => {
      create({ ...personal, grants: g({ apiRoles: ['viewer'] }) }, editorCtx).thenFails({ kind: 'invalid', code: 'api_key.invalid' });
      create({ ...personal, grants: g({ corpusRoles: [{ corpusKey: 'c1', role: 'viewer' }] }) }, editorCtx).thenFails({ kind: 'invalid' });
      create({ ...personal, grants: g({ agentRoles: [{ agentKey: 'x', role: 'agent_user' }] }) }, editorCtx).thenFails({ kind: 'invalid' });
    });

    it('refuses any key to a caller with no capabilities', () => {
      create(personal, { ...editorCtx, caps: [] }).thenFails({ kind: 'forbidden', code: 'auth.forbidden' });
      create(writeKey, { ...editorCtx, caps: [] }).thenFails({ kind: 'forbidden' });
    });
  });

  it('refuses a data key whose roles mask to nothing it can use', () => {
    const useless: CreateKeyInput = { ...writeKey, keyType: 'serving', grants: g({ apiRoles: ['billing_administrator'] }) };
    create(useless, { ...editorCtx, caps: ownerCaps }).thenFails({ kind: 'invalid', code: 'api_key.invalid', details: { fieldErrors: { api_roles: expect.any(String) } } });
    create({ ...useless, grants: NO_GRANTS }, { ...editorCtx, caps: ownerCaps }).thenFails({ kind: 'invalid' });
    create({ ...useless, keyType: 'serving_and_indexing', grants: g({ apiRoles: ['pipeline_administrator'] }) }, { ...editorCtx, caps: ownerCaps }).thenFails({ kind: 'invalid' });
  });

  it('refuses a blank or overlong name, and an id that is taken', () => {
    create({ ...personal, name: '   ' }, editorCtx).thenFails({ kind: 'invalid', details: { fieldErrors: { name: expect.any(String) } } });
    create({ ...personal, name: 'n'.repeat(256) }, editorCtx).thenFails({ kind: 'invalid' });
    expect(decideCreateApiKey(apiKeyFold.initialState, 'aky_1', { ...personal, name: 'n'.repeat(255) }, editorCtx, at)).toHaveLength(1);
    const created = decideCreateApiKey(apiKeyFold.initialState, 'aky_1', personal, editorCtx, at);
    create(personal, editorCtx, created).thenFails({ kind: 'conflict', code: 'api_key.exists' });
  });

  describe('enable, disable, delete', () => {
    const createdAs = (keyId: string) => decideCreateApiKey(apiKeyFold.initialState, keyId, personal, editorCtx, at);

    it('protects the bootstrap key from deletion and disabling', () => {
      const history = createdAs(BOOTSTRAP_KEY_ID);
      givenEvents(apiKeyFold, history).when((s) => decideDeleteApiKey(s, BOOTSTRAP_KEY_ID, at)).thenFails({ kind: 'conflict', code: 'api_key.bootstrap' });
      givenEvents(apiKeyFold, history).when((s) => decideSetKeyEnabled(s, BOOTSTRAP_KEY_ID, false, at)).thenFails({ kind: 'conflict', code: 'api_key.bootstrap' });
    });

    it('treats enabling an enabled key (the bootstrap key included) as no change', () => {
      givenEvents(apiKeyFold, createdAs(BOOTSTRAP_KEY_ID)).when((s) => decideSetKeyEnabled(s, BOOTSTRAP_KEY_ID, true, at)).then([]);
      givenEvents(apiKeyFold, createdAs('aky_2')).when((s) => decideSetKeyEnabled(s, 'aky_2', true, at)).then([]);
    });

    it('disables, re-enables and deletes an ordinary key, and folds each step', () => {
      const history = createdAs('aky_2');
      const disabled: ApiKeyEvent = { type: 'ApiKeyDisabled', data: { keyId: 'aky_2', at: at.toISOString() } };
      givenEvents(apiKeyFold, history).when((s) => decideSetKeyEnabled(s, 'aky_2', false, at)).then([disabled]);
      const off = givenEvents(apiKeyFold, [...history, disabled]);
      expect(off.state.status).toBe('disabled');
      off.when((s) => decideSetKeyEnabled(s, 'aky_2', false, at)).then([]);
      off.when((s) => decideSetKeyEnabled(s, 'aky_2', true, at)).then([{ type: 'ApiKeyEnabled', data: { keyId: 'aky_2', at: at.toISOString() } }]);
      const deleted = decideDeleteApiKey(off.state, 'aky_2', at);
      expect(deleted).toEqual([{ type: 'ApiKeyDeleted', data: { keyId: 'aky_2', at: at.toISOString() } }]);
      const gone: ApiKeyState = deleted.reduce(apiKeyFold.evolve, off.state);
      expect(gone.status).toBe('absent');
      expect(kindOf(() => decideDeleteApiKey(gone, 'aky_2', at))).toBe('not_found');
      expect(kindOf(() => decideSetKeyEnabled(gone, 'aky_2', true, at))).toBe('not_found');
    });

    it('folds a replaced secret into the digest', () => {
      const state = givenEvents(apiKeyFold, [...createdAs('aky_2'), { type: 'ApiKeySecretReplaced', data: { keyId: 'aky_2', digest: 'd2', at: at.toISOString() } }]).state;
      expect(state).toMatchObject({ status: 'enabled', digest: 'd2' });
    });
  });
});

describe('users', () => {
  const input = (username: string, grants: Grants) => ({ username, email: `${username}@example.com`, description: '', grants });
  const createdUser = (username: string, grants: Grants, userId = 'usr_1'): UserEvent[] => decideCreateUser(userFold.initialState, input(username, grants), ownerCaps, at, () => userId);
  const stateOf = (events: UserEvent[]): UserState => events.reduce(userFold.evolve, userFold.initialState);

  it('lets an administrator grant what it holds, never owner', () => {
    givenEvents(userFold, [])
      .when((s) => decideCreateUser(s, input('o', g({ apiRoles: ['owner'] })), adminCaps, at, () => 'usr_1'))
      .thenFails({ kind: 'forbidden', code: 'auth.escalation' });
    givenEvents(userFold, [])
      .when((s) => decideCreateUser(s, input('b', g({ apiRoles: ['billing_administrator'] })), adminCaps, at, () => 'usr_1'))
      .thenFails({ kind: 'forbidden' });
    const grants = g({ apiRoles: ['corpus_administrator'] });
    givenEvents(userFold, [])
      .when((s) => decideCreateUser(s, input('c', grants), adminCaps, at, () => 'usr_1'))
      .then([{ type: 'UserCreated', data: { userId: 'usr_1', username: 'c', email: 'c@example.com', description: '', grants, createdAt: at.toISOString() } }]);
  });

  it('refuses a username that is taken, a malformed username and a malformed email', () => {
    givenEvents(userFold, createdUser('c', NO_GRANTS))
      .when((s) => decideCreateUser(s, input('c', NO_GRANTS), adminCaps, at, () => 'usr_2'))
      .thenFails({ kind: 'invalid', code: 'user.exists', details: { fieldErrors: { username: expect.any(String) } } });
    for (const email of ['not-an-email', 'a@', '@b', 'a b@c', 'a@b@c']) {
      givenEvents(userFold, [])
        .when((s) => decideCreateUser(s, { ...input('x', NO_GRANTS), email }, adminCaps, at, () => 'usr_1'))
        .thenFails({ kind: 'invalid', details: { fieldErrors: { email: expect.any(String) } } });
    }
    for (const username of ['', 'has space', 'x'.repeat(101), 'semi;colon']) {
      givenEvents(userFold, [])
        .when((s) => decideCreateUser(s, input(username, NO_GRANTS), adminCaps, at, () => 'usr_1'))
        .thenFails({ kind: 'invalid', details: { fieldErrors: { username: expect.any(String) } } });
    }
  });

  it('keeps the account owner: never deleted, disabled, or stripped of the owner role', () => {
    const owner = createdUser(OWNER_USERNAME, g({ apiRoles: ['owner'] }), 'usr_0');
    givenEvents(userFold, owner).when((s) => decideDeleteUser(s, OWNER_USERNAME, ownerCaps, at)).thenFails({ kind: 'conflict', code: 'user.owner' });
    givenEvents(userFold, owner).when((s) => decideUpdateUser(s, OWNER_USERNAME, { enabled: false }, ownerCaps, at)).thenFails({ kind: 'conflict', code: 'user.owner' });
    givenEvents(userFold, owner).when((s) => decideUpdateUser(s, OWNER_USERNAME, { grants: NO_GRANTS }, ownerCaps, at)).thenFails({ kind: 'conflict', code: 'user.owner' });
    givenEvents(userFold, owner)
      .when((s) => decideUpdateUser(s, OWNER_USERNAME, { grants: g({ apiRoles: ['administrator'] }) }, ownerCaps, at))
      .thenFails({ kind: 'conflict' });
    // Keeping owner while adding a role is fine.
    const more = g({ apiRoles: ['owner', 'viewer'] });
    givenEvents(userFold, owner)
      .when((s) => decideUpdateUser(s, OWNER_USERNAME, { grants: more }, ownerCaps, at))
      .then([{ type: 'UserRolesChanged', data: { userId: 'usr_0', username: OWNER_USERNAME, grants: more, at: at.toISOString() } }]);
  });

  it('records the same roles again only when they bind to a different corpus (one re-created under its key)', () => {
    const bound = (corpusId: string) => g({ corpusRoles: [{ corpusKey: 'c1', role: 'viewer', corpusId }], apiRoles: ['viewer'] });
    const user = createdUser('ann', bound('crp_1'), 'usr_5');
    givenEvents(userFold, user).when((s) => decideUpdateUser(s, 'ann', { grants: bound('crp_1') }, ownerCaps, at)).then([]);
    givenEvents(userFold, user)
      .when((s) => decideUpdateUser(s, 'ann', { grants: bound('crp_2') }, ownerCaps, at))
      .then([{ type: 'UserRolesChanged', data: { userId: 'usr_5', username: 'ann', grants: bound('crp_2'), at: at.toISOString() } }]);
  });

  it('lets only a caller who could grant a disabled user’s roles enable the user again', () => {
    const disabled = [...createdUser('boss', g({ apiRoles: ['administrator'] }), 'usr_3'), { type: 'UserDisabled', data: { userId: 'usr_3', username: 'boss', at: at.toISOString() } } as UserEvent];
    const usersManager = caps({ apiRoles: ['corpus_administrator'] });
    givenEvents(userFold, disabled).when((s) => decideUpdateUser(s, 'boss', { enabled: true }, usersManager, at)).thenFails({ kind: 'forbidden' });
    givenEvents(userFold, disabled)
      .when((s) => decideUpdateUser(s, 'boss', { enabled: true }, ownerCaps, at))
      .then([{ type: 'UserEnabled', data: { userId: 'usr_3', username: 'boss', at: at.toISOString() } }]);
  });

  it('keeps another owner out of an administrator’s reach: no delete, disable or role change', () => {
    const second = createdUser('o2', g({ apiRoles: ['owner'] }), 'usr_2');
    givenEvents(userFold, second).when((s) => decideDeleteUser(s, 'o2', adminCaps, at)).thenFails({ kind: 'forbidden', code: 'auth.escalation' });
    givenEvents(userFold, second).when((s) => decideUpdateUser(s, 'o2', { enabled: false }, adminCaps, at)).thenFails({ kind: 'forbidden' });
    // Demoting to a role the administrator holds is still taking owner away.
    givenEvents(userFold, second)
      .when((s) => decideUpdateUser(s, 'o2', { grants: g({ apiRoles: ['viewer'] }) }, adminCaps, at))
      .thenFails({ kind: 'forbidden' });
    // The owner may.
    givenEvents(userFold, second)
      .when((s) => decideDeleteUser(s, 'o2', ownerCaps, at))
      .then([{ type: 'UserDeleted', data: { userId: 'usr_2', username: 'o2', at: at.toISOString() } }]);
  });

  it('disables and re-enables a user, folding the status; repeated changes record nothing', () => {
    const history = createdUser('c', g({ apiRoles: ['corpus_viewer'] }));
    const disabledEvents = decideUpdateUser(stateOf(history), 'c', { enabled: false }, adminCaps, at);
    expect(disabledEvents).toEqual([{ type: 'UserDisabled', data: { userId: 'usr_1', username: 'c', at: at.toISOString() } }]);
    const disabled = stateOf([...history, ...disabledEvents]);
    expect(disabled.status).toBe('disabled');
    expect(decideUpdateUser(disabled, 'c', { enabled: false }, adminCaps, at)).toEqual([]);
    const enabled = decideUpdateUser(disabled, 'c', { enabled: true }, adminCaps, at).reduce(userFold.evolve, disabled);
    expect(enabled.status).toBe('active');
    expect(decideUpdateUser(enabled, 'c', { enabled: true }, adminCaps, at)).toEqual([]);
  });

  it('changes roles and folds them; a deleted or unknown user is not found', () => {
    const history = createdUser('c', g({ apiRoles: ['corpus_viewer'] }));
    const grants = g({ corpusRoles: [{ corpusKey: 'c1', role: 'editor' }] });
    const changed = decideUpdateUser(stateOf(history), 'c', { grants }, adminCaps, at);
    expect(stateOf([...history, ...changed])).toMatchObject({ status: 'active', grants });
    const deleted = decideDeleteUser(stateOf(history), 'c', adminCaps, at);
    const gone = stateOf([...history, ...deleted]);
    expect(gone.status).toBe('absent');
    expect(kindOf(() => decideDeleteUser(gone, 'c', adminCaps, at))).toBe('not_found');
    expect(kindOf(() => decideUpdateUser(userFold.initialState, 'nobody', { enabled: true }, adminCaps, at))).toBe('not_found');
  });
});

describe('app clients', () => {
  const create = (grants: Grants, actor: ReturnType<typeof capabilitiesOf>) =>
    decideCreateAppClient(appClientFold.initialState, 'apc_1', { name: 'svc', description: '', clientId: 'cid', secretDigest: 'sd', grants }, actor, at);

  it('grants an app client only what its creator holds', () => {
    expect(kindOf(() => create(g({ apiRoles: ['owner'] }), adminCaps))).toBe('forbidden');
    expect(kindOf(() => create(g({ corpusRoles: [{ corpusKey: 'c2', role: 'viewer' }] }), editorOn('c1')))).toBe('forbidden');
    expect(create(g({ corpusRoles: [{ corpusKey: 'c1', role: 'viewer' }] }), editorOn('c1'))).toHaveLength(1);
  });

  it('keeps an owner-role app client out of an administrator’s reach, and folds updates without grants', () => {
    const history = create(g({ apiRoles: ['owner'] }), ownerCaps);
    const state = history.reduce(appClientFold.evolve, appClientFold.initialState);
    expect(kindOf(() => decideDeleteAppClient(state, 'apc_1', adminCaps, at))).toBe('forbidden');
    expect(kindOf(() => decideUpdateAppClient(state, 'apc_1', { grants: g({ apiRoles: ['viewer'] }) }, adminCaps, at))).toBe('forbidden');
    expect(decideUpdateAppClient(state, 'apc_1', {}, adminCaps, at)).toEqual([]);
    const renamed = decideUpdateAppClient(state, 'apc_1', { name: 'new' }, adminCaps, at).reduce(appClientFold.evolve, state);
    expect(renamed).toMatchObject({ status: 'present', grants: g({ apiRoles: ['owner'] }) });
  });
});

describe('policies', () => {
  const viewer = viewerOn('c1');

  it('hides a corpus the caller cannot read, forbids what a reader may not do, allows an editor to write', () => {
    expect(decide(POLICIES['corpus.write'], viewer, ['c1'])).toEqual({ outcome: 'forbidden' });
    expect(decide(POLICIES['corpus.write'], viewer, ['c2'])).toEqual({ outcome: 'hidden', corpusKey: 'c2' });
    expect(decide(POLICIES['corpus.write'], editorOn('c1'), ['c1'])).toEqual({ outcome: 'allow' });
    expect(decide(POLICIES['corpus.delete'], editorOn('c1'), ['c1'])).toEqual({ outcome: 'forbidden' });
  });

  it('hides the first unreadable corpus of a multi-corpus query', () => {
    expect(decide(POLICIES['query.corpora'], viewer, ['c1', 'c2'])).toEqual({ outcome: 'hidden', corpusKey: 'c2' });
    expect(decide(POLICIES['query.corpora'], viewer, ['c3', 'c1'])).toEqual({ outcome: 'hidden', corpusKey: 'c3' });
    expect(decide(POLICIES['query.corpora'], caps({ corpusRoles: [{ corpusKey: 'c1', role: 'viewer' }, { corpusKey: 'c2', role: 'viewer' }] }), ['c1', 'c2'])).toEqual({
      outcome: 'allow',
    });
  });

  it('admits any member with a capability, and refuses data keys on keys.own', () => {
    expect(decide(POLICIES.member, [], [])).toEqual({ outcome: 'forbidden' });
    expect(decide(POLICIES.member, viewer, [])).toEqual({ outcome: 'allow' });
    expect(decide(POLICIES.member, viewer, [], true)).toEqual({ outcome: 'allow' });
    expect(decide(POLICIES['keys.own'], viewer, [], true)).toEqual({ outcome: 'forbidden' });
    expect(decide(POLICIES['keys.own'], viewer, [], false)).toEqual({ outcome: 'allow' });
    expect(decide(POLICIES.public, [], [])).toEqual({ outcome: 'allow' });
  });

  it('allows a list to a caller that reads one corpus only', () => {
    expect(decide(POLICIES['corpus.list'], viewer, [])).toEqual({ outcome: 'allow' });
    expect(decide(POLICIES['corpus.list'], caps({ agentRoles: [{ agentKey: 'x', role: 'agent_user' }] }), [])).toEqual({ outcome: 'forbidden' });
  });

  it('lets no one through a corpus rule that names no corpus unless they may do the action on some corpus', () => {
    expect(decide(POLICIES['query.corpora'], [], [])).toEqual({ outcome: 'forbidden' });
    expect(decide(POLICIES['query.corpora'], caps({ agentRoles: [{ agentKey: 'x', role: 'agent_user' }] }), [])).toEqual({ outcome: 'forbidden' });
    expect(decide(POLICIES['query.corpora'], viewer, [])).toEqual({ outcome: 'allow' });
  });

  it('needs the account-wide action for account policies', () => {
    expect(decide(POLICIES['users.manage'], caps({ apiRoles: ['corpus_administrator'] }), [])).toEqual({ outcome: 'forbidden' });
    expect(decide(POLICIES['users.manage'], adminCaps, [])).toEqual({ outcome: 'allow' });
    expect(decide(POLICIES['corpus.create'], caps({ corpusRoles: [{ corpusKey: 'c1', role: 'owner' }] }), [])).toEqual({ outcome: 'forbidden' });
  });
});

describe('credentials', () => {
  it('finds the key id in a well-formed key, and nothing in anything else', () => {
    const secret = newSecret();
    expect(keyIdOf(formatKey('serving', 'aky_123', secret))).toBe('aky_123');
    expect(keyIdOf(formatKey('personal', BOOTSTRAP_KEY_ID, secret))).toBe(BOOTSTRAP_KEY_ID);
    expect(keyIdOf(formatKey('serving_and_indexing', 'aky_x', secret))).toBe('aky_x');
    expect(keyIdOf('garbage')).toBeUndefined();
    expect(keyIdOf(`xxx_aky_123_${secret}`)).toBeUndefined();
    expect(keyIdOf('zqt_aky_123_short')).toBeUndefined();
    expect(formatKey('serving', 'aky_123', secret).startsWith(`${KEY_PREFIX.serving}_`)).toBe(true);
  });

  it('makes a fresh secret each time', () => {
    const a = newSecret();
    expect(a).not.toBe(newSecret());
    expect(a.length).toBeGreaterThanOrEqual(43);
  });

  it('compares digests exactly, and refuses a malformed stored digest', () => {
    const key = formatKey('serving', 'aky_123', newSecret());
    expect(digestMatches(key, digestOf(key))).toBe(true);
    const last = key.slice(-1);
    const changed = `${key.slice(0, -1)}${last === 'x' ? 'y' : 'x'}`;
    expect(digestMatches(changed, digestOf(key))).toBe(false);
    expect(digestMatches(key, 'abc')).toBe(false);
    expect(digestMatches(key, '')).toBe(false);
    expect(digestMatches(key, 'zz'.repeat(32))).toBe(false);
  });

  it('masks a key without its secret', () => {
    const secret = newSecret();
    const masked = maskedKey('serving', 'aky_123');
    expect(masked).not.toContain(secret);
    expect(masked).toBe('zqt_aky_123_****');
    expect(keyIdOf(masked)).toBeUndefined();
  });
});

describe('wire grants', () => {
  it('round-trips grants through the wire format', () => {
    const grants: Grants = {
      apiRoles: ['viewer', 'agent_user'],
      corpusRoles: [
        { corpusKey: 'c1', role: 'editor' },
        { corpusKey: 'c2', role: 'owner' },
      ],
      agentRoles: [{ agentKey: 'x', role: 'agent_developer' }],
    };
    const wire = toWireGrants(grants);
    expect(wire).toEqual({
      api_roles: ['viewer', 'agent_user'],
      corpus_roles: [
        { corpus_key: 'c1', role: 'editor' },
        { corpus_key: 'c2', role: 'owner' },
      ],
      agent_roles: [{ agent_key: 'x', role: 'agent_developer' }],
    });
    expect(fromWireGrants(wire)).toEqual(grants);
    expect(fromWireGrants(toWireGrants(NO_GRANTS))).toEqual(NO_GRANTS);
  });
});
