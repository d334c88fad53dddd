import { invalid } from '@lib/platform/kernel';
import { toolProblems, type ToolConfig } from '@lib/tools/domain';
import { skillProblems, type AgentSkill } from './skills';
import { guardrailProblems, type GuardrailConfig } from './guardrails';
import { memoryProblems, type MemoryConfig } from './memory';

/**
 * An agent's configuration in the reference API's own field names (snake_case): it is the contract clients
 * write and read, so it is stored as given once normalised (defaults filled, the deprecated `first_step`
 * folded into `steps`). Types here are what the turn reads; the edge checks shapes, `validateAgentConfig`
 * checks what refers to what.
 */
export type TemplateType = 'velocity' | 'text';

export type StepInstruction =
  | { readonly type: 'inline'; readonly name?: string; readonly description?: string; readonly template_type?: TemplateType; readonly template: string }
  | { readonly type: 'reference'; readonly id: string; readonly version?: number };

export type OutputParser =
  | { readonly type: 'default' }
  | { readonly type: 'structured'; readonly json_schema: { readonly name: string; readonly description?: string; readonly strict?: boolean | null; readonly schema: Record<string, unknown> } };

export type ReminderHook = 'input_message' | 'tool_output';

export interface TemplatedReminder {
  readonly type: 'templated';
  readonly template_type?: TemplateType;
  readonly template: string;
  readonly hooks: readonly ReminderHook[];
  readonly fire_every?: number;
  readonly skip_first?: number;
}

export interface NextStep {
  readonly condition?: string;
  readonly step_name: string;
}

/** Expands a glossary's terms in the user messages of the step (the reference's GlossaryExpansionReminder). */
export interface GlossaryExpansionReminder {
  readonly type: 'glossary_expansion';
  readonly glossary_key: string;
}

export type StepReminder = TemplatedReminder | GlossaryExpansionReminder;

export interface StepConfig {
  readonly instructions: readonly StepInstruction[];
  readonly output_parser: OutputParser;
  readonly reminders: readonly StepReminder[];
  readonly next_steps: readonly NextStep[];
  /** Absent: every tool of the agent; empty: none. */
  readonly allowed_tools?: readonly string[];
  /** Absent: every skill of the agent; empty: none (and no `invoke_skill` tool). */
  readonly allowed_skills?: readonly string[];
  readonly reentry_step?: string;
}

export interface ModelConfig {
  readonly name: string;
  readonly parameters?: Record<string, unknown>;
  readonly retry_configuration?: {
    readonly enabled?: boolean;
    readonly max_retries?: number;
    readonly initial_backoff_ms?: number;
    readonly max_backoff_ms?: number;
    readonly backoff_factor?: number;
  };
}

export interface CompactionConfig {
  readonly enabled?: boolean;
  readonly threshold_percent?: number;
  readonly keep_recent_inputs?: number;
  readonly compaction_message?: string;
  readonly tool_event_policy?: 'exclude' | 'include_outputs' | 'include_all';
}

export interface OffloadingConfig {
  readonly enabled?: boolean;
  readonly mode?: 'artifact' | 'truncate';
  readonly context_percentage?: number;
  readonly max_threshold_bytes?: number;
  readonly min_threshold_bytes?: number;
  readonly headroom_percentage?: number;
}

export interface AgentConfig {
  readonly name: string;
  readonly description?: string;
  readonly tool_configurations: Readonly<Record<string, ToolConfig>>;
  /** Skills by name (docs/agents.md, Skills); absent when the agent has none. */
  readonly skills?: Readonly<Record<string, AgentSkill>>;
  readonly model: ModelConfig;
  readonly first_step_name: string;
  readonly steps: Readonly<Record<string, StepConfig>>;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly enabled: boolean;
  readonly compaction?: CompactionConfig;
  readonly tool_output_offloading?: OffloadingConfig;
  readonly llm_quota?: Record<string, number>;
  /** A UserFn expression over `{agent, session, currentDate}` evaluated at session creation: false refuses the session (409). */
  readonly run_condition?: string;
  /** Tool calls run while a session is created; their outputs go into the session's metadata (docs/tools.md). */
  readonly session_enrichment?: SessionEnrichmentConfig;
  /** Checks on inputs, tool calls and answers (docs/agents.md, "Guardrails"); absent: none. */
  readonly guardrails?: readonly GuardrailConfig[];
  /** Memory blocks (docs/agents.md, Memory); absent when the agent has none. */
  readonly memory?: MemoryConfig;
}

export interface EnrichmentCall {
  /** A tool of the agent (`tool_configurations` key), possibly a reference to an `enrichment_only` configuration. */
  readonly tool: string;
  readonly arguments?: Record<string, unknown>;
  /** 1–300 s, default 30: past it the session is not created (504). */
  readonly timeout_seconds?: number;
  /** The session metadata field the output is stored under (default: the tool's name). */
  readonly metadata_key?: string;
}

export interface SessionEnrichmentConfig {
  readonly tool_calls: readonly EnrichmentCall[];
}

export const MAX_ENRICHMENT_CALLS = 10;

