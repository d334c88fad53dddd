import type { ApiKeyEvent, AppClientEvent, UserEvent } from '@lib/auth/events';
import { API_KEYS, APP_CLIENTS, AppClientRow, apiKeyRow, appClientRow, grantFields, USERS, userRow } from '@lib/auth/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove, RowChanges } from '@lib/platform/projections';

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
    'UserDescriptionChanged',
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
    { name: USERS, indexes: [{ fields: ['created_at'] }] },
    { name: API_KEYS, indexes: [{ fields: ['creator_id'] }, { fields: ['created_at'] }] },
    { name: APP_CLIENTS, indexes: [{ fields: ['client_id'] }, { fields: ['created_at'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as Handled;
    switch (event.type) {
      case 'UserCreated':
        return [put(USERS, userRow(event.data))];
      case 'UserRolesChanged':
        return [patch(USERS, event.data.username, { set: { ...grantFields(event.data.grants), updated_at: event.data.at } })];
      case 'UserDescriptionChanged':
        return [patch(USERS, event.data.username, { set: { description: event.data.description, updated_at: event.data.at } })];
      case 'UserDisabled':
      case 'UserEnabled':
        return [patch(USERS, event.data.username, { set: { enabled: event.type === 'UserEnabled', updated_at: event.data.at } })];
      case 'UserDeleted':
        return [remove(USERS, event.data.username)];
      case 'ApiKeyCreated':
        return [put(API_KEYS, apiKeyRow(event.data))];
      case 'ApiKeyDisabled':
      case 'ApiKeyEnabled':
        return [patch(API_KEYS, event.data.keyId, { set: { enabled: event.type === 'ApiKeyEnabled' } })];
      case 'ApiKeyDeleted':
        return [remove(API_KEYS, event.data.keyId)];
      case 'ApiKeySecretReplaced':
        return [patch(API_KEYS, event.data.keyId, { set: { digest: event.data.digest, digest_kind: event.data.digestKind ?? 'sha256' } })];
      case 'AppClientCreated':
        return [put(APP_CLIENTS, appClientRow(event.data))];
      case 'AppClientUpdated': {
        const d = event.data;
        const set: RowChanges<AppClientRow> = { updated_at: d.at };
        if (d.name !== undefined) set.name = d.name;
        if (d.description !== undefined) set.description = d.description;
        if (d.grants) Object.assign(set, grantFields(d.grants));
        return [patch(APP_CLIENTS, d.appClientId, { set })];
      }
      case 'AppClientDeleted':
        return [remove(APP_CLIENTS, event.data.appClientId)];
      default:
        return assertNever(event);
    }
  },
};
