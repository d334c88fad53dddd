import { Inject, Injectable } from '@nestjs/common';
import { SecretBox } from '@lib/llms';
import { CommandContext, conflict, DomainError, findMatching, ID_GENERATOR, IdGenerator, invalid, notFound, TOOLS_OUTBOUND_HTTP, OutboundHttp, outboundRefusal, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId, type TextPattern } from '@lib/platform';
import { McpConnector, McpTarget } from '../mcp-connector.port';
import type { ToolConfig } from '../../domain/tool-config';
import { decideCreateToolServer, decideUpdateServerTool, decideUpdateToolServer, Sealed, ToolServerEvent, toolServerFold, toolServerNotFound, ToolServerSettings, ToolServerState } from '../../domain/tool-server';
import { CatalogToolRow, catalogToolView, serverToolEnabled, TOOL_CATALOG, TOOL_SERVERS, ToolServerRow, toolServerView, USER_TOOLS, UserToolRow, userToolView } from '../../read-models';
import { builtinTools } from '../tools/builtin-catalog';
import { ConfiguredTools, ToolAttachments, ToolRegistry } from '../tools/tool.port';
import { ToolRegistryHolder } from '../tools/tool-registry-holder';
import { Configurer, SharedConfiguration, SharedConfigurationRights } from '../configuration-rights.port';
import { ToolReferenceCheck, ToolUsers } from '../tool-users.port';

const stream = (id: string) => streamId('tool_server', id);

/** A server's auth as given: the secret is sealed before anything is stored. */
export type ToolServerAuth = { type: 'bearer'; token: string } | { type: 'header'; header: string; value: string };

export interface ToolServerInput {
  readonly name?: string;
  readonly type?: 'mcp';
  readonly description?: string;
  readonly uri?: string;
  readonly headers?: Record<string, string>;
  readonly transport?: 'sse' | 'streamable-http';
  readonly enabled?: boolean;
  readonly metadata?: Record<string, unknown>;
  readonly auth?: ToolServerAuth | null;
}