/** The compaction an agent gets when it configures none: on, at 80 % of the context, keeping the last input. */
export const DEFAULT_COMPACTION: Required<Omit<CompactionConfig, 'compaction_message'>> = {
  enabled: true,
  threshold_percent: 80,
  keep_recent_inputs: 1,
  tool_event_policy: 'include_outputs',
};

/** The spec's offloading defaults; `mode` is chosen by the tools configured (see `effectiveOffloading`). */
export const DEFAULT_OFFLOADING = { enabled: true, context_percentage: 0.25, headroom_percentage: 0.7, min_threshold_bytes: 1024, max_threshold_bytes: 1_048_576 } as const;

const ARTIFACT_TOOLS = ['artifact_read', 'artifact_grep', 'artifact_jq'];

/** Offloading with defaults filled: `artifact` mode when an artifact reading tool is configured, else `truncate`. */
export function effectiveOffloading(config: AgentConfig): Required<OffloadingConfig> {
  const given = config.tool_output_offloading ?? {};
  const hasArtifactTool = Object.values(config.tool_configurations).some((t) => ARTIFACT_TOOLS.includes(t.type));
  return { ...DEFAULT_OFFLOADING, mode: hasArtifactTool ? 'artifact' : 'truncate', ...given } as Required<OffloadingConfig>;
}

export const effectiveCompaction = (config: AgentConfig): CompactionConfig & typeof DEFAULT_COMPACTION => ({ ...DEFAULT_COMPACTION, ...config.compaction });

/** A step with the reference's defaults filled. */
export function normaliseStep(step: Partial<StepConfig> & Record<string, unknown>): StepConfig {
  if (step === null || typeof step !== 'object' || Array.isArray(step)) return step as unknown as StepConfig;
  const { type: _deprecated, name: _name, ...rest } = step as Record<string, unknown>;
  return {
    ...(rest as Partial<StepConfig>),
    instructions: step.instructions ?? [],
    output_parser: step.output_parser ?? { type: 'default' },
    reminders: step.reminders ?? [],
    next_steps: step.next_steps ?? [],
  };
}

/** The checks the edge cannot make: every name that refers to a step or a tool names one that exists. */
export function validateAgentConfig(config: AgentConfig): void {
  const problems: Record<string, string> = {};
  const steps = Object.keys(config.steps);
  if (!config.steps[config.first_step_name]) {
    problems.first_step_name = steps.length ? `names no step: the steps are ${steps.join(', ')}` : 'names no step: define the step in steps (or give the deprecated first_step)';
  }
  for (const [name, tool] of Object.entries(config.tool_configurations)) Object.assign(problems, toolProblems(`tool_configurations.${name}`, name, tool, 'agent'));
  Object.assign(problems, enrichmentProblems(config));
  Object.assign(problems, skillProblems(config.skills, config.steps, Object.keys(config.tool_configurations)));
  Object.assign(problems, guardrailProblems(config.guardrails));
  Object.assign(problems, memoryProblems(config.memory, Object.keys(config.tool_configurations)));
  for (const [name, step] of Object.entries(config.steps)) {
    if (!/^[a-zA-Z0-9_-]{1,255}$/.test(name)) problems[`steps.${name}`] = 'a step name is 1 to 255 letters, digits, underscores or hyphens';
    const shape = stepShapeProblem(step);
    if (shape) {
      problems[shape[0] ? `steps.${name}.${shape[0]}` : `steps.${name}`] = shape[1];
      continue;
    }
    step.next_steps.forEach((next, i) => {
      if (!config.steps[next.step_name]) problems[`steps.${name}.next_steps[${i}].step_name`] = `names no step (${steps.join(', ')})`;
    });
    if (step.reentry_step !== undefined && !config.steps[step.reentry_step]) problems[`steps.${name}.reentry_step`] = `names no step (${steps.join(', ')})`;
    for (const tool of step.allowed_tools ?? []) {
      if (!config.tool_configurations[tool]) problems[`steps.${name}.allowed_tools`] = `${tool} is not one of the agent's tool_configurations`;
    }
    step.reminders.forEach((r, i) => {
      if (r.type !== 'templated' && r.type !== 'glossary_expansion') problems[`steps.${name}.reminders[${i}].type`] = `reminder type ${String((r as { type: unknown }).type)} is not available (templated, glossary_expansion are)`;
    });
  }
  const first = Object.entries(problems)[0];
  if (first) throw invalid('agent.invalid', first[1].startsWith('is required') ? `${first[0]} ${first[1]}` : `Invalid ${first[0]}: ${first[1]}`, problems);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isStringArray = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'string');
const intIn = (v: unknown, min: number, max: number) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
const TEMPLATE_TYPES = ['velocity', 'text'];

