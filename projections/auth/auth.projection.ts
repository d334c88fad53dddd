import { ApiKeyEvent, AppClientEvent, toWireGrants as wire, UserEvent } from '@lib/auth/events';
import { assertNever, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

export const USERS_COLLECTION = 'users';
export const API_KEYS_COLLECTION = 'api_keys';
export const APP_CLIENTS_COLLECTION = 'app_clients';

type Handled = UserEvent | ApiKeyEvent | AppClientEvent;

/**
 * Users, API keys and app clients as authentication reads them: one document each, keyed by username, key id
 * and app client id. Key and client digests are kept here for the credential check and never leave the API.
 */
export const authProjection: ReadModelProjection = {
  name: 'auth',
  version: 1,
  target: 'read',
  eventTypes: [
    'UserCreated',
    'UserRolesChanged',
    'UserDisabled',
    'UserEnabled',
    'UserDeleted',
    'ApiKeyCreated',
    'ApiKeyDisabled',
    'ApiKeyEnabled',
    'ApiKeyDeleted',
    'ApiKeySecretReplaced',
    'AppClientCreated',
    'AppClientUpdated',
    'AppClientDeleted',
  ],
  collections: [
    { name: USERS_COLLECTION, indexes: [{ fields: ['created_at'] }] },
    { name: API_KEYS_COLLECTION, indexes: [{ fields: ['creator_id'] }, { fields: ['created_at'] }] },
    { name: APP_CLIENTS_COLLECTION, indexes: [{ fields: ['client_id'] }, { fields: ['created_at'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as Handled;
    switch (event.type) {
      case 'UserCreated': {
        const d = event.data;
        const doc = { id: d.username, user_id: d.userId, username: d.username, email: d.email, description: d.description, enabled: true, ...wire(d.grants), created_at: d.createdAt, updated_at: d.createdAt };
        return [{ op: 'put', collection: USERS_COLLECTION, doc }];
      }
      case 'UserRolesChanged':
        return [{ op: 'patch', collection: USERS_COLLECTION, id: event.data.username, set: { ...wire(event.data.grants), updated_at: event.data.at } }];
      case 'UserDisabled':
      case 'UserEnabled':
        return [{ op: 'patch', collection: USERS_COLLECTION, id: event.data.username, set: { enabled: event.type === 'UserEnabled', updated_at: event.data.at } }];
      case 'UserDeleted':
        return [{ op: 'delete', collection: USERS_COLLECTION, id: event.data.username }];
      case 'ApiKeyCreated': {
        const d = event.data;
        const creator = d.creator.kind === 'user' ? { creator_kind: 'user', creator_id: d.creator.userId, creator_username: d.creator.username } : { creator_kind: 'app_client', creator_id: d.creator.appClientId, creator_username: null };
        const doc = { id: d.keyId, name: d.name, key_type: d.keyType, enabled: true, ...creator, ...wire(d.grants), digest: d.digest, digest_kind: d.digestKind ?? 'sha256', created_at: d.createdAt };
        return [{ op: 'put', collection: API_KEYS_COLLECTION, doc }];
      }
      case 'ApiKeyDisabled':
      case 'ApiKeyEnabled':
        return [{ op: 'patch', collection: API_KEYS_COLLECTION, id: event.data.keyId, set: { enabled: event.type === 'ApiKeyEnabled' } }];
      case 'ApiKeyDeleted':
        return [{ op: 'delete', collection: API_KEYS_COLLECTION, id: event.data.keyId }];
      case 'ApiKeySecretReplaced':
        return [{ op: 'patch', collection: API_KEYS_COLLECTION, id: event.data.keyId, set: { digest: event.data.digest, digest_kind: event.data.digestKind ?? 'sha256' } }];
      case 'AppClientCreated': {
        const d = event.data;
        const doc = { id: d.appClientId, name: d.name, description: d.description, client_id: d.clientId, secret_digest: d.secretDigest, ...wire(d.grants), created_at: d.createdAt, updated_at: d.createdAt };
        return [{ op: 'put', collection: APP_CLIENTS_COLLECTION, doc }];
      }
      case 'AppClientUpdated': {
        const d = event.data;
        const set: Record<string, unknown> = { updated_at: d.at };
        if (d.name !== undefined) set.name = d.name;
        if (d.description !== undefined) set.description = d.description;
        if (d.grants) Object.assign(set, wire(d.grants));
        return [{ op: 'patch', collection: APP_CLIENTS_COLLECTION, id: d.appClientId, set }];
      }
      case 'AppClientDeleted':
        return [{ op: 'delete', collection: APP_CLIENTS_COLLECTION, id: event.data.appClientId }];
      default:
        return assertNever(event);
    }
  },
};
