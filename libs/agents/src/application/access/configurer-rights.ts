import { Inject, Injectable } from '@nestjs/common';
import { allows, allowsSome, Capability, CorpusAction } from '@lib/auth';
import { corpusNotFound } from '@lib/corpora';
import { DomainError, notFound, READ_STORE, ReadStore } from '@lib/platform';
import { CatalogToolRow, Configurer, SharedConfiguration, SharedConfigurationRights, TOOL_CATALOG, TOOL_CONFIGURATIONS, ToolConfig, ToolConfigurationRow, USER_TOOLS, UserToolRow } from '@lib/tools';
import type { AgentConfig } from '../../domain/agent-config';
import { AGENTS, AgentRow } from '../../read-models';

/** Who writes a configuration, and a configuration agents share: libs/tools' types (its port, which this class implements). */

/** One right a configuration makes its agents use, and the field (the agent's tool) that asks for it. */
export type Reached =
  | { readonly kind: 'corpus'; readonly action: Extract<CorpusAction, 'corpus.read' | 'corpus.write'>; readonly key: string; readonly field: string; readonly via: string }
  | { readonly kind: 'agent'; readonly key: string; readonly field: string; readonly via: string }
  | { readonly kind: 'secrets'; readonly field: string; readonly via: string }
  /** A tool that edits glossaries (any the model names): what managing glossaries needs. */
  | { readonly kind: 'glossaries'; readonly field: string; readonly via: string };

/** The shared configurations an agent's tools and steps depend on, resolved through references and lambdas. */
export interface Dependencies {
  readonly toolConfigurations: Set<string>;
  /** `/v2/tools` tools: lambdas (and the lambdas they compose), client tools named by `tool_id`. */
  readonly userTools: Set<string>;
  readonly toolServers: Set<string>;
  readonly instructions: Set<string>;
}

interface Walk {
  readonly reached: Reached[];
  readonly deps: Dependencies;
  /**
   * Lambdas already walked, once each for the whole walk: what a lambda reaches does not depend on the path to it,
   * and lambdas composing lambdas (20 entries each) would otherwise be walked once per path, 20^depth reads.
   */
  readonly lambdasWalked: Set<string>;
}

const MAX_LAMBDA_DEPTH = 8;
const CORPORA_SEARCH = new Set(['corpora_search', 'corpora_search_20260608']);
const DOCUMENT_READERS = new Set(['get_document_text', 'get_document']);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The path of the first `{"$ref": "agent.secrets.<name>"}` inside a value ('' for the value itself), or undefined. */
export function agentSecretRef(value: unknown, depth = 0): string | undefined {
  if (depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const inner = agentSecretRef(v, depth + 1);
      if (inner !== undefined) return `[${i}]${inner && !inner.startsWith('[') ? `.${inner}` : inner}`;
    }
    return undefined;
  }
  if (!isObject(value)) return undefined;
  if (typeof value.$ref === 'string' && value.$ref.startsWith('agent.secrets.')) return '';
  for (const [k, v] of Object.entries(value)) {
    const inner = agentSecretRef(v, depth + 1);
    if (inner !== undefined) return inner ? (inner.startsWith('[') ? `${k}${inner}` : `${k}.${inner}`) : k;
  }
  return undefined;
}

/** A field under another: the agent's tool (`tool_configurations.x`), or within a shared configuration. */
const under = (field: string, inner: string): string => (field && inner ? `${field}.${inner}` : field || inner);

const forbidden = (code: string, message: string, field: string, why: string): DomainError => new DomainError('forbidden', code, message, { fieldErrors: { [field]: why } });

/**
 * An agent acts for the people who configure it, never for more (docs/security.md, "Agents and their privileges").
 * Every write of an agent's configuration, and of a configuration agents share (reusable tool configurations,
 * lambdas, MCP tool servers, instructions), is checked here against the writer's own capabilities:
 * - each corpus a tool reaches needs the right the tool uses on it (search and document reads: read; document
 *   index: write). A corpus the writer cannot read answers 404 exactly as the corpus routes do (no oracle), one
 *   readable but not writable 403 with a field error naming the tool;
 * - each agent a sub_agent tool calls needs `agent.use` (404 / 403 likewise); a glossary-editing tool needs what
 *   managing glossaries needs (`agent.administer` on some agent);
 * - a tool that sends the agent's secrets (`{"$ref": "agent.secrets.<name>"}`) needs what reading the secrets
 *   needs (`agent.administer` on that agent), on every agent that would send them;
 * - a shared configuration in use needs `agent.develop` on every agent using it.
 */