/** The first field of a step whose shape is wrong, and why (steps are a map, which class-validator cannot walk). */
function stepShapeProblem(step: StepConfig): [string, string] | undefined {
  if (!isObject(step)) return ['', 'must be a step object'];
  if (!Array.isArray(step.instructions)) return ['instructions', 'must be an array'];
  for (const [i, ins] of (step.instructions as unknown[]).entries()) {
    if (!isObject(ins)) return [`instructions[${i}]`, 'must be an object'];
    if (ins.type === 'inline') {
      if (ins.template === undefined) return [`instructions[${i}].template`, 'is required (an inline instruction holds its template text)'];
      if (typeof ins.template !== 'string') return [`instructions[${i}].template`, 'must be a string'];
      if (ins.template_type !== undefined && !TEMPLATE_TYPES.includes(ins.template_type as string)) return [`instructions[${i}].template_type`, 'must be velocity or text'];
    } else if (ins.type === 'reference') {
      if (typeof ins.id !== 'string') return [`instructions[${i}].id`, 'must be an instruction id'];
      if (ins.version !== undefined && !(Number.isInteger(ins.version) && (ins.version as number) >= 1)) return [`instructions[${i}].version`, 'must be an integer from 1'];
    } else return [`instructions[${i}].type`, 'must be inline or reference'];
  }
  const parser = step.output_parser as unknown;
  if (!isObject(parser) || !['default', 'structured'].includes(parser.type as string)) return ['output_parser.type', 'must be default or structured'];
  if (parser.type === 'structured') {
    const js = parser.json_schema;
    if (!isObject(js) || typeof js.name !== 'string' || !isObject(js.schema)) return ['output_parser.json_schema', 'needs a name and a schema object'];
  }
  if (!Array.isArray(step.reminders)) return ['reminders', 'must be an array'];
  for (const [i, r] of (step.reminders as unknown[]).entries()) {
    if (!isObject(r)) return [`reminders[${i}]`, 'must be an object'];
    if (r.type === 'glossary_expansion' && typeof r.glossary_key !== 'string') return [`reminders[${i}].glossary_key`, 'names a glossary'];
    if (r.type !== 'templated') continue;
    if (r.template === undefined) return [`reminders[${i}].template`, 'is required (a templated reminder holds its template text)'];
    if (typeof r.template !== 'string') return [`reminders[${i}].template`, 'must be a string'];
    if (!Array.isArray(r.hooks) || r.hooks.length === 0 || !r.hooks.every((h) => h === 'input_message' || h === 'tool_output')) return [`reminders[${i}].hooks`, 'must list input_message and/or tool_output'];
    if (r.fire_every !== undefined && !(Number.isInteger(r.fire_every) && (r.fire_every as number) >= 1)) return [`reminders[${i}].fire_every`, 'must be an integer from 1'];
    if (r.skip_first !== undefined && !(Number.isInteger(r.skip_first) && (r.skip_first as number) >= 0)) return [`reminders[${i}].skip_first`, 'must be a non-negative integer'];
    if (r.template_type !== undefined && !TEMPLATE_TYPES.includes(r.template_type as string)) return [`reminders[${i}].template_type`, 'must be velocity or text'];
  }
  if (!Array.isArray(step.next_steps)) return ['next_steps', 'must be an array'];
  for (const [i, n] of (step.next_steps as unknown[]).entries()) {
    if (!isObject(n) || typeof n.step_name !== 'string') return [`next_steps[${i}].step_name`, 'must be a step name'];
    if (n.condition !== undefined && typeof n.condition !== 'string') return [`next_steps[${i}].condition`, 'must be a UserFn expression'];
  }
  if (step.allowed_tools !== undefined && !isStringArray(step.allowed_tools)) return ['allowed_tools', 'must be an array of tool configuration names'];
  if (step.reentry_step !== undefined && typeof step.reentry_step !== 'string') return ['reentry_step', 'must be a step name'];
  return undefined;
}

function enrichmentProblems(config: AgentConfig): Record<string, string> {
  const e = config.session_enrichment as unknown;
  if (e === undefined) return {};
  if (!isObject(e) || !Array.isArray(e.tool_calls)) return { session_enrichment: 'must be {"tool_calls": [...]}' };
  if (e.tool_calls.length > MAX_ENRICHMENT_CALLS) return { 'session_enrichment.tool_calls': `at most ${MAX_ENRICHMENT_CALLS} calls` };
  const problems: Record<string, string> = {};
  (e.tool_calls as unknown[]).forEach((c, i) => {
    const at = `session_enrichment.tool_calls[${i}]`;
    if (!isObject(c) || typeof c.tool !== 'string') problems[`${at}.tool`] = 'names a tool of the agent';
    else if (!config.tool_configurations[c.tool]) problems[`${at}.tool`] = `${c.tool} is not one of the agent's tool_configurations`;
    else if (config.tool_configurations[c.tool].type === 'client') problems[`${at}.tool`] = 'a client tool cannot run while a session is created';
    else if (c.arguments !== undefined && !isObject(c.arguments)) problems[`${at}.arguments`] = 'must be an object';
    else if (c.timeout_seconds !== undefined && !intIn(c.timeout_seconds, 1, 300)) problems[`${at}.timeout_seconds`] = 'must be an integer from 1 to 300';
    else if (c.metadata_key !== undefined && (typeof c.metadata_key !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(c.metadata_key))) problems[`${at}.metadata_key`] = 'must be 1 to 64 letters, digits, underscores or hyphens';
  });
  return problems;
}
