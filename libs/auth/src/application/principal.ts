import { Actor, DomainError } from '@lib/platform';
import type { Creator } from '../domain/api-key';
import { Capability, KeyType, scopesOf } from '../domain/roles';

/** An authenticated caller: who it is (for event metadata) and what it may do now. */
export interface Principal {
  readonly actor: Actor;
  readonly caps: readonly Capability[];
  /** The user behind a personal key. */
  readonly user?: { readonly userId: string; readonly username: string };
  readonly appClientId?: string;
  /** An end user the app client's token was minted for: the principal reaches only that end user's sessions. */
  readonly endUser?: string;
  /**
   * For an end user's token: the agents its app client may use (`agent.use`), `*` for every one. The end user
   * reaches an alias only when the alias routes to none but these (docs/end-user-sessions.md); they are not among
   * `caps`, so no agent route opens to the end user with them.
   */
  readonly endUserAgents?: '*' | readonly string[];
  readonly keyId?: string;
  readonly keyType?: KeyType;
  /** Rate-limit bucket: the key id or the app client id. */
  readonly bucket: string;
  /**
   * Rate-limit bucket shared by every credential acting for one user or app client (its personal keys, the
   * keys it created, its tokens), so that minting keys does not multiply the limit.
   */
  readonly ownerBucket: string;
}

/**
 * The agents a caller of the end-user routes may reach through an alias: an end user's token, those its app client
 * may use; any other caller, those it may use itself.
 */
export function endUserAgentsOf(p: Principal): '*' | readonly string[] {
  return p.endUser !== undefined ? (p.endUserAgents ?? []) : scopesOf(p.caps, 'agent.use');
}

/** The creator a new key records; data keys (QueryService, IndexService) manage no keys. */
export function creatorOf(p: Principal): Creator {
  if (p.user) return { kind: 'user', userId: p.user.userId, username: p.user.username };
  if (p.appClientId) return { kind: 'app_client', appClientId: p.appClientId };
  throw new DomainError('forbidden', 'api_key.data_key', 'API keys that are not personal cannot manage API keys');
}

/** The id a principal owns keys under: a user's id or an app client's id. */
export function ownerIdOf(p: Principal): string | undefined {
  return p.user?.userId ?? p.appClientId;
}
