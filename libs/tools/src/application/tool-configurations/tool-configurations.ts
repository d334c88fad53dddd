import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, conflict, findMatching, ID_GENERATOR, IdGenerator, invalid, keyFromName, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId, type TextPattern } from '@lib/platform';
import type { ToolConfig } from '../../domain/tool-config';
import {
  decideCreateToolConfiguration,
  decideDeleteToolConfiguration,
  decideUpdateToolConfiguration,
  ReusableToolConfig,
  ToolConfigurationEvent,
  toolConfigurationFold,
  toolConfigurationNotFound,
  ToolConfigurationState,
} from '../../domain/tool-configuration';
import { TOOL_CONFIGURATIONS, ToolConfigurationRow, toolConfigurationView } from '../../read-models';
import { Sandbox } from '../sandbox.port';
import { Configurer, SharedConfiguration, SharedConfigurationRights } from '../configuration-rights.port';
import { approvalConditionProblems, ConditionSyntax } from '../condition-syntax.port';
import { ToolReferenceCheck, ToolUsers } from '../tool-users.port';
import type { ConfiguredTools } from '../tools/tool.port';
import { transformProblems } from '../tools/transform-check';

const stream = (key: string) => streamId('tool_configuration', key);
const IDENTITY = ['key', 'created_at', 'updated_at'];

/** Reusable tool configurations (`/v2/tool_configurations`) and their use by agents' `reference` entries. */
@Injectable()
export class ToolConfigurations {
  constructor(
    private readonly streams: StreamWriter,
    private readonly sandbox: Sandbox,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly rights: SharedConfigurationRights,
    private readonly users: ToolUsers,
    private readonly conditions: ConditionSyntax,
  ) {}

  private shared = (key: string): SharedConfiguration => ({ kind: 'tool_configuration', id: key, label: `Tool configuration "${key}"` });

  private write(key: string, decide: (s: ToolConfigurationState) => ToolConfigurationEvent[], ctx: CommandContext) {
    return this.streams.write<ToolConfigurationState, ToolConfigurationEvent>(stream(key), toolConfigurationFold, decide, ctx, ['tool_configurations']);
  }

  async create(body: Record<string, unknown>, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    const fields = Object.fromEntries(Object.entries(body).filter(([k]) => !IDENTITY.includes(k)));
    const config = { ...fields, enabled: body.enabled ?? true, metadata: body.metadata ?? {} } as unknown as ReusableToolConfig;
    const key = typeof body.key === 'string' ? body.key : keyFromName(String(body.name ?? 'tool'), this.ids.uuid().slice(0, 8));
    await this.checkTransforms(config);
    await this.rights.assertSharedWrite(caller, this.shared(key), { '': config as unknown as ToolConfig }, '');
    await this.write(key, (s) => decideCreateToolConfiguration(s, key, config, ctx.now), ctx);
    return this.get(key);
  }

  /**
   * A change applies to every agent that refers to the configuration at its next turn: the writer must be able
   * to make it on each of them (ConfigurerRights), judged on the whole configuration the change leaves.
   */
  async update(key: string, patch: Record<string, unknown>, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    const current = await this.streams.state(stream(key), toolConfigurationFold);
    if (current.status === 'active') {
      await this.checkTransforms({ ...current.config, ...patch } as ReusableToolConfig);
      const next = decideUpdateToolConfiguration(current, key, patch, ctx.now)[0];
      if (next?.type === 'ToolConfigurationUpdated') await this.rights.assertSharedWrite(caller, this.shared(key), { '': next.data.config as unknown as ToolConfig }, '');
    }
    await this.write(key, (s) => decideUpdateToolConfiguration(s, key, patch, ctx.now), ctx);
    return this.get(key);
  }

  async remove(key: string, caller: Configurer, ctx: CommandContext): Promise<void> {
    await this.rights.assertSharedChange(caller, this.shared(key));
    const users = await this.usedBy(key);
    if (users.length) throw conflict('tool_configuration.in_use', `Tool configuration "${key}" is used by agent${users.length > 1 ? 's' : ''} ${users.join(', ')}: remove the reference first`);
    const { position } = await this.write(key, (s) => decideDeleteToolConfiguration(s, key, ctx.now), ctx);
    await this.progress.waitFor(position, ['tool_configurations'], this.config.readYourWritesTimeoutMs);
  }

  async get(key: string): Promise<Record<string, unknown>> {
    const row = await this.reads.get<ToolConfigurationRow>(TOOL_CONFIGURATIONS, key);
    if (!row) throw toolConfigurationNotFound(key);
    return toolConfigurationView(row);
  }

  async list(limit: number, pageKey?: string, type?: string, filter?: TextPattern): Promise<Record<string, unknown>> {
    const where = type ? [{ field: 'type', op: 'eq' as const, value: type }] : [];
    const page = await findMatching<ToolConfigurationRow>(this.reads, TOOL_CONFIGURATIONS, { where, limit, pageKey }, (r) => !filter || filter.test(r.name) || filter.test(r.config.description ?? ''));
    return { tool_configurations: page.items.map(toolConfigurationView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  private async checkTransforms(config: ReusableToolConfig): Promise<void> {
    const problems = { ...approvalConditionProblems(this.conditions, { '': config }, ''), ...(await transformProblems(this.sandbox, { '': config }, '')) };
    const first = Object.entries(problems)[0];
    if (first) throw invalid('tool_configuration.invalid', `Invalid ${first[0]}: ${first[1]}`, problems);
  }

  private async usedBy(key: string): Promise<string[]> {
    const users = await this.users.agentsUsing((a) => (a.tool_configuration_keys ?? []).includes(key));
    return users.map((a) => a.id);
  }

  /**
   * An agent's tools as a turn uses them: each `reference` replaced by the configuration it names, with the
   * reference's own fields over it; a disabled or missing configuration is not offered, nor an enrichment-only one
   * outside session enrichment.
   */
  async resolve<C extends ConfiguredTools>(config: C, options: { enrichment?: boolean } = {}): Promise<C> {
    const entries = Object.entries(config.tool_configurations);
    if (!entries.some(([, t]) => t.type === 'reference')) return config;
    const tools: Record<string, ToolConfig> = {};
    for (const [name, tool] of entries) {
      if (tool.type !== 'reference') {
        tools[name] = tool;
        continue;
      }
      const row = await this.reads.get<ToolConfigurationRow>(TOOL_CONFIGURATIONS, String(tool.tool_configuration_key));
      if (!row || !row.enabled || (row.config.enrichment_only && !options.enrichment)) continue;
      const { type: _t, tool_configuration_key: _k, ...overrides } = tool;
      const { name: _n, enabled: _e, metadata: _m, enrichment_only: _o, ...settings } = row.config;
      tools[name] = { ...settings, ...overrides } as ToolConfig;
    }
    return { ...config, tool_configurations: tools };
  }
}

/** Agents refer only to reusable configurations that exist (400 naming the entry). */
export const toolReferenceCheck =
  (reads: ReadStore): ToolReferenceCheck =>
  async (config) => {
    const problems: Record<string, string> = {};
    for (const [name, tool] of Object.entries(config.tool_configurations)) {
      if (tool.type !== 'reference') continue;
      if (!(await reads.get(TOOL_CONFIGURATIONS, String(tool.tool_configuration_key)))) problems[`tool_configurations.${name}.tool_configuration_key`] = `no tool configuration "${String(tool.tool_configuration_key)}" (GET /v2/tool_configurations lists them)`;
    }
    return problems;
  };
