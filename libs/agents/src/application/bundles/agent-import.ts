import { Inject, Injectable } from '@nestjs/common';
import { allows, allowsSome } from '@lib/auth';
import { CommandContext, DomainError, invalid, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId } from '@lib/platform';
import { invalidLambda, lambdaDeadlineProblems, LambdaRunner, principalOf, serverToolId, TOOL_CATALOG, TOOL_CONFIGURATIONS, TOOL_SERVERS, ToolConfigurations, USER_TOOLS, UserTools, type CatalogToolRow, type Configurer, type ToolServerRow, type ToolConfig, type ToolConfigurationRow, type UserToolRow } from '@lib/tools';
import { AgentConfig, validateAgentConfig } from '../../domain/agent-config';
import { AgentRequest, configFromRequest } from '../../domain/agent';
import { AgentBundle, agentSecretNames, bundleProblems, instructionReferences, sameJson, toolNames, withMcpToolIds } from '../../domain/agent-bundle';
import { decideImportGlossary, decideImportInstruction, glossaryOutcome, ImportOutcome, instructionOutcome } from '../../domain/bundle-import';
import { glossaryFold } from '../../domain/glossary';
import { AgentWriter } from '../agent-writer';
import { AgentSecrets } from '../access/agent-access';
import { ConfigurerRights } from '../access/configurer-rights';
import { CreateAgentHandler, CreateAgent } from '../agents/agent-commands';
import { Glossaries } from '../glossaries/glossaries';
import { checkTemplate, InstructionWriter } from '../instruction-writer';
import { bundledTool } from './agent-export';
import { checkClientSchemas, toolInput, toolOrder, withToolDefaults } from './bundled-tools';

export type BundleObjectKind = 'tool' | 'tool_configuration' | 'instruction' | 'glossary' | 'agent';

/** One object of the bundle in the answer: `versions` for an instruction, `reason` for a conflict. */
export interface ImportedObject {
  readonly kind: BundleObjectKind;
  readonly id: string;
  readonly versions?: readonly number[];
  readonly reason?: string;
}

export interface ImportAnswer {
  readonly agent_key: string;
  readonly dry_run: boolean;
  readonly created: readonly ImportedObject[];
  readonly reused: readonly ImportedObject[];
  readonly conflicts: readonly ImportedObject[];
  /** Secrets the agent's tools send that are not set on the imported agent: `PUT /v2/agents/{key}/secrets` sets them. */
  readonly missing_secrets: readonly string[];
  /** MCP tool ids of the bundle → the ids of the same tools (same server address, same tool name) here. */
  readonly mcp_tool_ids: Readonly<Record<string, string>>;
}

interface Planned {
  readonly object: ImportedObject;
  readonly at: string;
  readonly outcome: ImportOutcome;
  readonly write: () => Promise<unknown>;
}

const prefixed = (e: unknown, prefix: string): unknown => {
  if (!(e instanceof DomainError) || !e.details.fieldErrors) return e;
  const fieldErrors = Object.fromEntries(Object.entries(e.details.fieldErrors).map(([k, v]) => [`${prefix}.${k}`, v]));
  const first = Object.entries(fieldErrors)[0];
  return new DomainError(e.kind, e.code, e.kind === 'invalid' && first ? `Invalid ${first[0]}: ${first[1]}` : e.message, { ...e.details, fieldErrors });
};

const forbidden = (field: string, what: string, right: string) => new DomainError('forbidden', 'agent_bundle.forbidden', `Importing this bundle creates ${what}, which needs ${right}`, { fieldErrors: { [field]: `creating it needs ${right}` } });

/**
 * `POST /v2/agents/import` (docs/agent-bundles.md): everything is checked first (shapes, each object's own checks,
 * references, conflicts, rights); then dependencies are written before the agent, so a failure midway leaves only
 * objects no agent uses, which a retry finds identical and reuses.
 */
