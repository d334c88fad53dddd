import { conflict, DomainError, invalid, notFound } from '@lib/platform/kernel';
import { BOOTSTRAP_KEY_ID, DigestKind } from './credentials';
import { Capability, capabilitiesOf, Grants, KeyType, maskForKeyType, notCovered } from './roles';

/** Who created a key: a user (through a personal key) or an app client. A key is bounded by its creator. */
export type Creator = { kind: 'user'; userId: string; username: string } | { kind: 'app_client'; appClientId: string };

export type ApiKeyEvent =
  | {
      type: 'ApiKeyCreated';
      /** `digestKind` absent: `sha256` (every key but the bootstrap key, and events written before it existed). */
      data: { keyId: string; name: string; keyType: KeyType; grants: Grants; creator: Creator; digest: string; digestKind?: DigestKind; createdAt: string };
    }
  | { type: 'ApiKeyDisabled'; data: { keyId: string; at: string } }
  | { type: 'ApiKeyEnabled'; data: { keyId: string; at: string } }
  | { type: 'ApiKeyDeleted'; data: { keyId: string; at: string } }
  | { type: 'ApiKeySecretReplaced'; data: { keyId: string; digest: string; digestKind?: DigestKind; at: string } };

export type ApiKeyState =
  | { status: 'absent' }
  | { status: 'enabled' | 'disabled'; keyId: string; keyType: KeyType; creator: Creator; digest: string; digestKind: DigestKind };

export const apiKeyFold = {
  initialState: { status: 'absent' } as ApiKeyState,
  evolve(state: ApiKeyState, e: ApiKeyEvent): ApiKeyState {
    switch (e.type) {
      case 'ApiKeyCreated':
        return { status: 'enabled', keyId: e.data.keyId, keyType: e.data.keyType, creator: e.data.creator, digest: e.data.digest, digestKind: e.data.digestKind ?? 'sha256' };
      case 'ApiKeyDisabled':
        return state.status === 'absent' ? state : { ...state, status: 'disabled' };
      case 'ApiKeyEnabled':
        return state.status === 'absent' ? state : { ...state, status: 'enabled' };
      case 'ApiKeyDeleted':
        return { status: 'absent' };
      case 'ApiKeySecretReplaced':
        return state.status === 'absent' ? state : { ...state, digest: e.data.digest, digestKind: e.data.digestKind ?? 'sha256' };
    }
  },
};

/** The caller creating a key, as the domain needs to judge it. */
export interface KeyCreatorContext {
  readonly creator: Creator;
  /** True only for a user authenticated by one of their personal keys (never a data key or an app client). */
  readonly isPersonal: boolean;
  readonly caps: readonly Capability[];
}

export interface CreateKeyInput {
  readonly name: string;
  readonly keyType: KeyType;
  readonly grants: Grants;
  readonly digest: string;
}

export function decideCreateApiKey(state: ApiKeyState, keyId: string, input: CreateKeyInput, caller: KeyCreatorContext, now: Date): ApiKeyEvent[] {
  if (state.status !== 'absent') throw conflict('api_key.exists', `API key ${keyId} already exists`);
  if (!input.name.trim() || input.name.length > 255) throw invalid('api_key.invalid', 'name must be 1 to 255 characters', { name: 'must be 1 to 255 characters' });
  if (caller.caps.length === 0) throw new DomainError('forbidden', 'auth.forbidden', 'Creating an API key needs at least one role');
  if (input.keyType === 'personal') {
    if (!caller.isPersonal) throw new DomainError('forbidden', 'api_key.personal', 'API keys, app clients and service accounts cannot create personal keys');
    const { apiRoles, corpusRoles, agentRoles } = input.grants;
    if (apiRoles.length || corpusRoles.length || agentRoles.length) {
      throw invalid('api_key.invalid', 'A personal key carries its owner\'s roles: omit api_roles, corpus_roles, agent_roles and corpus_keys', { api_key_role: 'personal keys take no roles' });
    }
  } else {
    const caps = maskForKeyType(capabilitiesOf(input.grants), input.keyType);
    if (caps.length === 0) {
      throw invalid('api_key.invalid', `A ${input.keyType} key needs corpus or agent roles it can use (query, index or agent use)`, { api_roles: 'no usable roles for this key type' });
    }
    const missing = notCovered(caps, caller.caps);
    if (missing.length) {
      throw new DomainError('forbidden', 'auth.escalation', `A key cannot carry more than its creator holds (${missing[0].action} on ${missing[0].scope})`, {
        fieldErrors: { corpus_roles: 'grants more than the caller holds' },
      });
    }
  }
  return [{ type: 'ApiKeyCreated', data: { keyId, name: input.name, keyType: input.keyType, grants: input.grants, creator: caller.creator, digest: input.digest, createdAt: now.toISOString() } }];
}

export function decideSetKeyEnabled(state: ApiKeyState, keyId: string, enabled: boolean, now: Date): ApiKeyEvent[] {
  if (state.status === 'absent') throw notFound('api_key.not_found', `API key ${keyId} not found`, keyId);
  if (keyId === BOOTSTRAP_KEY_ID && !enabled) throw conflict('api_key.bootstrap', 'The bootstrap key cannot be disabled: change ADMIN_API_KEY and restart to rotate it');
  if ((state.status === 'enabled') === enabled) return [];
  return [{ type: enabled ? 'ApiKeyEnabled' : 'ApiKeyDisabled', data: { keyId, at: now.toISOString() } }];
}

export function decideDeleteApiKey(state: ApiKeyState, keyId: string, now: Date): ApiKeyEvent[] {
  if (state.status === 'absent') throw notFound('api_key.not_found', `API key ${keyId} not found`, keyId);
  if (keyId === BOOTSTRAP_KEY_ID) throw conflict('api_key.bootstrap', 'The bootstrap key cannot be deleted: change ADMIN_API_KEY and restart to rotate it');
  return [{ type: 'ApiKeyDeleted', data: { keyId, at: now.toISOString() } }];
}