/** MCP tool servers (`/v2/tool_servers`) and the tools their syncs listed (`/v2/tools`). */
@Injectable()
export class ToolServers implements ToolAttachments {
  constructor(
    private readonly streams: StreamWriter,
    private readonly box: SecretBox,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(TOOLS_OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly registryHolder: ToolRegistryHolder,
    private readonly rights: SharedConfigurationRights,
    private readonly users: ToolUsers,
    private readonly mcp: McpConnector,
  ) {}

  /** The tool registry, bound after this service is built: the mcp tool in it needs this service first. */
  private get registry(): ToolRegistry {
    return this.registryHolder.registry;
  }

  private write(id: string, decide: (s: ToolServerState) => ToolServerEvent[], ctx: CommandContext) {
    return this.streams.write<ToolServerState, ToolServerEvent>(stream(id), toolServerFold, decide, ctx, ['tool_servers']);
  }

  private seal(id: string, auth: ToolServerAuth | null | undefined): { settings: ToolServerSettings['auth']; sealed?: Sealed } {
    if (!auth) return { settings: undefined };
    const secret = auth.type === 'bearer' ? auth.token : auth.value;
    return { settings: auth.type === 'bearer' ? { type: 'bearer' } : { type: 'header', header: auth.header }, sealed: this.box.seal({ secret }, `tool-server:${id}`) as unknown as Sealed };
  }

  async create(input: ToolServerInput, ctx: CommandContext): Promise<Record<string, unknown>> {
    const id = `tsr_${this.ids.uuid().replace(/-/g, '').slice(0, 20)}`;
    await this.outboundAllowed(input.uri);
    const { settings: auth, sealed } = this.seal(id, input.auth);
    const settings: ToolServerSettings = { name: input.name!, type: 'mcp', ...(input.description ? { description: input.description } : {}), uri: input.uri!, headers: input.headers ?? {}, transport: input.transport ?? 'sse', enabled: input.enabled ?? true, metadata: input.metadata ?? {}, ...(auth ? { auth } : {}) };
    await this.write(id, (s) => decideCreateToolServer(s, id, settings, sealed, ctx.now), ctx);
    return this.get(id);
  }

  private shared = (id: string): SharedConfiguration => ({ kind: 'tool_server', id, label: `Tool server "${id}"` });

  /** Its address, headers and credentials are where every agent using its tools sends their calls. */
  async update(id: string, input: ToolServerInput, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    if (input.uri) await this.outboundAllowed(input.uri);
    await this.rights.assertSharedChange(caller, this.shared(id));
    await this.write(
      id,
      (s) => {
        if (s.status === 'absent') throw toolServerNotFound(id);
        const rotated = input.auth !== undefined ? this.seal(id, input.auth) : { settings: s.settings.auth, sealed: s.sealedAuth };
        const { auth: _old, ...current } = s.settings;
        const settings: ToolServerSettings = { ...current, ...stripUndefined({ name: input.name, description: input.description, uri: input.uri, headers: input.headers, transport: input.transport, enabled: input.enabled, metadata: input.metadata }), ...(rotated.settings ? { auth: rotated.settings } : {}) } as ToolServerSettings;
        return decideUpdateToolServer(s, id, settings, rotated.sealed, ctx.now);
      },
      ctx,
    );
    return this.get(id);
  }

  async remove(id: string, caller: Configurer, ctx: CommandContext): Promise<void> {
    await this.rights.assertSharedChange(caller, this.shared(id));
    const tools = await this.reads.find<CatalogToolRow>(TOOL_CATALOG, { where: [{ field: 'server_id', op: 'eq', value: id }], limit: 1000 });
    const ids = new Set(tools.items.map((t) => t.id));
    const users = await this.users.agentsUsing((a) => Object.values(a.config.tool_configurations).some((t) => t.type === 'mcp' && ids.has(String(t.tool_id))));
    if (users.length) throw conflict('tool_server.in_use', `Tool server "${id}" has tools used by agent${users.length > 1 ? 's' : ''} ${users.map((a) => a.id).join(', ')}`);
    const { position } = await this.write(id, (s) => (s.status === 'absent' ? (() => { throw toolServerNotFound(id); })() : [{ type: 'ToolServerDeleted', data: { id, deletedAt: ctx.now.toISOString() } }]), ctx);
    await this.progress.waitFor(position, ['tool_servers'], this.config.readYourWritesTimeoutMs);
  }

  async get(id: string): Promise<Record<string, unknown>> {
    return toolServerView(await this.row(id));
  }

  private async row(id: string): Promise<ToolServerRow> {
    const row = await this.reads.get<ToolServerRow>(TOOL_SERVERS, id);
    if (!row) throw toolServerNotFound(id);
    return row;
  }

  async list(limit: number, pageKey?: string, filter?: TextPattern, enabled?: boolean): Promise<Record<string, unknown>> {
    const where = enabled === undefined ? [] : [{ field: 'enabled', op: 'eq' as const, value: enabled }];
    const page = await findMatching<ToolServerRow>(this.reads, TOOL_SERVERS, { where, limit, pageKey }, (r) => !filter || filter.test(r.name) || filter.test(r.settings.description ?? ''));
    return { tool_servers: page.items.map(toolServerView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  /** Lists the server's tools now and records them; a server that cannot be reached is a 502 saying why. */
  async sync(id: string, caller: Configurer, ctx: CommandContext): Promise<void> {
    const row = await this.row(id);
    // A sync changes the tools (descriptions, schemas) the agents using the server are offered.
    await this.rights.assertSharedChange(caller, this.shared(id));
    let tools;
    try {
      tools = await this.mcp.listTools(this.target(row), AbortSignal.timeout(30_000));
    } catch (e) {
      const refused = outboundRefusal(e);
      throw new DomainError('upstream', 'tool_server.unreachable', `Tool server "${row.name}" could not be synced: ${refused ? refused.message : ((e as Error).message ?? 'failed')}`);
    }
    const { position } = await this.write(id, (s) => (s.status === 'absent' ? (() => { throw toolServerNotFound(id); })() : [{ type: 'ToolServerSynced', data: { id, tools, syncedAt: ctx.now.toISOString() } }]), ctx);
    await this.progress.waitFor(position, ['tool_servers'], this.config.readYourWritesTimeoutMs);
  }

  /**
   * The built-in tools (on the first page, beside the limit: there are a handful) and the tools MCP syncs listed
   * (paged), filtered by `type` and by a regular expression over name and description.
   */
  async tools(limit: number, pageKey?: string, type?: string, filter?: TextPattern, filters: { readonly toolServerId?: string; readonly enabled?: boolean } = {}): Promise<Record<string, unknown>> {
    const { toolServerId, enabled } = filters;
    const matches = (name: string, description: string) => !filter || filter.test(name) || filter.test(description);
    const first = !pageKey;
    // Built-in and user-defined tools belong to no tool server: a tool_server_id filter lists that server's only.
    const unserved = first && toolServerId === undefined;
    // `type` matches the listed type (dynamic_vectara for the tools the reference has no type for) or the tool's own.
    const builtins = unserved ? builtinTools(this.registry).filter((t) => (!type || t.type === type || t.name === type) && (enabled === undefined || t.enabled === enabled) && matches(String(t.name), String(t.description))) : [];
    // User-defined tools come on the first page too (beside the limit, like the built-ins); MCP tools are paged.
    const users = unserved && (!type || type === 'lambda' || type === 'client') ? (await findMatching<UserToolRow>(this.reads, USER_TOOLS, { limit: 1000 }, (r) => (!type || r.type === type) && (enabled === undefined || r.enabled === enabled) && matches(r.name, r.settings.description))).items.map(userToolView) : [];
    if (type && type !== 'mcp') return { tools: [...builtins, ...users], metadata: {} };
    const servers = new Map((await this.reads.find<ToolServerRow>(TOOL_SERVERS, { where: toolServerId === undefined ? [] : [{ field: 'id', op: 'eq', value: toolServerId }], limit: 1000 })).items.map((r) => [r.id, r]));
    const on = (r: CatalogToolRow) => serverToolEnabled(servers.get(r.server_id), r.tool.name);
    const where = toolServerId === undefined ? [] : [{ field: 'server_id', op: 'eq' as const, value: toolServerId }];
    const page = await findMatching<CatalogToolRow>(this.reads, TOOL_CATALOG, { where, limit, pageKey }, (r) => (enabled === undefined || on(r) === enabled) && matches(r.tool.name, r.tool.description));
    return { tools: [...builtins, ...users, ...page.items.map((r) => catalogToolView(r, on(r)))], metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  async tool(id: string): Promise<Record<string, unknown>> {
    const builtin = builtinTools(this.registry).find((t) => t.id === id);
    if (builtin) return builtin;
    const user = await this.reads.get<UserToolRow>(USER_TOOLS, id);
    if (user) return userToolView(user);
    const row = await this.reads.get<CatalogToolRow>(TOOL_CATALOG, id);
    if (!row) throw notFound('tool.not_found', `Tool "${id}" does not exist`, id);
    return catalogToolView(row, serverToolEnabled(await this.reads.get<ToolServerRow>(TOOL_SERVERS, row.server_id), row.tool.name));
  }

  /**
   * `PATCH /v2/tools/{id}` with the reference's UpdateMcpToolRequest: enables or disables a tool a server's sync
   * listed. The server's other tools and the server itself are unchanged; a disabled tool is not offered to agents.
   */
  async updateTool(id: string, enabled: boolean | undefined, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    const row = await this.reads.get<CatalogToolRow>(TOOL_CATALOG, id);
    if (!row) {
      const user = await this.reads.get<UserToolRow>(USER_TOOLS, id);
      if (user) throw invalid('request.invalid', `Invalid type: tool "${id}" is a ${user.type} tool`, { type: `must be ${user.type}` });
      throw notFound('tool.not_found', `Tool "${id}" does not exist`, id);
    }
    if (enabled !== undefined) {
      // Which tools the agents using the server are offered changes.
      await this.rights.assertSharedChange(caller, this.shared(row.server_id));
      const { position } = await this.write(row.server_id, (s) => decideUpdateServerTool(s, row.server_id, row.tool.name, enabled, ctx.now), ctx);
      await this.progress.waitFor(position, ['tool_servers'], this.config.readYourWritesTimeoutMs);
    }
    return this.tool(id);
  }

  /** How to reach a server: its settings, the secret opened for the auth header, the guarded fetch. */
  target(row: ToolServerRow): McpTarget {
    const auth = row.settings.auth;
    const secret = auth && row.sealed_auth ? this.box.open(row.sealed_auth as never, `tool-server:${row.id}`).secret : undefined;
    const authHeaders: Record<string, string> = !auth || !secret ? {} : auth.type === 'bearer' ? { authorization: `Bearer ${secret}` } : { [auth.header]: secret };
    return { settings: row.settings, authHeaders, fetch: this.outbound.fetch };
  }

  /**
   * An agent's `mcp` and `lambda` tools with what the model and the call need: the listed tool (description, input
   * schema) and its server, or the lambda's settings; a tool whose server is gone, disabled or no longer lists it,
   * or a lambda that is gone or disabled, is not offered.
   */
  async attach<C extends ConfiguredTools>(config: C): Promise<C> {
    if (!Object.values(config.tool_configurations).some((t) => t.type === 'mcp' || t.type === 'lambda' || (t.type === 'client' && t.tool_id !== undefined))) return config;
    return { ...config, tool_configurations: await this.attachTools(config.tool_configurations) };
  }

  async attachTools(configs: Readonly<Record<string, ToolConfig>>): Promise<Record<string, ToolConfig>> {
    const tools: Record<string, ToolConfig> = {};
    for (const [name, tool] of Object.entries(configs)) {
      if (tool.type === 'lambda' || (tool.type === 'client' && tool.tool_id !== undefined)) {
        const row = await this.reads.get<UserToolRow>(USER_TOOLS, String(tool.tool_id));
        if (row?.enabled && row.type === tool.type) tools[name] = { ...tool, [tool.type === 'lambda' ? 'lambda_tool' : 'client_tool']: row.settings } as ToolConfig;
        continue;
      }
      if (tool.type !== 'mcp') {
        tools[name] = tool;
        continue;
      }
      const listed = await this.reads.get<CatalogToolRow>(TOOL_CATALOG, String(tool.tool_id));
      const server = listed ? await this.reads.get<ToolServerRow>(TOOL_SERVERS, listed.server_id) : undefined;
      if (!listed || !server?.enabled || !serverToolEnabled(server, listed.tool.name)) continue;
      tools[name] = { ...tool, mcp_tool: listed.tool, mcp_server_id: server.id } as ToolConfig;
    }
    return tools;
  }

  private async outboundAllowed(uri: string | undefined): Promise<void> {
    if (!uri || !/^https?:\/\/[^/]/i.test(uri)) return;
    const refused = await this.outbound.policy.checkResolved(uri);
    if (refused) throw invalid('tool_server.outbound_refused', `Invalid uri: ${refused.message}`, { uri: refused.message });
  }
}

/** Agents' `mcp` tools name tools a sync listed (400 naming the entry). */
export const mcpToolCheck =
  (reads: ReadStore): ToolReferenceCheck =>
  async (config) => {
    const problems: Record<string, string> = {};
    for (const [name, tool] of Object.entries(config.tool_configurations)) {
      if (tool.type !== 'mcp') continue;
      if (typeof tool.tool_id !== 'string' || !(await reads.get(TOOL_CATALOG, tool.tool_id))) problems[`tool_configurations.${name}.tool_id`] = `no tool "${String(tool.tool_id)}": sync its tool server, then GET /v2/tools lists the ids`;
    }
    return problems;
  };

const stripUndefined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
