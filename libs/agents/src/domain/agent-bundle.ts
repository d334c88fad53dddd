import { toolProblems, type ToolConfig } from '@lib/tools/domain';
import type { AgentConfig, TemplateType } from './agent-config';

/**
 * An agent bundle (docs/agent-bundles.md): an agent and what its configuration names, as one JSON document.
 * `format` and `version` are the contract: a later version keeps every field of this one readable (a reader of
 * version N reads N and every earlier version it documents); a change that cannot be read by version 1's rules
 * gets a new version number and an upcaster here.
 */
export const AGENT_BUNDLE_FORMAT = 'agent-bundle';
export const AGENT_BUNDLE_VERSION = 1;

/** One version of an instruction the agent names (the latest when it names the instruction without a version). */
export interface BundledInstruction {
  readonly id: string;
  readonly version: number;
  readonly name: string;
  readonly description: string;
  readonly template_type: TemplateType;
  readonly template: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly enabled: boolean;
}

export interface BundledToolConfiguration {
  readonly key: string;
  /** As stored (name, enabled, metadata and the tool's fields). */
  readonly config: Readonly<Record<string, unknown>>;
}

/** A `/v2/tools` tool as its create request takes it; a lambda's schemas are discovered again from its code. */
export type BundledTool = { readonly id: string; readonly type: 'lambda' | 'client'; readonly name: string } & Readonly<Record<string, unknown>>;

/** An MCP server whose tools the agent calls: never its credential or header values (names only). */
export interface BundledToolServer {
  readonly id: string;
  readonly name: string;
  readonly uri: string;
  readonly transport: string;
  readonly description?: string;
  readonly header_names: readonly string[];
  readonly auth?: { readonly type: 'bearer' } | { readonly type: 'header'; readonly header: string };
  readonly tool_ids: readonly string[];
}

export interface BundledGlossary {
  readonly key: string;
  readonly name: string;
  readonly description?: string;
  readonly entries: Readonly<Record<string, string>>;
}

