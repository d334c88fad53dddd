import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CommandContext, findMatching, ID_GENERATOR, IdGenerator, notFound, READ_STORE, ReadStore, type TextPattern } from '@lib/platform';
import { AppClientEvent, appClientFold, AppClientState, decideCreateAppClient, decideDeleteAppClient, decideUpdateAppClient, UpdateAppClientInput } from '../domain/app-client';
import { digestOf, newSecret } from '../domain/credentials';
import type { Grants } from '../domain/roles';
import { AuthWriter } from './auth-writer';
import { CorpusGrants } from './corpus-grants';
import type { Principal } from './principal';
import { APP_CLIENTS, AppClientRow, appClientRow, appClientView } from '../read-models';
import { appClientStream } from './streams';

export type AppClientView = ReturnType<typeof appClientView>;

export class CreateAppClient {
  constructor(
    readonly input: { name: string; description: string; grants: Grants },
    readonly principal: Principal,
    readonly ctx: CommandContext,
  ) {}
}
export class UpdateAppClient {
  constructor(
    readonly appClientId: string,
    readonly input: UpdateAppClientInput,
    readonly principal: Principal,
    readonly ctx: CommandContext,
  ) {}
}
export class DeleteAppClient {
  constructor(
    readonly appClientId: string,
    readonly principal: Principal,
    readonly ctx: CommandContext,
  ) {}
}
export class GetAppClient {
  constructor(readonly appClientId: string) {}
}
export class ListAppClients {
  constructor(
    readonly limit: number,
    readonly pageKey?: string,
    readonly filter?: TextPattern,
  ) {}
}

const createdIn = (events: readonly AppClientEvent[]) => {
  const created = events.find((e) => e.type === 'AppClientCreated');
  if (!created) throw new Error('CreateAppClient appended no AppClientCreated');
  return created.data;
};

const clientNotFound = (id: string) => notFound('app_client.not_found', `App client ${id} not found`, id);

@CommandHandler(CreateAppClient)
export class CreateAppClientHandler implements ICommandHandler<CreateAppClient> {
  constructor(
    private readonly writer: AuthWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    private readonly corpusGrants: CorpusGrants,
  ) {}

  /** The client secret is returned here once; only its digest is stored. */
  async execute(c: CreateAppClient): Promise<{ view: AppClientView; visible: boolean }> {
    const appClientId = this.ids.numeric('app');
    const clientId = newSecret().replace(/[-_]/g, '').slice(0, 26);
    const clientSecret = newSecret();
    const bound = await this.corpusGrants.bind(c.input.grants);
    const input = { ...c.input, grants: bound.grants, clientId, secretDigest: digestOf(clientSecret) };
    const decide = (s: AppClientState) => {
      const events = decideCreateAppClient(s, appClientId, input, c.principal.caps, c.ctx.now);
      bound.check();
      return events;
    };
    const { events, visible } = await this.writer.write(appClientStream(appClientId), appClientFold, decide, c.ctx);
    const stored = visible ? await this.reads.get<AppClientRow>(APP_CLIENTS, appClientId) : undefined;
    // Past the read-your-writes bound the row is made from the event, as the projection will make it.
    const row = stored ?? appClientRow(createdIn(events));
    return { view: appClientView(row, clientSecret), visible };
  }
}

@CommandHandler(UpdateAppClient)
export class UpdateAppClientHandler implements ICommandHandler<UpdateAppClient> {
  constructor(
    private readonly writer: AuthWriter,
    private readonly corpusGrants: CorpusGrants,
  ) {}
  /** New roles are a new grant: each corpus role binds to the corpus its key names now. */
  async execute(c: UpdateAppClient) {
    const bound = c.input.grants ? await this.corpusGrants.bind(c.input.grants) : undefined;
    const decide = (s: AppClientState) => {
      const events = decideUpdateAppClient(s, c.appClientId, { ...c.input, ...(bound ? { grants: bound.grants } : {}) }, c.principal.caps, c.ctx.now);
      bound?.check();
      return events;
    };
    return this.writer.write(appClientStream(c.appClientId), appClientFold, decide, c.ctx);
  }
}

@CommandHandler(DeleteAppClient)
export class DeleteAppClientHandler implements ICommandHandler<DeleteAppClient> {
  constructor(private readonly writer: AuthWriter) {}
  async execute(c: DeleteAppClient) {
    return this.writer.write(appClientStream(c.appClientId), appClientFold, (s: AppClientState) => decideDeleteAppClient(s, c.appClientId, c.principal.caps, c.ctx.now), c.ctx);
  }
}

/** When a client's unbound (pre-binding) roles were granted at the latest (corpus-grants.ts). */
const clientGrantedAt = (row: AppClientRow): string => row.updated_at;

@QueryHandler(GetAppClient)
export class GetAppClientHandler implements IQueryHandler<GetAppClient, AppClientView> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly corpusGrants: CorpusGrants,
  ) {}
  async execute(q: GetAppClient): Promise<AppClientView> {
    const row = await this.reads.get<AppClientRow>(APP_CLIENTS, q.appClientId);
    if (!row) throw clientNotFound(q.appClientId);
    return appClientView((await this.corpusGrants.rowsInForce([row], clientGrantedAt))[0]);
  }
}

@QueryHandler(ListAppClients)
export class ListAppClientsHandler implements IQueryHandler<ListAppClients> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly corpusGrants: CorpusGrants,
  ) {}
  async execute(q: ListAppClients): Promise<{ app_clients: AppClientView[]; metadata: { page_key?: string } }> {
    const keep = (row: AppClientRow) => !q.filter || q.filter.test(row.name) || q.filter.test(row.description);
    const page = await findMatching<AppClientRow>(this.reads, APP_CLIENTS, { limit: q.limit, pageKey: q.pageKey }, keep);
    const rows = await this.corpusGrants.rowsInForce(page.items, clientGrantedAt);
    return { app_clients: rows.map((r) => appClientView(r)), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}