@Injectable()
export class ConfigurerRights implements SharedConfigurationRights {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  /** What an agent's whole configuration reaches (references and lambdas resolved as a turn would). */
  async ofAgent(config: AgentConfig): Promise<Walk> {
    const walk = emptyWalk();
    await this.walkTools(config.tool_configurations, 'tool_configurations', walk, 0);
    const enrichment = agentSecretRef(config.session_enrichment);
    if (enrichment !== undefined) walk.reached.push({ kind: 'secrets', field: under('session_enrichment', enrichment), via: 'session_enrichment' });
    for (const step of Object.values(config.steps ?? {})) for (const i of step.instructions) if (i.type === 'reference') walk.deps.instructions.add(i.id);
    return walk;
  }

  /** Refuses an agent configuration its writer could not act with (the rules above); writes nothing. */
  async assertAgentWrite(caller: Configurer, agentKey: string, config: AgentConfig): Promise<void> {
    const walk = await this.ofAgent(config);
    this.assertReach(caller, walk.reached);
    const secret = walk.reached.find((r) => r.kind === 'secrets');
    if (secret && !allows(caller.caps, 'agent.administer', agentKey)) {
      throw forbidden('agent.secrets_forbidden', `The tool ${secret.via} sends the agent's secrets ({"$ref": "agent.secrets.…"}): only those who may read the secrets (agent administrators) may configure it`, secret.field, 'uses the agent\'s secrets, which the caller may not read');
    }
  }

  /**
   * Refuses a write of a shared configuration (its new settings: `tools`, keyed by a name for the field errors)
   * that its writer could not make on every agent using it, or that reaches what the writer may not.
   */
  async assertSharedWrite(caller: Configurer, shared: SharedConfiguration, tools: Readonly<Record<string, ToolConfig>>, prefix: string): Promise<void> {
    const walk = emptyWalk();
    if (shared.kind === 'user_tool') walk.lambdasWalked.add(shared.id);
    await this.walkTools(tools, prefix, walk, 0);
    this.assertReach(caller, walk.reached);
    const users = await this.agentsUsing(shared);
    this.assertDevelops(caller, shared, users);
    const secret = walk.reached.find((r) => r.kind === 'secrets');
    if (secret && users.some((a) => !allows(caller.caps, 'agent.administer', a))) {
      throw forbidden('agent.secrets_forbidden', `${shared.label} sends agents' secrets ({"$ref": "agent.secrets.…"}) and is used by agents whose secrets you may not read`, secret.field, 'uses the secrets of agents whose secrets the caller may not read');
    }
  }

  /** A change that touches only the agents using it (a delete, an instruction's text, an MCP server's address). */
  async assertSharedChange(caller: Configurer, shared: SharedConfiguration): Promise<void> {
    this.assertDevelops(caller, shared, await this.agentsUsing(shared));
  }

  /** `agent.develop` on each of `users` (the agents a change of `shared` changes), else 403 naming none of them. */
  assertDevelops(caller: Configurer, shared: SharedConfiguration, users: readonly string[]): void {
    const others = users.filter((a) => !allows(caller.caps, 'agent.develop', a));
    if (!others.length) return;
    throw new DomainError('forbidden', 'agent.shared_configuration_forbidden', `${shared.label} is used by ${others.length} agent${others.length > 1 ? 's' : ''} you may not develop: changing it would change ${others.length > 1 ? 'them' : 'it'}`);
  }

  private assertReach(caller: Configurer, reached: readonly Reached[]): void {
    for (const r of reached) {
      if (r.kind === 'corpus') {
        if (!allows(caller.caps, 'corpus.read', r.key)) throw corpusNotFound(r.key);
        if (!allows(caller.caps, r.action, r.key)) throw forbidden('agent.tool_forbidden', `The tool ${r.via} writes to corpus "${r.key}", which you may not write to`, r.field, `writes to corpus "${r.key}", which the caller may not write to`);
      } else if (r.kind === 'glossaries') {
        // The route that manages glossaries asks agent.administer on some agent (glossary.manage): so does a tool that does.
        if (!allowsSome(caller.caps, 'agent.administer')) throw forbidden('agent.tool_forbidden', `The tool ${r.via} edits glossaries, which you may not manage`, r.field, 'edits glossaries, which the caller may not manage');
      } else if (r.kind === 'agent') {
        const actions = ['agent.use', 'agent.view', 'agent.develop', 'agent.administer'] as const;
        if (!actions.some((a) => allows(caller.caps, a, r.key))) throw notFound('agent.not_found', `Agent "${r.key}" does not exist`, r.key);
        if (!allows(caller.caps, 'agent.use', r.key)) throw forbidden('agent.tool_forbidden', `The tool ${r.via} calls agent "${r.key}", which you may not use`, r.field, `calls agent "${r.key}", which the caller may not use`);
      }
    }
  }

