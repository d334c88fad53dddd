import { approvalProblem, type ApprovalRule } from './tool-approval';
import { REFERENCE_TOOL_TYPES, SUPPORTED_TOOL_TYPES, TOOL_TYPE_CHECKS, type ToolType } from './tool-types';

/** One tool an agent (or a reusable configuration, or a lambda) configures, in the reference's field names. */
export interface ToolConfig {
  readonly type: ToolType | 'reference';
  /** reference: the key of a reusable configuration (`/v2/tool_configurations`). */
  readonly tool_configuration_key?: string;
  readonly description?: string;
  readonly enabled?: boolean;
  readonly argument_override?: Record<string, unknown>;
  /** corpora_search: the search the tool runs; the model supplies only the query. */
  readonly query_configuration?: Record<string, unknown>;
  /** client: the id of the tool definition (reference `/v2/tools`). */
  readonly tool_id?: string;
  /** client: the JSON schema of the arguments the model fills (an extension until `/v2/tools` exists). */
  readonly parameters?: Record<string, unknown>;
  /** A person approves each call (or those its `when` picks) before it runs (docs/agents.md). */
  readonly requires_approval?: boolean | ApprovalRule;
  readonly [field: string]: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Tool types a reusable configuration (`/v2/tool_configurations`) may not have: client tools live on their agent. */
const INLINE_ONLY = ['client', 'reference'];

/**
 * What is wrong with one tool configuration, keyed by field under `prefix`: inline on an agent (`where: agent`,
 * the map key is the name the model calls) or reusable (`where: reusable`).
 */
export function toolProblems(prefix: string, name: string, tool: ToolConfig, where: 'agent' | 'reusable'): Record<string, string> {
  if (!isObject(tool)) return { [prefix]: 'must be a tool configuration object' };
  if (where === 'agent' && !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) return { [prefix]: 'a tool configuration name is 1 to 64 letters, digits, underscores or hyphens (the model calls it by this name)' };
  if (where === 'agent' && tool.type === 'reference') {
    if (typeof tool.tool_configuration_key !== 'string') return { [`${prefix}.tool_configuration_key`]: 'a reference names a reusable tool configuration by its key' };
    const approval = approvalProblem(tool.requires_approval);
    return approval ? { [`${prefix}.${approval[0]}`]: approval[1] } : {};
  }
  if (where === 'reusable' && INLINE_ONLY.includes(tool.type)) return { [`${prefix}.type`]: `a ${tool.type} tool is defined inline on its agent, not as a reusable configuration` };
  if ((tool.type as string) === 'dynamic_vectara') return { [`${prefix}.tool_id`]: `must name a built-in tool GET /v2/tools lists as dynamic_vectara (${DYNAMIC_PREFIX}<name>)` };
  if (!(SUPPORTED_TOOL_TYPES as readonly string[]).includes(tool.type)) return { [`${prefix}.type`]: `tool type ${String(tool.type)} is not available in this service yet; available: ${[...SUPPORTED_TOOL_TYPES, 'reference'].join(', ')}` };
  const check = TOOL_TYPE_CHECKS[tool.type as ToolType];
  const shape = check?.needs?.(tool) ?? sharedFieldProblem(tool) ?? check?.fields?.(tool);
  return shape ? { [`${prefix}.${shape[0]}`]: shape[1] } : {};
}

const DYNAMIC_PREFIX = 'tol_builtin_';

/**
 * The reference's `{"type": "dynamic_vectara", "tool_id": "tol_builtin_<name>"}` (a built-in without a configuration
 * type of its own, as GET /v2/tools lists it) as the configuration of that built-in (`{"type": "<name>", …}`), the
 * other fields kept. Applied where configurations are written, before rights and checks read the type, so such a
 * tool is checked (corpora it reads, approvals) as the built-in it is and runs as one. Anything else is returned as
 * given (an unknown `tool_id` is refused by {@link toolProblems}).
 */
export function resolveDynamicTool<T>(tool: T): T {
  if (!isObject(tool) || tool.type !== 'dynamic_vectara' || typeof tool.tool_id !== 'string' || !tool.tool_id.startsWith(DYNAMIC_PREFIX)) return tool;
  const type = tool.tool_id.slice(DYNAMIC_PREFIX.length);
  if (!(SUPPORTED_TOOL_TYPES as readonly string[]).includes(type) || REFERENCE_TOOL_TYPES.has(type)) return tool;
  const { tool_id: _named, ...rest } = tool;
  return { ...rest, type } as T;
}

/** {@link resolveDynamicTool} over a `tool_configurations` map (a merge patch's too: null values stay null). */
export function resolveDynamicTools<T>(map: T): T {
  if (!isObject(map)) return map;
  return Object.fromEntries(Object.entries(map).map(([name, tool]) => [name, resolveDynamicTool(tool)])) as T;
}

const intIn = (v: unknown, min: number, max: number) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
const numIn = (v: unknown, min: number, max: number) => typeof v === 'number' && v >= min && v <= max;

/** The fields every tool shares (docs/tools.md); the first wrong one. */
function sharedFieldProblem(tool: ToolConfig): [string, string] | undefined {
  for (const f of ['input_transform', 'output_transform'] as const) {
    const v = tool[f];
    if (v !== undefined && (typeof v !== 'string' || v.length === 0 || v.length > 10_000)) return [f, 'must be a jq program of 1 to 10,000 characters'];
  }
  if (tool.max_execution_time_seconds !== undefined && !intIn(tool.max_execution_time_seconds, 1, 3600)) return ['max_execution_time_seconds', 'must be an integer from 1 to 3600'];
  if (tool.argument_override !== undefined && !isObject(tool.argument_override)) return ['argument_override', 'must be an object'];
  const approval = approvalProblem(tool.requires_approval);
  if (approval) return approval;
  if (tool.type === 'client' && tool.requires_approval) return ['requires_approval', 'a client tool is run by the caller of the session, who decides on each call already'];
  const o = tool.tool_output_offloading;
  if (o !== undefined) {
    if (!isObject(o)) return ['tool_output_offloading', 'must be an object'];
    if (o.enabled !== undefined && typeof o.enabled !== 'boolean') return ['tool_output_offloading.enabled', 'must be true or false'];
    if (o.mode !== undefined && o.mode !== 'artifact' && o.mode !== 'truncate') return ['tool_output_offloading.mode', 'must be artifact or truncate'];
    for (const f of ['context_percentage', 'headroom_percentage']) if (o[f] !== undefined && !numIn(o[f], 0.01, 1)) return [`tool_output_offloading.${f}`, 'must be from 0.01 to 1'];
    for (const f of ['min_threshold_bytes', 'max_threshold_bytes']) if (o[f] !== undefined && !intIn(o[f], 1024, Number.MAX_SAFE_INTEGER)) return [`tool_output_offloading.${f}`, 'must be an integer from 1024'];
  }
  return undefined;
}

