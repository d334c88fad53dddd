import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AGENT_DIRECTORY, AGENT_SECRET_READER, AgentDirectory, AgentSecretReader } from '@lib/agents/runs';
import { SecretBox } from '@lib/llms';
import { CommandContext, ID_GENERATOR, IdGenerator, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId } from '@lib/platform';
import { connectorFold, ConnectorEvent, connectorNotFound, ConnectorSettings, ConnectorState, ConnectorType, decideCreateConnector, decideDeleteConnector, decideUpdateConnector, invalidConnector } from '../../domain/connector';
import { parseConfiguration, serviceAccountDisplay } from '../../domain/connector-config';
import { connectorView, CONNECTORS, ConnectorRow, webhookPath } from '../../read-models';
import type { LiveConnector } from './connector-platform.port';

export const connectorStream = (connectorId: string) => streamId('agent_connector', connectorId);
const aad = (connectorId: string) => `agent-connector:${connectorId}`;

export interface ConnectorInput {
  readonly name?: string;
  readonly description?: string;
  readonly metadata?: Record<string, unknown>;
  readonly enabled?: boolean;
  readonly configuration?: Record<string, unknown>;
}

/** Agent connectors (`/v2/agents/{key}/connectors`, docs/connectors.md): settings as events, credentials sealed. */
@Injectable()
export class Connectors {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(AGENT_SECRET_READER) private readonly secrets: AgentSecretReader,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
    private readonly box: SecretBox,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  private agent(agentKey: string): Promise<{ agentId: string; agentKey: string }> {
    return this.agents.require(agentKey);
  }

  private async write(connectorId: string, decide: (s: ConnectorState) => ConnectorEvent[], ctx: CommandContext): Promise<void> {
    const { position } = await this.streams.write<ConnectorState, ConnectorEvent>(connectorStream(connectorId), connectorFold, decide, ctx, ['agent_connectors']);
    await this.progress.waitFor(position, ['agent_connectors'], this.config.readYourWritesTimeoutMs);
  }

  private open(connectorId: string, sealed: Record<string, unknown> | null): Record<string, string> {
    return sealed ? this.box.open(sealed as never, aad(connectorId)) : {};
  }

  private seal(connectorId: string, values: Record<string, string>): Record<string, unknown> | null {
    return Object.keys(values).length ? (this.box.seal(values, aad(connectorId)) as unknown as Record<string, unknown>) : null;
  }

