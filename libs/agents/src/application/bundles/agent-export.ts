import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, READ_STORE, ReadStore } from '@lib/platform';
import { TOOL_CATALOG, TOOL_CONFIGURATIONS, TOOL_SERVERS, USER_TOOLS, type CatalogToolRow, type ToolConfig, type ToolConfigurationRow, type ToolServerRow, type UserToolRow, type UserToolSettings } from '@lib/tools';
import { agentNotFound } from '../../domain/agent';
import {
  AGENT_BUNDLE_FORMAT,
  AGENT_BUNDLE_VERSION,
  AgentBundle,
  agentSecretNames,
  BundledGlossary,
  BundledInstruction,
  BundledTool,
  BundledToolConfiguration,
  BundledToolServer,
  instructionReferences,
  reminderGlossaries,
  toolNames,
} from '../../domain/agent-bundle';
import { latestVersion } from '../../domain/instruction';
import { GLOSSARIES, GlossaryRow } from '../../read-models';
import { AgentWriter } from '../agent-writer';
import { AgentSecrets } from '../access/agent-access';
import { Glossaries } from '../glossaries/glossaries';
import { InstructionWriter } from '../instruction-writer';

/** A `/v2/tools` tool's settings as its create request takes them (a lambda's schemas come from its code). */
export function bundledTool(id: string, settings: UserToolSettings): BundledTool {
  if (settings.type === 'client') {
    const { type, name, title, description, input_schema, output_schema, enabled } = settings;
    return strip({ id, type, name, title, description, input_schema, output_schema, enabled }) as BundledTool;
  }
  const { type, name, title, description, language, code, execution_configuration, tool_configurations, enabled } = settings;
  return strip({ id, type, name, title, description, language, code, execution_configuration, tool_configurations, enabled }) as BundledTool;
}

/** A query string may carry a token (`?api_key=…`): the address goes without it. */
const withoutQuery = (uri: string): string => uri.split(/[?#]/)[0];

const strip = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** `GET /v2/agents/{key}/export`: the agent and everything its configuration names, secrets by name only. */
@Injectable()
export class AgentExporter {
  constructor(
    private readonly agents: AgentWriter,
    private readonly instructions: InstructionWriter,
    private readonly glossaries: Glossaries,
    private readonly secrets: AgentSecrets,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  async export(agentKey: string, ctx: CommandContext): Promise<AgentBundle> {
    const state = await this.agents.state(agentKey);
    if (state.status === 'absent') throw agentNotFound(agentKey);
    const config = state.config;
    const found = { toolConfigurations: new Map<string, BundledToolConfiguration>(), tools: new Map<string, BundledTool>(), mcpTools: new Set<string>(), glossaries: new Set(reminderGlossaries(config)) };
    const secretNames = agentSecretNames(config);
    // References and lambdas' own tools, to any depth (a lambda may call lambdas); each object once.
    const walk = async (tools: Readonly<Record<string, ToolConfig>> | undefined): Promise<void> => {
      agentSecretNames(tools, secretNames);
      const names = toolNames(tools);
      names.mcpTools.forEach((t) => found.mcpTools.add(t));
      names.glossaries.forEach((g) => found.glossaries.add(g));
      for (const key of names.toolConfigurations) {
        if (found.toolConfigurations.has(key)) continue;
        const row = await this.reads.get<ToolConfigurationRow>(TOOL_CONFIGURATIONS, key);
        if (!row) continue;
        found.toolConfigurations.set(key, { key, config: row.config });
        await walk({ [key]: row.config as ToolConfig });
      }
      for (const id of names.userTools) {
        if (found.tools.has(id)) continue;
        const row = await this.reads.get<UserToolRow>(USER_TOOLS, id);
        if (!row) continue;
        found.tools.set(id, bundledTool(id, row.settings));
        if (row.settings.type === 'lambda') await walk(row.settings.tool_configurations);
      }
    };
    await walk(config.tool_configurations);
    const servers = await this.toolServers(found.mcpTools);
    return {
      format: AGENT_BUNDLE_FORMAT,
      version: AGENT_BUNDLE_VERSION,
      exported_at: ctx.now.toISOString(),
      agent: { key: agentKey, config },
      instructions: await this.instructionVersions(config),
      tool_configurations: [...found.toolConfigurations.values()],
      tools: [...found.tools.values()],
      tool_servers: servers,
      glossaries: await this.glossaryContents(found.glossaries),
      secrets: {
        agent: [...new Set([...Object.keys(await this.secrets.names(agentKey)), ...secretNames])].sort(),
        tool_servers: servers.flatMap((s) => (s.auth ? [{ tool_server_id: s.id, credential: s.auth.type === 'bearer' ? 'bearer token' : `header ${s.auth.header}` }] : [])),
      },
    };
  }

  /** Each version the agent names, and the latest for a reference without a version. */
  private async instructionVersions(config: AgentBundle['agent']['config']): Promise<BundledInstruction[]> {
    const out: BundledInstruction[] = [];
    for (const [id, named] of instructionReferences(config)) {
      const state = await this.instructions.state(id);
      if (state.status === 'absent') continue;
      const numbers = new Set([...named].map((v) => (v === 'latest' ? latestVersion(state) : v)));
      for (const version of [...numbers].sort((a, b) => a - b)) {
        const c = state.versions[version];
        if (c) out.push({ id, version, name: c.name, description: c.description, template_type: c.templateType, template: c.template, metadata: c.metadata, enabled: c.enabled });
      }
    }
    return out;
  }

  private async glossaryContents(keys: ReadonlySet<string>): Promise<BundledGlossary[]> {
    const out: BundledGlossary[] = [];
    for (const key of [...keys].sort()) {
      const row = await this.reads.get<GlossaryRow>(GLOSSARIES, key);
      if (!row) continue;
      const entries = Object.fromEntries([...(await this.glossaries.all(key))].sort(([a], [b]) => a.localeCompare(b)));
      out.push({ key, name: row.name, ...(row.description ? { description: row.description } : {}), entries });
    }
    return out;
  }

  /** The servers listing the MCP tools used: where they are and how they authenticate, never a credential or header value. */
  private async toolServers(toolIds: ReadonlySet<string>): Promise<BundledToolServer[]> {
    const byServer = new Map<string, string[]>();
    for (const id of toolIds) {
      const listed = await this.reads.get<CatalogToolRow>(TOOL_CATALOG, id);
      if (listed) byServer.set(listed.server_id, [...(byServer.get(listed.server_id) ?? []), id]);
    }
    const out: BundledToolServer[] = [];
    for (const [serverId, tools] of byServer) {
      const row = await this.reads.get<ToolServerRow>(TOOL_SERVERS, serverId);
      if (!row) continue;
      const s = row.settings;
      out.push({ id: serverId, name: s.name, uri: withoutQuery(s.uri), transport: s.transport, ...(s.description ? { description: s.description } : {}), header_names: Object.keys(s.headers ?? {}).sort(), ...(s.auth ? { auth: s.auth } : {}), tool_ids: tools.sort() });
    }
    return out;
  }
}
