import { Inject, Injectable } from '@nestjs/common';
import { Actor, READ_STORE, ReadStore } from '@lib/platform';
import { BOOTSTRAP_KEY_ID, digestMatches, keyIdOf } from '../domain/credentials';
import { KeyDigests } from './key-digests';
import { Capability, capabilitiesOf, fromWireGrants, Grants, intersect, maskForKeyType, scopesOf } from '../domain/roles';
import { CorpusGrants } from './corpus-grants';
import type { Principal } from './principal';
import { API_KEYS, APP_CLIENTS, ApiKeyRow, AppClientRow, USERS, UserRow } from '../read-models';
import { TokenService } from './tokens';

/**
 * Turns a presented credential into a principal, or undefined for anything not valid now: unknown, wrong
 * secret, disabled, deleted, expired, or whose user or creator is disabled or gone. Callers answer every
 * undefined with the same 401. Roles are read on each request, so a change applies at once; so is each corpus
 * role's corpus, so a role on a deleted corpus gives nothing on a corpus created again under its key.
 */
@Injectable()
export class Authenticator {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly tokens: TokenService,
    private readonly digests: KeyDigests,
    private readonly corpusGrants: CorpusGrants,
  ) {}

  async apiKey(presented: string): Promise<Principal | undefined> {
    const id = keyIdOf(presented);
    let row = id ? await this.reads.get<ApiKeyRow>(API_KEYS, id) : undefined;
    // ADMIN_API_KEY may take any form: a key that is not one of ours is checked against the bootstrap key.
    if (!row) row = await this.reads.get<ApiKeyRow>(API_KEYS, BOOTSTRAP_KEY_ID);
    if (!row || !this.digests.matches(presented, row.digest, row.digest_kind) || !row.enabled) return undefined;
    if (row.key_type === 'personal') {
      const user = await this.activeUser(row);
      if (!user) return undefined;
      return {
        actor: { type: 'user', id: user.username, via: row.id },
        caps: capabilitiesOf(await this.userGrants(user)),
        user: { userId: user.user_id, username: user.username },
        keyId: row.id,
        keyType: 'personal',
        bucket: row.id,
        ownerBucket: `user:${user.user_id}`,
      };
    }
    const bound = await this.creatorCaps(row);
    if (!bound) return undefined;
    const [own] = await this.corpusGrants.inForce({ grants: fromWireGrants(row), grantedAt: row.created_at });
    const caps = intersect(maskForKeyType(capabilitiesOf(own), row.key_type), bound);
    return { actor: { type: 'api_key', id: row.id }, caps, keyId: row.id, keyType: row.key_type, bucket: row.id, ownerBucket: `${row.creator_kind}:${row.creator_id}` };
  }

  async bearer(token: string): Promise<Principal | undefined> {
    const verified = await this.tokens.verify(token);
    const client = verified ? await this.reads.get<AppClientRow>(APP_CLIENTS, verified.appClientId) : undefined;
    if (!client) return undefined;
    const caps = capabilitiesOf(await this.clientGrants(client));
    // An end user's token acts only on that end user's own sessions: of the client's capabilities, `agent.end_user`.
    // Which aliases it reaches: those routing only to agents the client may use (kept apart from `caps`).
    if (verified?.endUser) return { actor: { type: 'app_client', id: client.id }, caps: caps.filter((c) => c.action === 'agent.end_user'), endUserAgents: scopesOf(caps, 'agent.use'), appClientId: client.id, endUser: verified.endUser, bucket: `${client.id}:${verified.endUser}`, ownerBucket: `app_client:${client.id}` };
    return { actor: { type: 'app_client', id: client.id }, caps, appClientId: client.id, bucket: client.id, ownerBucket: `app_client:${client.id}` };
  }

  /** An app client presenting its id and secret (the token endpoint). */
  async clientCredentials(clientId: string, clientSecret: string): Promise<AppClientRow | undefined> {
    const { items } = await this.reads.find<AppClientRow>(APP_CLIENTS, { where: [{ field: 'client_id', op: 'eq', value: clientId }], limit: 1 });
    const client = items[0];
    return client && digestMatches(clientSecret, client.secret_digest) ? client : undefined;
  }

  /**
   * What the actor recorded on an event may do now (the configurer of an agent, whose tools must never reach
   * further): a user's roles in force (through the key it acted with, so a user deleted and re-created under its
   * name is another), an app client's, a key's as it would authenticate; nothing for one disabled or gone;
   * undefined for the service's own actors (`system`, `agent`), which no person's roles bound.
   */
  async capabilitiesNow(actor: Actor): Promise<Capability[] | undefined> {
    if (actor.type === 'system' || actor.type === 'agent') return undefined;
    if (actor.type === 'app_client') {
      const client = await this.reads.get<AppClientRow>(APP_CLIENTS, actor.id);
      return client ? capabilitiesOf(await this.clientGrants(client)) : [];
    }
    const row = await this.reads.get<ApiKeyRow>(API_KEYS, actor.type === 'api_key' ? actor.id : (actor.via ?? ''));
    if (actor.type === 'user' && row?.key_type !== 'personal') {
      // Acted without a key we know now (a deleted personal key): the user of that name, if still enabled.
      const user = await this.reads.get<UserRow>(USERS, actor.id);
      return user?.enabled ? capabilitiesOf(await this.userGrants(user)) : [];
    }
    if (!row || !row.enabled) return [];
    if (row.key_type === 'personal') {
      const user = await this.activeUser(row);
      return user ? capabilitiesOf(await this.userGrants(user)) : [];
    }
    const bound = await this.creatorCaps(row);
    if (!bound) return [];
    const [own] = await this.corpusGrants.inForce({ grants: fromWireGrants(row), grantedAt: row.created_at });
    return intersect(maskForKeyType(capabilitiesOf(own), row.key_type), bound);
  }

  /** The capabilities of a key's creator now, or undefined when the creator is disabled or gone. */
  private async creatorCaps(row: ApiKeyRow): Promise<Capability[] | undefined> {
    if (row.creator_kind === 'user') {
      const user = await this.activeUser(row);
      return user ? capabilitiesOf(await this.userGrants(user)) : undefined;
    }
    const client = await this.reads.get<AppClientRow>(APP_CLIENTS, row.creator_id);
    return client ? capabilitiesOf(await this.clientGrants(client)) : undefined;
  }

  // A user's or client's roles may have changed since their corpora were re-created: the last change of any
  // kind (updated_at) is when a role without a bound id was granted at the latest.
  private async userGrants(user: UserRow): Promise<Grants> {
    return (await this.corpusGrants.inForce({ grants: fromWireGrants(user), grantedAt: user.updated_at }))[0];
  }

  private async clientGrants(client: AppClientRow): Promise<Grants> {
    return (await this.corpusGrants.inForce({ grants: fromWireGrants(client), grantedAt: client.updated_at }))[0];
  }

  /** A key's user, if still the same (not deleted and re-created under the same name) and enabled. */
  private async activeUser(row: ApiKeyRow): Promise<UserRow | undefined> {
    const user = row.creator_username ? await this.reads.get<UserRow>(USERS, row.creator_username) : undefined;
    return user && user.user_id === row.creator_id && user.enabled ? user : undefined;
  }
}
