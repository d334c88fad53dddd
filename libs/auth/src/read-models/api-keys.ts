import { collection } from '@lib/platform/projections';
import type { ApiKeyEvent } from '../domain/api-key';
import { DigestKind, maskedKey } from '../domain/credentials';
import { KeyType, toViewGrants, WireGrants } from '../domain/roles';
import { grantFields } from './grants';
import type { ApiPolicy } from '../domain/api-policy';

/** One row per API key, keyed by key id (projections/auth). The digest is for the credential check only. */
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

export const API_KEYS = collection<ApiKeyRow>('api_keys');

type ApiKeyCreated = Extract<ApiKeyEvent, { type: 'ApiKeyCreated' }>['data'];

/** The row an `ApiKeyCreated` makes; also the create response's source while the projection has not caught up. */
export function apiKeyRow(d: ApiKeyCreated): ApiKeyRow {
  const creator =
    d.creator.kind === 'user'
      ? { creator_kind: 'user' as const, creator_id: d.creator.userId, creator_username: d.creator.username }
      : { creator_kind: 'app_client' as const, creator_id: d.creator.appClientId, creator_username: null };
  return { id: d.keyId, name: d.name, key_type: d.keyType, enabled: true, ...creator, ...grantFields(d.grants), digest: d.digest, digest_kind: d.digestKind ?? 'sha256', created_at: d.createdAt };
}

/** A key as read after creation: the secret is never shown again, only its non-secret prefix and id. */
export const apiKeyView = (r: ApiKeyRow, secretKey?: string, policy?: ApiPolicy) => ({
  id: r.id,
  name: r.name,
  secret_key: secretKey ?? maskedKey(r.key_type, r.id),
  enabled: r.enabled,
  api_key_role: r.key_type,
  ...toViewGrants(r),
  owner_username: r.creator_username ?? undefined,
  created_at: r.created_at,
  ...(policy ? { api_policy: policy } : {}),
});