  /** `origin`: the service's public base URL as the caller reached it (PUBLIC_BASE_URL wins), for Chat's audience. */
  async create(agentKey: string, input: ConnectorInput, origin: string, ctx: CommandContext): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    const connectorId = `con_${this.ids.uuid().replace(/-/g, '')}`;
    const parsed = parseConfiguration(input.configuration ?? {}, Object.keys(await this.secrets.names(agentKey)));
    const literals = { ...parsed.literals };
    const secrets = { ...parsed.secrets };
    let plain = parsed.plain;
    if (parsed.type === 'zoom') {
      literals.connector_token = randomBytes(32).toString('base64url');
      secrets.connector_token = { sealed: true };
    }
    if (parsed.type === 'gchat') {
      const key = await this.value(agentKey, secrets.service_account_key, literals.service_account_key);
      const base = (this.config.env.PUBLIC_BASE_URL ?? origin).replace(/\/+$/, '');
      plain = { ...plain, ...serviceAccountDisplay(key), audience_url: `${base}${webhookPath(agentKey, connectorId, 'gchat')}` };
    }
    const settings: ConnectorSettings = { name: input.name!, ...(input.description !== undefined ? { description: input.description } : {}), metadata: input.metadata ?? {}, enabled: input.enabled ?? true, type: parsed.type, plain, secrets };
    await this.write(connectorId, (s) => decideCreateConnector(s, { ...agent, connectorId }, settings, this.seal(connectorId, literals), ctx.now), ctx);
    // The generated token is shown once, here: afterwards it reads `****` like every credential.
    return connectorView(await this.row(agentKey, connectorId), parsed.type === 'zoom' ? { connector_token: literals.connector_token } : {});
  }

  /** PATCH: given fields replace; a configuration omitting a credential keeps it; Zoom's token is always kept. */
  async update(agentKey: string, connectorId: string, input: ConnectorInput, ctx: CommandContext): Promise<Record<string, unknown>> {
    await this.agent(agentKey);
    const names = Object.keys(await this.secrets.names(agentKey));
    // A Chat key given by reference is read now: its display fields come from it (a decision reads no store).
    const keyRef = input.configuration?.type === 'gchat' ? (input.configuration.service_account_key as { $ref?: unknown } | undefined)?.$ref : undefined;
    const referencedKey = typeof keyRef === 'string' ? (await this.secrets.resolve(agentKey))[keyRef.replace(/^agent\.secrets\./, '')] : undefined;
    await this.write(
      connectorId,
      (s) => {
        if (s.status !== 'active' || s.agentKey !== agentKey) throw connectorNotFound(agentKey, connectorId);
        const old = s.settings;
        let config = { type: old.type, plain: old.plain, secrets: old.secrets };
        let literals = this.open(connectorId, s.sealed);
        if (input.configuration) {
          const parsed = parseConfiguration(input.configuration, names, old);
          if (parsed.type !== old.type) throw invalidConnector('configuration.type', `a ${old.type} connector stays ${old.type}; create another connector for ${parsed.type}`);
          const newKey = parsed.literals.service_account_key ?? referencedKey;
          const kept = Object.fromEntries(Object.entries(literals).filter(([field]) => 'sealed' in (parsed.secrets[field] ?? {}) || field === 'connector_token'));
          literals = { ...kept, ...parsed.literals };
          config = { type: old.type, plain: { ...parsed.plain, ...(parsed.type === 'gchat' && newKey !== undefined ? serviceAccountDisplay(newKey) : {}) }, secrets: { ...parsed.secrets, ...(old.secrets.connector_token ? { connector_token: old.secrets.connector_token } : {}) } };
        }
        const settings: ConnectorSettings = {
          ...old,
          ...config,
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
          ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        };
        return decideUpdateConnector(s, agentKey, connectorId, settings, this.seal(connectorId, literals), ctx.now);
      },
      ctx,
    );
    return this.get(agentKey, connectorId);
  }

  async remove(agentKey: string, connectorId: string, ctx: CommandContext): Promise<void> {
    await this.agent(agentKey);
    await this.write(connectorId, (s) => decideDeleteConnector(s, agentKey, connectorId, ctx.now), ctx);
  }

  async get(agentKey: string, connectorId: string): Promise<Record<string, unknown>> {
    return connectorView(await this.row(agentKey, connectorId));
  }

  private async row(agentKey: string, connectorId: string): Promise<ConnectorRow> {
    const agent = await this.agent(agentKey);
    const row = await this.reads.get<ConnectorRow>(CONNECTORS, connectorId);
    if (!row || row.agent_id !== agent.agentId) throw connectorNotFound(agentKey, connectorId);
    return row;
  }

  async list(agentKey: string, filter: { type?: ConnectorType; enabled?: boolean }, limit: number, pageKey?: string): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    const where = [
      { field: 'agent_id', op: 'eq' as const, value: agent.agentId },
      ...(filter.type ? [{ field: 'type', op: 'eq' as const, value: filter.type }] : []),
      ...(filter.enabled !== undefined ? [{ field: 'enabled', op: 'eq' as const, value: filter.enabled }] : []),
    ];
    const page = await this.reads.find<ConnectorRow>(CONNECTORS, { where, limit, pageKey });
    return { connectors: page.items.map((r) => connectorView(r)), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  /** The connector from its stream (the truth, not a projection that may lag a delete), credentials opened. */
  async live(agentKey: string, connectorId: string): Promise<LiveConnector | undefined> {
    if (!/^con_[0-9A-Za-z_-]{1,64}$/.test(connectorId)) return undefined;
    const state = await this.streams.state(connectorStream(connectorId), connectorFold);
    if (state.status !== 'active' || state.agentKey !== agentKey) return undefined;
    // A deleted agent's connectors answer nothing, nor do they serve an agent re-created under the key.
    if ((await this.agents.currentId(agentKey)) !== state.agentId) return undefined;
    const literals = this.open(connectorId, state.sealed);
    const refs = Object.values(state.settings.secrets).some((s) => 'ref' in s) ? await this.secrets.resolve(agentKey) : {};
    const credentials: Record<string, string> = {};
    for (const [field, source] of Object.entries(state.settings.secrets)) {
      const value = 'ref' in source ? refs[source.ref] : literals[field];
      if (value !== undefined) credentials[field] = value;
    }
    return { agentId: state.agentId, agentKey, connectorId, settings: state.settings, credentials };
  }

  private async value(agentKey: string, source: ConnectorSettings['secrets'][string] | undefined, literal: string | undefined): Promise<string> {
    if (literal !== undefined) return literal;
    if (source && 'ref' in source) return (await this.secrets.resolve(agentKey))[source.ref] ?? '';
    return '';
  }
}
