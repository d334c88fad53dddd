import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CommandContext, findMatching, ID_GENERATOR, IdGenerator, notFound, READ_STORE, ReadStore } from '@lib/platform';
import { CreateUserInput, decideCreateUser, decideDeleteUser, decideUpdateUser, UpdateUserInput, userFold, UserState } from '../domain/user';
import { ApiKeyEvent, apiKeyFold, ApiKeyState } from '../domain/api-key';
import { digestOf, formatKey, newSecret } from '../domain/credentials';
import { NO_GRANTS } from '../domain/roles';
import { AuthWriter } from './auth-writer';
import { CorpusGrants } from './corpus-grants';
import type { Principal } from './principal';
import { USERS, UserRow, userView } from '../read-models';
import { apiKeyStream, userStream } from './streams';

export class CreateUser {
  constructor(
    readonly input: CreateUserInput,
    readonly principal: Principal,
    readonly ctx: CommandContext,
  ) {}
}
export class UpdateUser {
  constructor(
    readonly username: string,
    readonly input: UpdateUserInput,
    readonly principal: Principal,
    readonly ctx: CommandContext,
  ) {}
}
export class DeleteUser {
  constructor(
    readonly username: string,
    readonly principal: Principal,
    readonly ctx: CommandContext,
  ) {}
}
export class GetUser {
  constructor(readonly username: string) {}
}
export class ListUsers {
  constructor(
    readonly limit: number,
    readonly pageKey?: string,
    readonly corpusKey?: string,
  ) {}
}

export type UserView = ReturnType<typeof userView>;

@CommandHandler(CreateUser)
export class CreateUserHandler implements ICommandHandler<CreateUser> {
  constructor(
    private readonly writer: AuthWriter,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    private readonly corpusGrants: CorpusGrants,
  ) {}
  /**
   * Users sign in with keys (there are no passwords): the new user's first personal key is created with the
   * user and returned once, for the administrator to hand over. It carries the user's roles, never more.
   */
  async execute(c: CreateUser): Promise<{ visible: boolean; apiKey: string }> {
    const bound = await this.corpusGrants.bind(c.input.grants);
    const decide = (s: UserState) => {
      const events = decideCreateUser(s, { ...c.input, grants: bound.grants }, c.principal.caps, c.ctx.now, () => this.ids.numeric('usr'));
      bound.check();
      return events;
    };
    const { events } = await this.writer.write(userStream(c.input.username), userFold, decide, c.ctx);
    const userId = (events[0].data as { userId: string }).userId;
    const keyId = this.ids.numeric('aky');
    const apiKey = formatKey('personal', keyId, newSecret());
    const created: ApiKeyEvent[] = [
      {
        type: 'ApiKeyCreated',
        data: {
          keyId,
          name: `${c.input.username} personal key`,
          keyType: 'personal',
          grants: NO_GRANTS,
          creator: { kind: 'user', userId, username: c.input.username },
          digest: digestOf(apiKey),
          createdAt: c.ctx.now.toISOString(),
        },
      },
    ];
    const key = await this.writer.write(apiKeyStream(keyId), apiKeyFold, (s: ApiKeyState) => (s.status === 'absent' ? created : []), c.ctx);
    return { visible: key.visible, apiKey };
  }
}

@CommandHandler(UpdateUser)
export class UpdateUserHandler implements ICommandHandler<UpdateUser> {
  constructor(
    private readonly writer: AuthWriter,
    private readonly corpusGrants: CorpusGrants,
  ) {}
  /** New roles are a new grant: each corpus role binds to the corpus its key names now. */
  async execute(c: UpdateUser) {
    const bound = c.input.grants ? await this.corpusGrants.bind(c.input.grants) : undefined;
    const decide = (s: UserState) => {
      const events = decideUpdateUser(s, c.username, { ...c.input, ...(bound ? { grants: bound.grants } : {}) }, c.principal.caps, c.ctx.now);
      bound?.check();
      return events;
    };
    return this.writer.write(userStream(c.username), userFold, decide, c.ctx);
  }
}

@CommandHandler(DeleteUser)
export class DeleteUserHandler implements ICommandHandler<DeleteUser> {
  constructor(private readonly writer: AuthWriter) {}
  async execute(c: DeleteUser) {
    return this.writer.write(userStream(c.username), userFold, (s: UserState) => decideDeleteUser(s, c.username, c.principal.caps, c.ctx.now), c.ctx);
  }
}

/** When a user's unbound (pre-binding) roles were granted at the latest (corpus-grants.ts). */
const userGrantedAt = (row: UserRow): string => row.updated_at;

@QueryHandler(GetUser)
export class GetUserHandler implements IQueryHandler<GetUser, UserView> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly corpusGrants: CorpusGrants,
  ) {}
  async execute(q: GetUser): Promise<UserView> {
    const row = await this.reads.get<UserRow>(USERS, q.username);
    if (!row) throw notFound('user.not_found', `User "${q.username}" not found`, q.username);
    return userView((await this.corpusGrants.rowsInForce([row], userGrantedAt))[0]);
  }
}

@QueryHandler(ListUsers)
export class ListUsersHandler implements IQueryHandler<ListUsers, { users: UserView[]; metadata: { page_key?: string } }> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly corpusGrants: CorpusGrants,
  ) {}
  async execute(q: ListUsers) {
    const keep = q.corpusKey ? await this.corpusGrants.holdsOn<UserRow>(q.corpusKey, userGrantedAt) : () => true;
    const page = await findMatching<UserRow>(this.reads, USERS, { limit: q.limit, pageKey: q.pageKey }, keep);
    const rows = await this.corpusGrants.rowsInForce(page.items, userGrantedAt);
    return { users: rows.map(userView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}
