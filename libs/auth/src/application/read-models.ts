import { streamId } from '@lib/platform';
import { KeyType, toViewGrants, WireGrants } from '../domain/roles';
import { DigestKind, maskedKey } from '../domain/credentials';

export const userStream = (username: string): string => streamId('user', username);
export const apiKeyStream = (keyId: string): string => streamId('apikey', keyId);
export const appClientStream = (appClientId: string): string => streamId('appclient', appClientId);

/** The projection whose read models authentication reads: auth writes wait for it before answering. */
export const AUTH_PROJECTION = 'auth';
export const AUTH_WRITE_VISIBILITY = [AUTH_PROJECTION] as const;

export const USERS = 'users';
export const API_KEYS = 'api_keys';
export const APP_CLIENTS = 'app_clients';

export type UserRow = WireGrants & {
  id: string;
  user_id: string;
  username: string;
  email: string;
  description: string;
  enabled: boolean;
  created_at: string;
  updated_at: string;
};

export type ApiKeyRow = WireGrants & {
  id: string;
  name: string;
  key_type: KeyType;
  enabled: boolean;
  creator_kind: 'user' | 'app_client';
  /** The creating user's id (usr_…) or app client id. */
  creator_id: string;
  creator_username: string | null;
  digest: string;
  /** Absent on rows projected before the field existed: `sha256`. */
  digest_kind?: DigestKind;
  created_at: string;
};

export type AppClientRow = WireGrants & {
  id: string;
  name: string;
  description: string;
  client_id: string;
  secret_digest: string;
  created_at: string;
  updated_at: string;
};

export const userView = (r: UserRow) => ({
  id: r.user_id,
  email: r.email,
  username: r.username,
  enabled: r.enabled,
  description: r.description,
  created_at: r.created_at,
  updated_at: r.updated_at,
  ...toViewGrants(r),
});

/** A key as read after creation: the secret is never shown again, only its non-secret prefix and id. */
export const apiKeyView = (r: ApiKeyRow, secretKey?: string) => ({
  id: r.id,
  name: r.name,
  secret_key: secretKey ?? maskedKey(r.key_type, r.id),
  enabled: r.enabled,
  api_key_role: r.key_type,
  ...toViewGrants(r),
  owner_username: r.creator_username ?? undefined,
  created_at: r.created_at,
});

export const appClientView = (r: AppClientRow, clientSecret?: string) => ({
  id: r.id,
  name: r.name,
  description: r.description,
  client_id: r.client_id,
  client_secret: clientSecret ?? '****',
  ...toViewGrants(r),
  created_at: r.created_at,
  updated_at: r.updated_at,
});
