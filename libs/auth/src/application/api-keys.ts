import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CommandContext, Condition, DomainError, findMatching, ID_GENERATOR, IdGenerator, notFound, READ_STORE, ReadStore } from '@lib/platform';
import { ApiKeyEvent, apiKeyFold, ApiKeyState, decideCreateApiKey, decideDeleteApiKey, decideSetKeyEnabled } from '../domain/api-key';
import { digestOf, formatKey, newSecret } from '../domain/credentials';
import { allows, Capability, capabilitiesOf, fromWireGrants, Grants, KeyType, maskForKeyType, NO_GRANTS, notCovered } from '../domain/roles';
import { apiPolicy } from '../domain/api-policy';
import { AuthWriter } from './auth-writer';
import { CorpusGrants } from './corpus-grants';
import { creatorOf, ownerIdOf, Principal } from './principal';
import { API_KEYS, ApiKeyRow, apiKeyRow, apiKeyView, USERS, UserRow } from '../read-models';
import { apiKeyStream } from './streams';

export type ApiKeyView = ReturnType<typeof apiKeyView>;

/**
 * A key's view with its `api_policy`: from the key's own roles in force for a data key, from its user's for a
 * personal key (which has its user's capabilities); a personal key whose user is gone or disabled allows nothing.
 */
async function keyView(reads: ReadStore, corpusGrants: CorpusGrants, row: ApiKeyRow, secretKey?: string): Promise<ApiKeyView> {
  if (row.key_type !== 'personal') return apiKeyView(row, secretKey, apiPolicy(row.key_type, fromWireGrants(row)));
  const user = row.creator_kind === 'user' && row.creator_username ? await reads.get<UserRow>(USERS, row.creator_username) : undefined;
  const active = user && user.user_id === row.creator_id && user.enabled ? (await corpusGrants.rowsInForce([user], (u) => u.updated_at))[0] : undefined;
  return apiKeyView(row, secretKey, apiPolicy('personal', active ? fromWireGrants(active) : NO_GRANTS));
}

export class CreateApiKey {
  constructor(
    readonly input: { name: string; keyType: KeyType; grants: Grants },
    readonly principal: Principal,
    readonly ctx: CommandContext,
  ) {}
}
export class SetApiKeyEnabled {
  constructor(
    readonly keyId: string,
    readonly enabled: boolean,
    readonly principal: Principal,
    readonly ctx: CommandContext,
  ) {}
}
export class DeleteApiKey {
  constructor(
    readonly keyId: string,
    readonly principal: Principal,
    readonly ctx: CommandContext,
  ) {}
}
export class GetApiKey {
  constructor(
    readonly keyId: string,
    readonly principal: Principal,
  ) {}
}
export class ListApiKeys {
  constructor(
    readonly principal: Principal,
    readonly limit: number,
    readonly pageKey?: string,
    readonly keyType?: KeyType,
    readonly corpusKey?: string,
  ) {}
}

const createdIn = (events: readonly ApiKeyEvent[]) => {
  const created = events.find((e) => e.type === 'ApiKeyCreated');
  if (!created) throw new Error('CreateApiKey appended no ApiKeyCreated');
  return created.data;
};

const keyNotFound = (keyId: string) => notFound('api_key.not_found', `API key ${keyId} not found`, keyId);

/** Callers with `keys.manage` (corpus_administrator, administrator, owner) see every key; others only their own. */
async function visibleKey(reads: ReadStore, p: Principal, keyId: string): Promise<ApiKeyRow> {
  const owner = ownerIdOf(p);
  if (!owner) throw new DomainError('forbidden', 'api_key.data_key', 'API keys that are not personal cannot manage API keys');
  const row = await reads.get<ApiKeyRow>(API_KEYS, keyId);
  if (!row || (row.creator_id !== owner && !allows(p.caps, 'keys.manage'))) throw keyNotFound(keyId);
  return row;
}

/** Changing someone else's key needs the caller to hold what that key can do (no demoting an owner's key). */
async function assertMayChange(reads: ReadStore, p: Principal, row: ApiKeyRow): Promise<void> {
  if (row.creator_id === ownerIdOf(p)) return;
  let holder: Capability[];
  if (row.key_type === 'personal') {
    const user = row.creator_username ? await reads.get<UserRow>(USERS, row.creator_username) : undefined;
    holder = user ? capabilitiesOf(fromWireGrants(user)) : [];
  } else holder = maskForKeyType(capabilitiesOf(fromWireGrants(row)), row.key_type);
  if (notCovered(holder, p.caps).length) throw new DomainError('forbidden', 'auth.escalation', `You cannot change a key that can do more than you can`);
}

