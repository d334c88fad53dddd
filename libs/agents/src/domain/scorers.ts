/**
 * One scorer of a finished turn (docs/agents.md, "Scorers"), as a request names it. Shared by canary aliases
 * (libs/aliases) and evaluations.
 */
export type ScorerSpec =
  | { readonly type: 'factual_consistency' }
  | { readonly type: 'llm_judge'; readonly llm_name: string; readonly rubric: string }
  | { readonly type: 'same_tool_calls' }
  | { readonly type: 'structured_output_valid' }
  | { readonly type: 'lambda'; readonly tool_id: string };

export type ScorerType = ScorerSpec['type'];

export const SCORER_TYPES: readonly ScorerType[] = ['factual_consistency', 'llm_judge', 'same_tool_calls', 'structured_output_valid', 'lambda'];

/** At most this many scorers in a list: each may call a model per turn. */
export const MAX_SCORERS = 10;

/**
 * What one scorer said of one turn: `score` in 0..1, or null when it does not apply (no sources, no baseline, no
 * schema) or when it failed (`error` then says why: a judge's malformed answer, a lambda that cannot run).
 */
export interface ScoreResult {
  readonly type: ScorerType;
  readonly score: number | null;
  readonly reason?: string;
  readonly error?: string;
}

const FIELDS: Record<ScorerType, readonly string[]> = {
  factual_consistency: [],
  llm_judge: ['llm_name', 'rubric'],
  same_tool_calls: [],
  structured_output_valid: [],
  lambda: ['tool_id'],
};

/**
 * The first shape problem of a scorer list as `[field, reason]`, fields under `prefix` (`scorers[0].type`): a
 * list of 1..10 objects, each a known type with its own fields and no other. Whether a named model or tool exists
 * is the application's check.
 */
export function scorerListProblem(raw: unknown, prefix = 'scorers'): [string, string] | undefined {
  if (!Array.isArray(raw) || !raw.length || raw.length > MAX_SCORERS) return [prefix, `must be a list of 1 to ${MAX_SCORERS} scorers`];
  for (const [i, s] of raw.entries()) {
    const at = `${prefix}[${i}]`;
    if (!s || typeof s !== 'object' || Array.isArray(s)) return [at, 'must be an object {"type", ...}'];
    const o = s as Record<string, unknown>;
    if (typeof o.type !== 'string' || !(SCORER_TYPES as readonly string[]).includes(o.type)) return [`${at}.type`, `must be one of ${SCORER_TYPES.join(', ')}`];
    const type = o.type as ScorerType;
    const extra = Object.keys(o).find((k) => k !== 'type' && !FIELDS[type].includes(k));
    if (extra) return [`${at}.${extra}`, `is not a field of a ${type} scorer`];
    if (type === 'llm_judge') {
      if (typeof o.llm_name !== 'string' || !o.llm_name) return [`${at}.llm_name`, 'names a registered LLM (GET /v2/llms)'];
      if (typeof o.rubric !== 'string' || !o.rubric.trim() || o.rubric.length > 10_000) return [`${at}.rubric`, 'must be a text of 1 to 10,000 characters'];
    }
    if (type === 'lambda' && (typeof o.tool_id !== 'string' || !o.tool_id)) return [`${at}.tool_id`, 'names a lambda tool (GET /v2/tools)'];
  }
  return undefined;
}
