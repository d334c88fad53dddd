/**
 * The tool types an agent may configure and the checks of each type's own fields (the agent-level types' too:
 * reusable configurations and lambdas, which live here, are checked as agents are). The tool type entries
 * (application/tools/tool-catalogue.ts here and in libs/agents) name these checks; a unit spec holds the two
 * lists to each other.
 */

/** Tool types this service runs today; the others of the reference are refused with a 400 that says so. */
export const SUPPORTED_TOOL_TYPES = ['corpora_search', 'client', 'web_get', 'artifact_read', 'artifact_grep', 'artifact_jq', 'sub_agent', 'get_document_text', 'scratch_pad', 'mcp', 'web_search', 'document_index', 'schedule_wakeup', 'glossary_put_entries', 'glossary_delete_entries', 'image_read', 'get_document', 'lambda', 'image_analysis', 'corpora_search_20260608', 'session_recall'] as const;
export type ToolType = (typeof SUPPORTED_TOOL_TYPES)[number];

/** The types of the reference's `Tool` (its discriminator). A built-in tool of another type is listed as `dynamic_vectara`. */
export const REFERENCE_TOOL_TYPES: ReadonlySet<string> = new Set(['dynamic_vectara', 'mcp', 'corpora_search', 'web_search', 'web_get', 'lambda', 'sub_agent', 'artifact_create', 'artifact_read', 'artifact_grep', 'image_read', 'document_conversion', 'get_document_text', 'client']);