@Injectable()
export class AgentImporter {
  constructor(
    private readonly agents: AgentWriter,
    private readonly instructions: InstructionWriter,
    private readonly streams: StreamWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly toolConfigurations: ToolConfigurations,
    private readonly userTools: UserTools,
    private readonly rights: ConfigurerRights,
    private readonly glossaries: Glossaries,
    private readonly secrets: AgentSecrets,
    private readonly createAgent: CreateAgentHandler,
    private readonly lambdas: LambdaRunner,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  async import(given: unknown, key: string | undefined, dryRun: boolean, caller: Configurer, ctx: CommandContext): Promise<ImportAnswer> {
    const problems = bundleProblems(given);
    const first = Object.entries(problems)[0];
    if (first) throw invalid('agent_bundle.invalid', `Invalid ${first[0]}: ${first[1]}`, problems);
    const raw = given as AgentBundle;
    const listed: AgentBundle = { ...raw, instructions: raw.instructions ?? [], tool_configurations: raw.tool_configurations ?? [], tools: raw.tools ?? [], tool_servers: raw.tool_servers ?? [], glossaries: raw.glossaries ?? [] };
    const mcpIds = await this.mcpToolIds(listed);
    const bundle = withMcpToolIds(listed, mcpIds);
    const agentKey = key ?? bundle.agent.key;
    let config: AgentConfig;
    try {
      config = configFromRequest(bundle.agent.config as unknown as AgentRequest);
      // Its shape is whole before anything reads its steps and tools.
      validateAgentConfig(config);
    } catch (e) {
      throw prefixed(e, 'bundle.agent.config');
    }
    bundle.instructions.forEach((ins, i) => {
      try {
        checkTemplate({ templateType: ins.template_type, template: ins.template });
      } catch (e) {
        throw prefixed(e, `bundle.instructions[${i}]`);
      }
    });
    const plan = await this.plan(bundle, agentKey, config, caller, ctx);
    const creates = (kind: BundleObjectKind) => plan.filter((p) => p.object.kind === kind && p.outcome.outcome === 'create');
    await this.checkReferences(bundle, config, plan);
    await this.checkRights(caller, bundle, agentKey, config, creates);
    await this.checkTools(bundle, creates('tool'), ctx);
    const conflicts = plan.flatMap((p) => (p.outcome.outcome === 'conflict' ? [{ ...p.object, reason: p.outcome.reason }] : []));
    const answer = {
      agent_key: agentKey,
      dry_run: dryRun,
      created: plan.filter((p) => p.outcome.outcome === 'create').map((p) => p.object),
      reused: plan.filter((p) => p.outcome.outcome === 'reuse').map((p) => p.object),
      conflicts,
      missing_secrets: await this.missingSecrets(bundle, agentKey, config, plan),
      mcp_tool_ids: Object.fromEntries(mcpIds),
    };
    if (conflicts.length && !dryRun) {
      const fieldErrors = Object.fromEntries(plan.flatMap((p) => (p.outcome.outcome === 'conflict' ? [[p.at, `${p.object.kind} "${p.object.id}" exists and differs: ${p.outcome.reason}`]] : [])));
      throw new DomainError('conflict', 'agent_bundle.conflict', `The import conflicts with what exists: ${conflicts.map((c) => `${c.kind} "${c.id}" (${c.reason})`).join('; ')}`, { fieldErrors });
    }
    if (dryRun) return answer;
    // Dependencies first, the agent last (plan order): a failure midway leaves nothing any agent uses.
    for (const step of plan) if (step.outcome.outcome === 'create') await step.write();
    return answer;
  }

  /**
   * The bundle's MCP tools not listed here under their ids, found on a server here at the same address (its query
   * string aside) listing a tool of the same name: their ids here. The others stay as they are (and are refused).
   */
  private async mcpToolIds(bundle: AgentBundle): Promise<Map<string, string>> {
    const ids = new Map<string, string>();
    const servers = bundle.tool_servers.length ? (await this.reads.find<ToolServerRow>(TOOL_SERVERS, { limit: 1000 })).items : [];
    for (const s of bundle.tool_servers) {
      const here = servers.find((r) => r.settings.uri.split(/[?#]/)[0] === s.uri);
      for (const id of s.tool_ids) {
        const prefix = `tol_${s.id.replace(/^tsr_/, '')}_`;
        if (!here || !id.startsWith(prefix) || (await this.reads.get(TOOL_CATALOG, id))) continue;
        const mapped = serverToolId(here.id, id.slice(prefix.length));
        if (await this.reads.get<CatalogToolRow>(TOOL_CATALOG, mapped)) ids.set(id, mapped);
      }
    }
    return ids;
  }

  /** Each object against the target, in write order: tools (those others call first), configurations, instructions, glossaries, the agent. */
  private async plan(bundle: AgentBundle, agentKey: string, config: AgentConfig, caller: Configurer, ctx: CommandContext): Promise<Planned[]> {
    const plan: Planned[] = [];
    for (const i of toolOrder(bundle.tools)) {
      const tool = bundle.tools[i];
      const row = await this.reads.get<UserToolRow>(USER_TOOLS, tool.id);
      const listed = row ? undefined : await this.reads.get(TOOL_CATALOG, tool.id);
      const outcome: ImportOutcome = listed ? { outcome: 'conflict', reason: 'an MCP tool has that id here' } : !row ? { outcome: 'create' } : sameJson(bundledTool(tool.id, row.settings), withToolDefaults(tool)) ? { outcome: 'reuse' } : { outcome: 'conflict', reason: 'its settings or code differ here' };
      plan.push({ object: { kind: 'tool', id: tool.id }, at: `bundle.tools[${i}]`, outcome, write: () => this.userTools.create(toolInput(tool), caller, ctx) });
    }
    for (const [i, tc] of bundle.tool_configurations.entries()) {
      const row = await this.reads.get<ToolConfigurationRow>(TOOL_CONFIGURATIONS, tc.key);
      const wanted = { ...tc.config, enabled: tc.config.enabled ?? true, metadata: tc.config.metadata ?? {} };
      const outcome: ImportOutcome = !row ? { outcome: 'create' } : sameJson(row.config, wanted) ? { outcome: 'reuse' } : { outcome: 'conflict', reason: 'its configuration differs here' };
      plan.push({ object: { kind: 'tool_configuration', id: tc.key }, at: `bundle.tool_configurations[${i}]`, outcome, write: () => this.toolConfigurations.create({ ...tc.config, key: tc.key }, caller, ctx) });
    }
    const followed = instructionReferences(config);
    for (const id of [...new Set(bundle.instructions.map((v) => v.id))]) {
      const versions = bundle.instructions.filter((v) => v.id === id);
      const highest = Math.max(...versions.map((v) => v.version));
      const outcome = instructionOutcome(await this.instructions.state(id), versions, new Set(followed.get(id)?.has('latest') ? [highest] : []));
      const at = `bundle.instructions[${bundle.instructions.findIndex((v) => v.id === id)}]`;
      plan.push({ object: { kind: 'instruction', id, versions: versions.map((v) => v.version).sort((a, b) => a - b) }, at, outcome, write: () => this.instructions.write(id, (s) => decideImportInstruction(s, id, versions, ctx.now), ctx) });
    }
    for (const [i, g] of bundle.glossaries.entries()) {
      const state = await this.streams.state(streamId('glossary', g.key), glossaryFold);
      const outcome = glossaryOutcome(state, state.status === 'active' ? await this.glossaries.all(g.key) : new Map(), g);
      plan.push({ object: { kind: 'glossary', id: g.key }, at: `bundle.glossaries[${i}]`, outcome, write: () => this.streams.write(streamId('glossary', g.key), glossaryFold, (s) => decideImportGlossary(s, g, ctx.now), ctx, ['glossaries']) });
    }
    const agent = await this.agents.state(agentKey);
    const outcome: ImportOutcome = agent.status === 'absent' ? { outcome: 'create' } : sameJson(agent.config, config) ? { outcome: 'reuse' } : { outcome: 'conflict', reason: 'its configuration differs here' };
    plan.push({ object: { kind: 'agent', id: agentKey }, at: 'bundle.agent', outcome, write: () => this.createAgent.execute(new CreateAgent(agentKey, bundle.agent.config as unknown as AgentRequest, caller, ctx)) });
    return plan;
  }

  /**
   * The agent's configuration passes the create route's checks, except references the bundle itself satisfies; the
   * bundle's new tools and configurations name only tools that the bundle holds or the target has.
   */
  private async checkReferences(bundle: AgentBundle, config: AgentConfig, plan: readonly Planned[]): Promise<void> {
    const inBundle = (kind: BundleObjectKind, id: string) => plan.some((p) => p.object.kind === kind && p.object.id === id);
    const satisfied = new Set<string>();
    for (const [name, tool] of Object.entries(config.tool_configurations)) {
      if (tool.type === 'reference' && inBundle('tool_configuration', String(tool.tool_configuration_key))) satisfied.add(`tool_configurations.${name}.tool_configuration_key`);
      if ((tool.type === 'lambda' || tool.type === 'client') && inBundle('tool', String(tool.tool_id))) satisfied.add(`tool_configurations.${name}.tool_id`);
    }
    for (const [step, s] of Object.entries(config.steps)) {
      s.instructions.forEach((ins, i) => ins.type === 'reference' && inBundle('instruction', ins.id) && [`steps.${step}.instructions[${i}].id`, `steps.${step}.instructions[${i}].version`].forEach((f) => satisfied.add(f)));
      s.reminders.forEach((r, i) => r.type === 'glossary_expansion' && inBundle('glossary', r.glossary_key) && satisfied.add(`steps.${step}.reminders[${i}].glossary_key`));
    }
    try {
      await this.agents.checkReferences(config);
    } catch (e) {
      if (!(e instanceof DomainError) || !e.details.fieldErrors) throw e;
      const left = Object.fromEntries(Object.entries(e.details.fieldErrors).filter(([field]) => !satisfied.has(field)));
      if (Object.keys(left).length) throw prefixed(new DomainError(e.kind, e.code, e.message, { fieldErrors: left }), 'bundle.agent.config');
    }
    const problems: Record<string, string> = {};
    const check = async (tools: Readonly<Record<string, ToolConfig>> | undefined, at: (name: string) => string) => {
      for (const [name, tool] of Object.entries(tools ?? {})) {
        const names = toolNames({ [name]: tool });
        for (const id of names.userTools) if (!inBundle('tool', id) && !(await this.reads.get(USER_TOOLS, id))) problems[`${at(name)}.tool_id`] = `no tool "${id}" in the bundle or here`;
        for (const id of names.mcpTools) if (!(await this.reads.get(TOOL_CATALOG, id))) problems[`${at(name)}.tool_id`] = `no MCP tool "${id}" here: create its tool server (bundle.tool_servers names it) and sync it first`;
      }
    };
    for (const [i, t] of bundle.tools.entries()) await check(t.tool_configurations as Record<string, ToolConfig> | undefined, (n) => `bundle.tools[${i}].tool_configurations.${n}`);
    for (const [i, tc] of bundle.tool_configurations.entries()) await check({ config: tc.config as ToolConfig }, () => `bundle.tool_configurations[${i}].config`);
    const first = Object.entries(problems)[0];
    if (first) throw invalid('agent_bundle.invalid_reference', `Invalid ${first[0]}: ${first[1]}`, problems);
  }

  /** The rights each create route asks of what it would create (reused objects are not written: nothing asked). */
  private async checkRights(caller: Configurer, bundle: AgentBundle, agentKey: string, config: AgentConfig, creates: (kind: BundleObjectKind) => Planned[]): Promise<void> {
    for (const p of [...creates('tool'), ...creates('tool_configuration'), ...creates('instruction')]) if (!allowsSome(caller.caps, 'agent.develop')) throw forbidden(p.at, `${p.object.kind} "${p.object.id}"`, 'agent.develop on some agent (agent_developer or above)');
    for (const p of creates('glossary')) if (!allowsSome(caller.caps, 'agent.administer')) throw forbidden(p.at, `glossary "${p.object.id}"`, 'agent.administer on some agent (agent_administrator or above)');
    const newConfigs = new Map(creates('tool_configuration').map((p) => [p.object.id, bundle.tool_configurations.find((t) => t.key === p.object.id)!]));
    for (const p of creates('tool')) {
      const tool = bundle.tools.find((t) => t.id === p.object.id)!;
      await this.rights.assertSharedWrite(caller, { kind: 'user_tool', id: tool.id, label: `Tool "${tool.id}"` }, (tool.tool_configurations ?? {}) as Record<string, ToolConfig>, `${p.at}.tool_configurations`);
    }
    for (const [key, tc] of newConfigs) await this.rights.assertSharedWrite(caller, { kind: 'tool_configuration', id: key, label: `Tool configuration "${key}"` }, { config: tc.config as ToolConfig }, `bundle.tool_configurations[${bundle.tool_configurations.indexOf(tc)}]`);
    if (!creates('agent').length) return;
    // The agent as a turn would resolve it: references to configurations the import creates read from the bundle.
    const inlined = Object.fromEntries(
      Object.entries(config.tool_configurations).map(([name, tool]) => {
        const bundled = tool.type === 'reference' ? newConfigs.get(String(tool.tool_configuration_key)) : undefined;
        if (!bundled) return [name, tool];
        const { type: _t, tool_configuration_key: _k, ...overrides } = tool;
        const { name: _n, enabled: _e, metadata: _m, enrichment_only: _o, ...settings } = bundled.config;
        return [name, { ...settings, ...overrides } as ToolConfig];
      }),
    );
    try {
      await this.rights.assertAgentWrite(caller, agentKey, { ...config, tool_configurations: inlined });
    } catch (e) {
      throw prefixed(e, 'bundle.agent.config');
    }
    const sent = this.secretsSent(bundle, config);
    if (sent.size && !allows(caller.caps, 'agent.administer', agentKey)) {
      throw forbidden('bundle.agent.config.tool_configurations', `an agent whose tools send its secrets (${[...sent].join(', ')})`, 'agent.administer on the agent (those who may read its secrets)');
    }
  }

  /** New lambdas' code is checked in the sandbox and their deadline against the service's cap, client tools' schemas compiled, as `POST /v2/tools` does. */
  private async checkTools(bundle: AgentBundle, created: readonly Planned[], ctx: CommandContext): Promise<void> {
    for (const p of created) {
      const tool = bundle.tools.find((t) => t.id === p.object.id)!;
      if (tool.type === 'client') {
        checkClientSchemas(tool, p.at);
        continue;
      }
      const deadline = lambdaDeadlineProblems(tool.execution_configuration as { max_execution_time_seconds?: number } | undefined, this.config.lambdaMaxDeadlineSeconds);
      if (Object.keys(deadline).length) throw prefixed(invalid('request.invalid', 'Invalid execution_configuration', deadline), p.at);
      const outcome = await this.lambdas.run({ code: String(tool.code), run: false, deadlineMs: 30_000, principal: principalOf(ctx) });
      if (outcome.validation.status !== 'valid') throw prefixed(invalidLambda(outcome.validation.errors), p.at);
    }
  }

  /** The secrets the agent's tools send (its own, its reusable configurations', its lambdas'), by name. */
  private secretsSent(bundle: AgentBundle, config: AgentConfig): Set<string> {
    const names = agentSecretNames(config);
    for (const tc of bundle.tool_configurations) agentSecretNames(tc.config, names);
    for (const t of bundle.tools) agentSecretNames(t.tool_configurations, names);
    return names;
  }

  /** Secret names the agent needs (the bundle's and those its tools send) that the imported agent does not have set. */
  private async missingSecrets(bundle: AgentBundle, agentKey: string, config: AgentConfig, plan: readonly Planned[]): Promise<string[]> {
    const needed = new Set([...(bundle.secrets?.agent ?? []).filter((n): n is string => typeof n === 'string'), ...this.secretsSent(bundle, config)]);
    const agentReused = plan.some((p) => p.object.kind === 'agent' && p.outcome.outcome === 'reuse');
    const set = agentReused ? Object.keys(await this.secrets.names(agentKey)) : [];
    return [...needed].filter((n) => !set.includes(n)).sort();
  }
}
