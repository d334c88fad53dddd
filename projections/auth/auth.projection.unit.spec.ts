import { ApiKeyEvent, apiKeyStream, AppClientEvent, appClientStream, UserEvent, userStream } from '@lib/auth';
import { API_KEYS, APP_CLIENTS, USERS } from '@lib/auth/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { authProjection } from './auth.projection';

function history() {
  const log = new EventLog();
  const user = (e: UserEvent) => log.append(userStream(e.data.username), e.type, e.data);
  const key = (e: ApiKeyEvent) => log.append(apiKeyStream(e.data.keyId), e.type, e.data);
  const client = (e: AppClientEvent) => log.append(appClientStream(e.data.appClientId), e.type, e.data);
  const at = '2026-01-01T00:00:00.000Z';
  const grants = { apiRoles: [], corpusRoles: [{ corpusKey: 'c1', role: 'viewer' as const }], agentRoles: [] };
  user({ type: 'UserCreated', data: { userId: 'usr_1', username: 'ada', email: 'a@x.io', description: '', grants, createdAt: at } });
  user({ type: 'UserRolesChanged', data: { userId: 'usr_1', username: 'ada', grants: { ...grants, apiRoles: ['viewer'] }, at } });
  user({ type: 'UserDescriptionChanged', data: { userId: 'usr_1', username: 'ada', description: 'analyst', at } });
  user({ type: 'UserDisabled', data: { userId: 'usr_1', username: 'ada', at } });
  key({ type: 'ApiKeyCreated', data: { keyId: 'aky_1', name: 'k', keyType: 'serving', grants, creator: { kind: 'user', userId: 'usr_1', username: 'ada' }, digest: 'd1', createdAt: at } });
  key({ type: 'ApiKeySecretReplaced', data: { keyId: 'aky_1', digest: 'd2', at } });
  key({ type: 'ApiKeyCreated', data: { keyId: 'aky_2', name: 'gone', keyType: 'personal', grants, creator: { kind: 'user', userId: 'usr_1', username: 'ada' }, digest: 'd', createdAt: at } });
  key({ type: 'ApiKeyDeleted', data: { keyId: 'aky_2', at } });
  client({ type: 'AppClientCreated', data: { appClientId: 'app_1', name: 'svc', description: '', clientId: 'cid', secretDigest: 's', grants, createdAt: at } });
  client({ type: 'AppClientUpdated', data: { appClientId: 'app_1', name: 'svc2', at } });
  user({ type: 'UserCreated', data: { userId: 'usr_2', username: 'bob', email: 'b@x.io', description: '', grants, createdAt: at } });
  user({ type: 'UserDisabled', data: { userId: 'usr_2', username: 'bob', at } });
  user({ type: 'UserEnabled', data: { userId: 'usr_2', username: 'bob', at } });
  user({ type: 'UserCreated', data: { userId: 'usr_3', username: 'cy', email: 'c@x.io', description: '', grants, createdAt: at } });
  user({ type: 'UserDeleted', data: { userId: 'usr_3', username: 'cy', at } });
  key({ type: 'ApiKeyDisabled', data: { keyId: 'aky_1', at } });
  key({ type: 'ApiKeyEnabled', data: { keyId: 'aky_1', at } });
  client({ type: 'AppClientCreated', data: { appClientId: 'app_2', name: 'old', description: '', clientId: 'cid2', secretDigest: 's', grants, createdAt: at } });
  client({ type: 'AppClientDeleted', data: { appClientId: 'app_2', at } });
  return log;
}

describe('auth projection', () => {
  it('keeps users, keys and app clients as authentication reads them; replaying a suffix changes nothing', async () => {
    const log = history();
    const h = await given(log.events).project(authProjection);
    const check = async () => {
      expect(await h.reads.get(USERS, 'ada')).toMatchObject({ user_id: 'usr_1', enabled: false, api_roles: ['viewer'], corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
      expect(await h.reads.get(API_KEYS, 'aky_1')).toMatchObject({ key_type: 'serving', enabled: true, digest: 'd2', creator_id: 'usr_1', creator_username: 'ada' });
      expect(await h.reads.get(API_KEYS, 'aky_2')).toBeUndefined();
      expect(await h.reads.get(APP_CLIENTS, 'app_1')).toMatchObject({ name: 'svc2', client_id: 'cid', corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
    };
    await check();
    await h.replay(log.events.slice(1));
    await check();
    h.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(authProjection, history().events);
    expect(once).toMatchObject({ users: [{ id: 'ada' }, { id: 'bob', enabled: true }], api_keys: [{ id: 'aky_1' }], app_clients: [{ id: 'app_1' }] });
    expect(twice).toEqual(once);
  });
});