/** A tool configuration as its checks read it (every `ToolConfig` is one). */
export interface CheckedTool {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** The first wrong field of a tool configuration (a path under the configuration) and why. */
export type ToolFieldProblem = [field: string, problem: string];

/** The checks of one tool type's own fields (docs/tools.md). */
export interface ToolTypeCheck {
  /** What the type cannot be described without, checked before the fields every tool shares. */
  readonly needs?: (tool: CheckedTool) => ToolFieldProblem | undefined;
  /** Its own fields' shapes and bounds, checked after the fields every tool shares. */
  readonly fields?: (tool: CheckedTool) => ToolFieldProblem | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const intIn = (v: unknown, min: number, max: number) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

function isCorporaSearch(q: unknown): boolean {
  const corpora = (q as { search?: { corpora?: unknown } } | undefined)?.search?.corpora;
  return Array.isArray(corpora) && corpora.length > 0 && corpora.every((c) => typeof (c as { corpus_key?: unknown } | null)?.corpus_key === 'string');
}

/** `secret_origins` of a web_get tool: where the secrets its overrides resolve may be sent (docs/tools.md). */
function isOriginList(v: unknown): boolean {
  if (!Array.isArray(v) || v.length > 20) return false;
  return v.every((o) => {
    if (typeof o !== 'string' || o.length > 2048) return false;
    try {
      const u = new URL(o);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && u.pathname === '/' && !u.search && !u.hash;
    } catch {
      return false;
    }
  });
}

export const corporaSearchCheck: ToolTypeCheck = {
  needs: (tool) => (isCorporaSearch(tool.query_configuration) ? undefined : ['query_configuration', `a ${tool.type} tool needs query_configuration.search.corpora with at least one corpus_key`]),
};

export const subAgentCheck: ToolTypeCheck = {
  fields: (tool) => {
    const c = tool.sub_agent_configuration;
    if (!isObject(c) || typeof c.agent_key !== 'string') return ['sub_agent_configuration.agent_key', 'a sub_agent tool names the agent it calls'];
    if (c.session_mode !== undefined && !['ephemeral', 'persistent', 'session_scoped', 'agent_scoped', 'llm_controlled'].includes(c.session_mode as string)) return ['sub_agent_configuration.session_mode', 'must be ephemeral, persistent, session_scoped or agent_scoped (llm_controlled: deprecated, session_scoped)'];
    if (c.session_metadata !== undefined && !isObject(c.session_metadata)) return ['sub_agent_configuration.session_metadata', 'must be an object'];
    return undefined;
  },
};

/** lambda and mcp: the configuration names the registered tool it calls. */
export const namedToolCheck: ToolTypeCheck = {
  fields: (tool) => (typeof tool.tool_id !== 'string' || !tool.tool_id ? ['tool_id', `a ${tool.type} tool names its tool by tool_id (GET /v2/tools lists them)`] : undefined),
};

/** A lambda names its tool, and may say its calls have side effects (`side_effects`, a boolean; replays refuse them). */
export const lambdaCheck: ToolTypeCheck = {
  fields: (tool) => namedToolCheck.fields!(tool) ?? (tool.side_effects !== undefined && typeof tool.side_effects !== 'boolean' ? ['side_effects', 'must be true or false'] : undefined),
};

export const imageAnalysisCheck: ToolTypeCheck = {
  fields: (tool) => {
    if (tool.tool_configuration === undefined) return undefined;
    const p = isObject(tool.tool_configuration) ? tool.tool_configuration.preprocessing : undefined;
    if (!isObject(tool.tool_configuration) || (p !== undefined && (!isObject(p) || Object.entries(p).some(([k, v]) => !['upscale', 'enhance_contrast', 'sharpen', 'tile'].includes(k) || typeof v !== 'boolean')))) return ['tool_configuration.preprocessing', 'must be {upscale?, enhance_contrast?, sharpen?, tile?} with true or false'];
    return undefined;
  },
};

export const scratchPadCheck: ToolTypeCheck = {
  fields: (tool) => (tool.max_bytes !== undefined && !intIn(tool.max_bytes, 1, 10_485_760) ? ['max_bytes', 'must be an integer from 1 to 10485760 (10 MB)'] : undefined),
};

export const webGetCheck: ToolTypeCheck = {
  fields: (tool) => {
    if (tool.max_body_bytes !== undefined && !intIn(tool.max_body_bytes, 1024, 4_194_304)) return ['max_body_bytes', 'must be an integer from 1024 to 4194304'];
    if (tool.secret_origins !== undefined && !isOriginList(tool.secret_origins)) return ['secret_origins', 'must be an array of at most 20 http(s) origins such as "https://api.example.com" (scheme, host and port: no path, query or credentials)'];
    return undefined;
  },
};

export const artifactReadCheck: ToolTypeCheck = {
  fields: (tool) => {
    const c = tool.tool_configuration;
    if (c === undefined) return undefined;
    if (!isObject(c)) return ['tool_configuration', 'must be an object'];
    if (c.max_size_bytes !== undefined && !intIn(c.max_size_bytes, 1, 10_485_760)) return ['tool_configuration.max_size_bytes', 'must be an integer from 1 to 10485760'];
    if (c.max_lines !== undefined && !intIn(c.max_lines, 1, 10_000)) return ['tool_configuration.max_lines', 'must be an integer from 1 to 10000'];
    return undefined;
  },
};

/** The most results one `session_recall` call returns, and the most of a message's text each shows. */
export const SESSION_RECALL_MAX_LIMIT = 50;
export const SESSION_RECALL_MAX_TEXT_CHARS = 8_000;

/** session_recall's default `lexical_interpolation`: the corpora query's default (docs/search.md). */
export const SESSION_RECALL_DEFAULT_LEXICAL_INTERPOLATION = 0.025;

/** session_recall (docs/agents.md, "Recall"): how many results and how much of each, and the hybrid blend's lexical weight. */
export const sessionRecallCheck: ToolTypeCheck = {
  fields: (tool) => {
    if (tool.limit !== undefined && !intIn(tool.limit, 1, SESSION_RECALL_MAX_LIMIT)) return ['limit', `must be an integer from 1 to ${SESSION_RECALL_MAX_LIMIT} (default 5)`];
    if (tool.max_text_chars !== undefined && !intIn(tool.max_text_chars, 100, SESSION_RECALL_MAX_TEXT_CHARS)) return ['max_text_chars', `must be an integer from 100 to ${SESSION_RECALL_MAX_TEXT_CHARS} (default 1000)`];
    const lambda = tool.lexical_interpolation;
    if (lambda !== undefined && (typeof lambda !== 'number' || !Number.isFinite(lambda) || lambda < 0 || lambda > 1)) {
      return ['lexical_interpolation', `must be a number from 0 (by meaning only) to 1 (by words only; default ${SESSION_RECALL_DEFAULT_LEXICAL_INTERPOLATION})`];
    }
    return undefined;
  },
};

/** Each type's own checks, by type; a type without one is checked only on the fields every tool shares. */
export const TOOL_TYPE_CHECKS: { readonly [T in ToolType]?: ToolTypeCheck } = {
  corpora_search: corporaSearchCheck,
  corpora_search_20260608: corporaSearchCheck,
  sub_agent: subAgentCheck,
  lambda: lambdaCheck,
  mcp: namedToolCheck,
  image_analysis: imageAnalysisCheck,
  scratch_pad: scratchPadCheck,
  web_get: webGetCheck,
  artifact_read: artifactReadCheck,
  session_recall: sessionRecallCheck,
};