@CommandHandler(CreateApiKey)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKey> {
  constructor(
    private readonly writer: AuthWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    private readonly corpusGrants: CorpusGrants,
  ) {}

  async execute(c: CreateApiKey): Promise<{ view: ApiKeyView; visible: boolean }> {
    const keyId = this.ids.numeric('aky');
    const key = formatKey(c.input.keyType, keyId, newSecret());
    const caller = { creator: creatorOf(c.principal), isPersonal: c.principal.keyType === 'personal', caps: c.principal.caps };
    const bound = await this.corpusGrants.bind(c.input.grants);
    const decide = (s: ApiKeyState) => {
      const events = decideCreateApiKey(s, keyId, { ...c.input, grants: bound.grants, digest: digestOf(key) }, caller, c.ctx.now);
      bound.check();
      return events;
    };
    const { events, visible } = await this.writer.write(apiKeyStream(keyId), apiKeyFold, decide, c.ctx);
    const stored = visible ? await this.reads.get<ApiKeyRow>(API_KEYS, keyId) : undefined;
    // Past the read-your-writes bound the row is made from the event, as the projection will make it.
    const row = stored ?? apiKeyRow(createdIn(events));
    return { view: await keyView(this.reads, this.corpusGrants, row, key), visible };
  }
}

@CommandHandler(SetApiKeyEnabled)
export class SetApiKeyEnabledHandler implements ICommandHandler<SetApiKeyEnabled> {
  constructor(
    private readonly writer: AuthWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}
  async execute(c: SetApiKeyEnabled) {
    const row = await visibleKey(this.reads, c.principal, c.keyId);
    await assertMayChange(this.reads, c.principal, row);
    return this.writer.write(apiKeyStream(c.keyId), apiKeyFold, (s: ApiKeyState) => decideSetKeyEnabled(s, c.keyId, c.enabled, c.ctx.now), c.ctx);
  }
}

@CommandHandler(DeleteApiKey)
export class DeleteApiKeyHandler implements ICommandHandler<DeleteApiKey> {
  constructor(
    private readonly writer: AuthWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}
  async execute(c: DeleteApiKey) {
    const row = await visibleKey(this.reads, c.principal, c.keyId);
    await assertMayChange(this.reads, c.principal, row);
    return this.writer.write(apiKeyStream(c.keyId), apiKeyFold, (s: ApiKeyState) => decideDeleteApiKey(s, c.keyId, c.ctx.now), c.ctx);
  }
}

const keyGrantedAt = (row: ApiKeyRow): string => row.created_at;

@QueryHandler(GetApiKey)
export class GetApiKeyHandler implements IQueryHandler<GetApiKey, ApiKeyView> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly corpusGrants: CorpusGrants,
  ) {}
  /** Roles on a corpus since deleted are not shown: they give nothing (docs/auth.md). */
  async execute(q: GetApiKey): Promise<ApiKeyView> {
    const [row] = await this.corpusGrants.rowsInForce([await visibleKey(this.reads, q.principal, q.keyId)], keyGrantedAt);
    return keyView(this.reads, this.corpusGrants, row);
  }
}

@QueryHandler(ListApiKeys)
export class ListApiKeysHandler implements IQueryHandler<ListApiKeys> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly corpusGrants: CorpusGrants,
  ) {}

  /** Spec rule: without corpus_administrator, administrator or owner, `api_key_role=personal` is required and shows only one's own keys. */
  async execute(q: ListApiKeys): Promise<{ api_keys: ApiKeyView[]; metadata: { page_key?: string } }> {
    const owner = ownerIdOf(q.principal);
    if (!owner) throw new DomainError('forbidden', 'api_key.data_key', 'API keys that are not personal cannot manage API keys');
    const where: Condition[] = [];
    if (!allows(q.principal.caps, 'keys.manage')) {
      if (q.keyType !== 'personal') {
        throw new DomainError('forbidden', 'api_key.list_personal', 'Without corpus_administrator, administrator or owner, list your own keys with api_key_role=personal', {
          fieldErrors: { api_key_role: 'must be "personal"' },
        });
      }
      where.push({ field: 'creator_id', op: 'eq', value: owner });
    }
    if (q.keyType) where.push({ field: 'key_type', op: 'eq', value: q.keyType });
    const keep = q.corpusKey ? await this.corpusGrants.holdsOn<ApiKeyRow>(q.corpusKey, keyGrantedAt) : () => true;
    const page = await findMatching<ApiKeyRow>(this.reads, API_KEYS, { where, limit: q.limit, pageKey: q.pageKey }, keep);
    const rows = await this.corpusGrants.rowsInForce(page.items, keyGrantedAt);
    return { api_keys: await Promise.all(rows.map((r) => keyView(this.reads, this.corpusGrants, r))), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}