export interface AgentBundle {
  readonly format: typeof AGENT_BUNDLE_FORMAT;
  readonly version: typeof AGENT_BUNDLE_VERSION;
  readonly exported_at: string;
  readonly agent: { readonly key: string; readonly config: AgentConfig };
  readonly instructions: readonly BundledInstruction[];
  readonly tool_configurations: readonly BundledToolConfiguration[];
  readonly tools: readonly BundledTool[];
  readonly tool_servers: readonly BundledToolServer[];
  readonly glossaries: readonly BundledGlossary[];
  /** Names only: `agent` the agent's secrets (set or referred to), `tool_servers` each server's credential. */
  readonly secrets: { readonly agent: readonly string[]; readonly tool_servers: readonly { readonly tool_server_id: string; readonly credential: string }[] };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The names of every `{"$ref": "agent.secrets.<name>"}` inside a value. */
export function agentSecretNames(value: unknown, into: Set<string> = new Set(), depth = 0): Set<string> {
  if (depth > 64) return into;
  if (Array.isArray(value)) value.forEach((v) => agentSecretNames(v, into, depth + 1));
  else if (isObject(value)) {
    if (typeof value.$ref === 'string' && value.$ref.startsWith('agent.secrets.')) into.add(value.$ref.slice('agent.secrets.'.length));
    else Object.values(value).forEach((v) => agentSecretNames(v, into, depth + 1));
  }
  return into;
}

/** What a map of tools names directly: reusable configurations, `/v2/tools` tools, MCP tools, glossaries. */
export interface ToolNames {
  readonly toolConfigurations: string[];
  readonly userTools: string[];
  readonly mcpTools: string[];
  readonly glossaries: string[];
}

export function toolNames(tools: Readonly<Record<string, ToolConfig>> | undefined): ToolNames {
  const names: ToolNames = { toolConfigurations: [], userTools: [], mcpTools: [], glossaries: [] };
  for (const tool of Object.values(tools ?? {})) {
    if (!isObject(tool)) continue;
    if (tool.type === 'reference' && typeof tool.tool_configuration_key === 'string') names.toolConfigurations.push(tool.tool_configuration_key);
    if ((tool.type === 'lambda' || tool.type === 'client') && typeof tool.tool_id === 'string') names.userTools.push(tool.tool_id);
    if (tool.type === 'mcp' && typeof tool.tool_id === 'string') names.mcpTools.push(tool.tool_id);
    const glossary = isObject(tool.argument_override) ? tool.argument_override.glossary_key : undefined;
    if ((tool.type === 'glossary_put_entries' || tool.type === 'glossary_delete_entries') && typeof glossary === 'string') names.glossaries.push(glossary);
  }
  return names;
}

/** Instruction ids the agent names, each with the versions it pins (`latest`: named without a version). */
export function instructionReferences(config: AgentConfig): Map<string, Set<number | 'latest'>> {
  const refs = new Map<string, Set<number | 'latest'>>();
  for (const step of Object.values(config.steps)) {
    for (const ins of step.instructions) {
      if (ins.type !== 'reference') continue;
      const set = refs.get(ins.id) ?? new Set();
      set.add(ins.version ?? 'latest');
      refs.set(ins.id, set);
    }
  }
  return refs;
}

/** Glossaries the steps' `glossary_expansion` reminders name. */
export function reminderGlossaries(config: AgentConfig): string[] {
  return Object.values(config.steps).flatMap((s) => s.reminders.flatMap((r) => (r.type === 'glossary_expansion' ? [r.glossary_key] : [])));
}

/** JSON equality that ignores key order (stored objects and bundled ones are built in different orders). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).filter((k) => v[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

const KEY = /^[a-zA-Z0-9_-]{1,50}$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,50}$/;
const str = (v: unknown, max: number, min = 1) => typeof v === 'string' && v.length >= min && v.length <= max;

/**
 * The bundle's own shape, and each object's checks that need nothing but the object (the create routes' field
 * checks), keyed `bundle.<part>[i].<field>`. What needs the service (templates, the model, references, code) is
 * checked by the importer.
 */
export function bundleProblems(bundle: unknown): Record<string, string> {
  if (!isObject(bundle)) return { bundle: 'must be an agent bundle object (GET /v2/agents/{agent_key}/export)' };
  if (bundle.format !== AGENT_BUNDLE_FORMAT) return { 'bundle.format': `must be "${AGENT_BUNDLE_FORMAT}"` };
  if (bundle.version !== AGENT_BUNDLE_VERSION) return { 'bundle.version': `this service reads version ${AGENT_BUNDLE_VERSION}` };
  const problems: Record<string, string> = {};
  const agent = bundle.agent;
  if (!isObject(agent)) problems['bundle.agent'] = 'must be {"key", "config"}';
  else {
    if (typeof agent.key !== 'string' || !KEY.test(agent.key)) problems['bundle.agent.key'] = 'must be 1 to 50 letters, digits, underscores or hyphens';
    if (!isObject(agent.config)) problems['bundle.agent.config'] = 'must be the agent configuration object';
  }
  for (const part of ['instructions', 'tool_configurations', 'tools', 'tool_servers', 'glossaries'] as const) {
    if (bundle[part] !== undefined && !Array.isArray(bundle[part])) problems[`bundle.${part}`] = 'must be an array';
  }
  if (Object.keys(problems).length) return problems;
  const each = (part: string, check: (item: Record<string, unknown>, at: string) => void) =>
    ((bundle[part] as unknown[] | undefined) ?? []).forEach((item, i) => (isObject(item) ? check(item, `bundle.${part}[${i}]`) : (problems[`bundle.${part}[${i}]`] = 'must be an object')));
  const seen = new Set<string>();
  each('instructions', (ins, at) => {
    if (typeof ins.id !== 'string' || !/^ins_[A-Za-z0-9-]{1,64}$/.test(ins.id)) problems[`${at}.id`] = 'must be an instruction id (ins_…)';
    if (!(Number.isInteger(ins.version) && (ins.version as number) >= 1)) problems[`${at}.version`] = 'must be an integer from 1';
    else if (seen.has(`${String(ins.id)}@${String(ins.version)}`)) problems[`${at}.version`] = 'this version of the instruction is in the bundle twice';
    seen.add(`${String(ins.id)}@${String(ins.version)}`);
    if (!str(ins.name, 255)) problems[`${at}.name`] = 'must be a string of 1 to 255 characters';
    if (ins.template === undefined) problems[`${at}.template`] = 'is required (an instruction holds its template text)';
    else if (!str(ins.template, 100_000)) problems[`${at}.template`] = 'must be a string of 1 to 100,000 characters';
    if (ins.template_type !== 'velocity' && ins.template_type !== 'text') problems[`${at}.template_type`] = 'must be velocity or text';
    if (ins.description !== undefined && typeof ins.description !== 'string') problems[`${at}.description`] = 'must be a string';
    if (ins.metadata !== undefined && !isObject(ins.metadata)) problems[`${at}.metadata`] = 'must be an object';
    if (ins.enabled !== undefined && typeof ins.enabled !== 'boolean') problems[`${at}.enabled`] = 'must be true or false';
  });
  each('tool_configurations', (tc, at) => {
    if (typeof tc.key !== 'string' || !KEY.test(tc.key)) problems[`${at}.key`] = 'must be 1 to 50 letters, digits, underscores or hyphens';
    if (!isObject(tc.config)) return void (problems[`${at}.config`] = 'must be the tool configuration object');
    if (!str(tc.config.name, 50)) problems[`${at}.config.name`] = 'must be a string of 1 to 50 characters';
    // The identity fields `POST /v2/tool_configurations` checks; the tool's own fields are toolProblems'.
    if (tc.config.description !== undefined && !str(tc.config.description, 10_000, 0)) problems[`${at}.config.description`] = 'must be a string of at most 10,000 characters';
    for (const f of ['enabled', 'enrichment_only']) if (tc.config[f] !== undefined && typeof tc.config[f] !== 'boolean') problems[`${at}.config.${f}`] = 'must be true or false';
    if (tc.config.metadata !== undefined && !isObject(tc.config.metadata)) problems[`${at}.config.metadata`] = 'must be an object';
    Object.assign(problems, toolProblems(`${at}.config`, String(tc.config.name), tc.config as ToolConfig, 'reusable'));
  });
  each('tools', (tool, at) => Object.assign(problems, bundledToolProblems(tool, at)));
  each('glossaries', (g, at) => {
    if (typeof g.key !== 'string' || !KEY.test(g.key)) problems[`${at}.key`] = 'must be 1 to 50 letters, digits, underscores or hyphens';
    if (!str(g.name, 255)) problems[`${at}.name`] = 'must be a string of 1 to 255 characters';
    if (g.description !== undefined && typeof g.description !== 'string') problems[`${at}.description`] = 'must be a string';
    if (!isObject(g.entries)) return void (problems[`${at}.entries`] = 'must be an object of term → expansion');
    for (const [term, expansion] of Object.entries(g.entries)) {
      if (!term.trim() || term.length > 200) problems[`${at}.entries.${term}`] = 'a term has 1 to 200 characters';
      else if (typeof expansion !== 'string' || !expansion.trim() || expansion.length > 1000) problems[`${at}.entries.${term}`] = 'an expansion is a string of 1 to 1000 characters';
    }
  });
  for (const [part, id] of [['tools', 'id'], ['tool_configurations', 'key'], ['glossaries', 'key']] as const) {
    const ids = new Set<unknown>();
    ((bundle[part] as Record<string, unknown>[] | undefined) ?? []).forEach((item, i) => {
      if (isObject(item) && ids.has(item[id])) problems[`bundle.${part}[${i}].${id}`] = `${String(item[id])} is in the bundle twice`;
      if (isObject(item)) ids.add(item[id]);
    });
  }
  const secrets = bundle.secrets;
  if (secrets !== undefined && (!isObject(secrets) || (secrets.agent !== undefined && !(Array.isArray(secrets.agent) && secrets.agent.every((n) => typeof n === 'string' && n.length <= 255))))) {
    problems['bundle.secrets.agent'] = 'must be an array of secret names';
  }
  each('tool_servers', (s, at) => {
    if (typeof s.id !== 'string') problems[`${at}.id`] = 'must be a tool server id';
    if (!Array.isArray(s.tool_ids) || !s.tool_ids.every((t) => typeof t === 'string')) problems[`${at}.tool_ids`] = 'must be an array of tool ids';
  });
  return problems;
}

/** The checks `POST /v2/tools` makes of a tool's own fields (the code itself is checked in the sandbox). */
function bundledToolProblems(tool: Record<string, unknown>, at: string): Record<string, string> {
  const problems: Record<string, string> = {};
  if (tool.type !== 'lambda' && tool.type !== 'client') return { [`${at}.type`]: 'must be lambda or client' };
  if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) problems[`${at}.name`] = 'must be 1 to 50 letters, digits, underscores or hyphens';
  else if (tool.id !== `tol_${tool.name}`) problems[`${at}.id`] = `must be tol_${tool.name} (a tool's id is tol_<name>)`;
  if (!str(tool.description, 5000)) problems[`${at}.description`] = 'must be a string of 1 to 5000 characters';
  if (tool.title !== undefined && !str(tool.title, 128)) problems[`${at}.title`] = 'must be a string of 1 to 128 characters';
  if (tool.enabled !== undefined && typeof tool.enabled !== 'boolean') problems[`${at}.enabled`] = 'must be true or false';
  if (tool.type === 'client') {
    for (const f of ['input_schema', 'output_schema']) if (tool[f] !== undefined && !isObject(tool[f])) problems[`${at}.${f}`] = 'must be a JSON schema object';
    return problems;
  }
  if (tool.code === undefined) problems[`${at}.code`] = 'is required (a lambda holds its code)';
  else if (!str(tool.code, 100_000)) problems[`${at}.code`] = 'must be a string of 1 to 100,000 characters';
  if (tool.language !== undefined && tool.language !== 'python') problems[`${at}.language`] = 'must be python (Python 3.12)';
  const exec = tool.execution_configuration;
  if (exec !== undefined && (!isObject(exec) || (exec.max_execution_time_seconds !== undefined && !(Number.isInteger(exec.max_execution_time_seconds) && (exec.max_execution_time_seconds as number) >= 1 && (exec.max_execution_time_seconds as number) <= 21_600)))) {
    problems[`${at}.execution_configuration.max_execution_time_seconds`] = 'must be an integer from 1 to 21600';
  }
  if (tool.tool_configurations !== undefined) {
    if (!isObject(tool.tool_configurations)) problems[`${at}.tool_configurations`] = 'must be an object';
    else for (const [name, inner] of Object.entries(tool.tool_configurations)) Object.assign(problems, toolProblems(`${at}.tool_configurations.${name}`, name, inner as ToolConfig, 'reusable'));
  }
  return problems;
}

/**
 * The bundle with its MCP tool ids replaced as `ids` maps them (in the agent's tools, its reusable configurations and
 * its lambdas' tools): an MCP tool's id is derived from its server's id, which the target's server does not share.
 */
export function withMcpToolIds(bundle: AgentBundle, ids: ReadonlyMap<string, string>): AgentBundle {
  if (!ids.size) return bundle;
  const map = <T>(tools: T): T =>
    isObject(tools)
      ? (Object.fromEntries(Object.entries(tools).map(([name, tool]) => [name, isObject(tool) && tool.type === 'mcp' && typeof tool.tool_id === 'string' && ids.has(tool.tool_id) ? { ...tool, tool_id: ids.get(tool.tool_id) } : tool])) as T)
      : tools;
  return {
    ...bundle,
    agent: { ...bundle.agent, config: { ...bundle.agent.config, tool_configurations: map(bundle.agent.config.tool_configurations) } },
    tool_configurations: bundle.tool_configurations.map((tc) => ({ ...tc, config: map({ config: tc.config }).config })),
    tools: bundle.tools.map((t) => (t.tool_configurations === undefined ? t : { ...t, tool_configurations: map(t.tool_configurations) })),
  };
}