  /** The keys of the agents whose configuration uses `shared`, directly or through references and lambdas. */
  async agentsUsing(shared: SharedConfiguration): Promise<string[]> {
    const users: string[] = [];
    let pageKey: string | undefined;
    do {
      const page = await this.reads.find<AgentRow>(AGENTS, { limit: 100, pageKey });
      for (const row of page.items) {
        const { deps } = await this.ofAgent(row.config);
        const set = { tool_configuration: deps.toolConfigurations, user_tool: deps.userTools, tool_server: deps.toolServers, instruction: deps.instructions }[shared.kind];
        if (set.has(shared.id)) users.push(row.id);
      }
      pageKey = page.nextPageKey;
    } while (pageKey);
    return users;
  }

  private async walkTools(tools: Readonly<Record<string, ToolConfig>>, prefix: string, walk: Walk, depth: number, field?: string): Promise<void> {
    for (const [name, tool] of Object.entries(tools ?? {})) {
      if (!isObject(tool)) continue;
      const at = field ?? (prefix ? `${prefix}.${name}` : name);
      const via = field ? `${field} (its ${name})` : name || prefix || 'of this configuration';
      if (tool.type === 'reference') {
        const key = String(tool.tool_configuration_key);
        walk.deps.toolConfigurations.add(key);
        const row = await this.reads.get<ToolConfigurationRow>(TOOL_CONFIGURATIONS, key);
        if (!row) continue;
        const { type: _t, tool_configuration_key: _k, ...overrides } = tool;
        const { name: _n, enabled: _e, metadata: _m, enrichment_only: _o, ...settings } = row.config;
        await this.walkTool({ ...settings, ...overrides } as ToolConfig, at, via, walk, depth);
      } else await this.walkTool(tool, at, via, walk, depth);
    }
  }

  private async walkTool(tool: ToolConfig, field: string, via: string, walk: Walk, depth: number): Promise<void> {
    // On an agent the field is the tool; in a shared configuration (no tool name), the field inside it.
    const secret = agentSecretRef(tool);
    if (secret !== undefined) walk.reached.push({ kind: 'secrets', field: field || secret, via });
    const fixedCorpus = isObject(tool.argument_override) && typeof tool.argument_override.corpus_key === 'string' ? tool.argument_override.corpus_key : undefined;
    if (CORPORA_SEARCH.has(tool.type)) {
      const corpora = (isObject(tool.query_configuration) && isObject(tool.query_configuration.search) ? tool.query_configuration.search.corpora : undefined) as unknown;
      for (const c of Array.isArray(corpora) ? corpora : []) if (isObject(c) && typeof c.corpus_key === 'string') walk.reached.push({ kind: 'corpus', action: 'corpus.read', key: c.corpus_key, field, via });
    } else if (DOCUMENT_READERS.has(tool.type) && fixedCorpus) walk.reached.push({ kind: 'corpus', action: 'corpus.read', key: fixedCorpus, field, via });
    else if (tool.type === 'document_index' && fixedCorpus) walk.reached.push({ kind: 'corpus', action: 'corpus.write', key: fixedCorpus, field: field || 'argument_override.corpus_key', via });
    else if (tool.type === 'glossary_put_entries' || tool.type === 'glossary_delete_entries') walk.reached.push({ kind: 'glossaries', field, via });
    else if (tool.type === 'sub_agent') {
      const target = isObject(tool.sub_agent_configuration) ? tool.sub_agent_configuration.agent_key : undefined;
      if (typeof target === 'string') walk.reached.push({ kind: 'agent', key: target, field: field || 'sub_agent_configuration.agent_key', via });
    } else if (tool.type === 'mcp' && typeof tool.tool_id === 'string') {
      const listed = await this.reads.get<CatalogToolRow>(TOOL_CATALOG, tool.tool_id);
      if (listed) walk.deps.toolServers.add(listed.server_id);
    } else if (tool.type === 'client' && typeof tool.tool_id === 'string') walk.deps.userTools.add(tool.tool_id);
    else if (tool.type === 'lambda' && typeof tool.tool_id === 'string') {
      walk.deps.userTools.add(tool.tool_id);
      // A lambda's composed tools run for the agent that hosts it: what they reach, the agent reaches.
      if (walk.lambdasWalked.has(tool.tool_id) || depth >= MAX_LAMBDA_DEPTH) return;
      walk.lambdasWalked.add(tool.tool_id);
      const row = await this.reads.get<UserToolRow>(USER_TOOLS, tool.tool_id);
      if (row?.settings.type !== 'lambda' || !row.settings.tool_configurations) return;
      await this.walkTools(row.settings.tool_configurations, '', walk, depth + 1, field);
    }
  }
}

const emptyWalk = (): Walk => ({ reached: [], deps: { toolConfigurations: new Set(), userTools: new Set(), toolServers: new Set(), instructions: new Set() }, lambdasWalked: new Set() });
