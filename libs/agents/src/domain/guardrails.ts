/**
 * Guardrails (issue 46, docs/agents.md "Guardrails"): checks an agent's configuration puts on what the model reads
 * (`input`), what it asks a tool to do (`tool_call`) and what the user gets (`output`). The shapes and the actions
 * each type takes are checked here; the patterns (RE2) and the judge's model are checked by the agent writer.
 */
export type GuardrailPoint = 'input' | 'output' | 'tool_call';
export type GuardrailAction = 'flag' | 'block' | 'redact' | 'regenerate';
/** `answer`: the whole answer is held and checked once; `sentence`: released sentence by sentence, each checked. */
export type GuardrailCheck = 'answer' | 'sentence';

interface GuardrailBase {
  readonly name?: string;
  readonly action: GuardrailAction;
  readonly check?: GuardrailCheck;
}

export type GuardrailConfig =
  | (GuardrailBase & { readonly type: 'grounding'; readonly threshold?: number; readonly on?: 'output' })
  | (GuardrailBase & { readonly type: 'judge'; readonly llm_name: string; readonly policy: string; readonly on: GuardrailPoint; readonly threshold?: number })
  | (GuardrailBase & { readonly type: 'pattern'; readonly patterns: readonly string[]; readonly on: GuardrailPoint });

export type GuardrailType = GuardrailConfig['type'];

export const MAX_GUARDRAILS = 20;
export const MAX_GUARDRAIL_PATTERNS = 20;
export const MAX_GUARDRAIL_PATTERN_LENGTH = 1000;
export const MAX_GUARDRAIL_POLICY_LENGTH = 10_000;
/** Below it a grounding score (factual consistency) or a judge's score (compliance with the policy) triggers. */
export const DEFAULT_GUARDRAIL_THRESHOLD = 0.5;
/** What the user gets instead of a blocked answer, and the model instead of a blocked tool's output. */
export const GUARDRAIL_REFUSAL = 'I cannot answer that: the answer was withheld by a guardrail.';
export const GUARDRAIL_INPUT_REFUSAL = 'I cannot help with that request: it was stopped by a guardrail.';
export const REDACTION_MARK = '[REDACTED]';

/**
 * The actions each type takes, by where it runs. A grounding score and a judge's verdict locate nothing, so they
 * cannot redact; a pattern has no reason to give the model, so it cannot regenerate; regenerating makes sense only
 * for the model's own answer; an input or a tool call cannot be asked again of the user.
 */
const ACTIONS: Record<GuardrailType, Record<GuardrailPoint, readonly GuardrailAction[]>> = {
  grounding: { output: ['flag', 'block', 'regenerate'], input: [], tool_call: [] },
  judge: { output: ['flag', 'block', 'regenerate'], input: ['flag', 'block'], tool_call: ['flag', 'block'] },
  pattern: { output: ['flag', 'block', 'redact'], input: ['flag', 'block', 'redact'], tool_call: ['flag', 'block'] },
};

/** A guardrail's name: given, or `<type>_<index>`. */
export const guardrailName = (g: GuardrailConfig, index: number): string => g.name ?? `${g.type}_${index}`;

/** Where a guardrail runs: grounding always on the answer. */
export const guardrailPoint = (g: GuardrailConfig): GuardrailPoint => (g.type === 'grounding' ? 'output' : g.on);

/** The guardrails that run at one point, with their names. */
export function guardrailsAt(guardrails: readonly GuardrailConfig[] | undefined, point: GuardrailPoint): { readonly name: string; readonly guard: GuardrailConfig }[] {
  return (guardrails ?? []).flatMap((guard, i) => (guardrailPoint(guard) === point ? [{ name: guardrailName(guard, i), guard }] : []));
}

/** Whether a streamed answer is released sentence by sentence: only when every output guardrail asks for it. */
export function sentenceRelease(guardrails: readonly GuardrailConfig[] | undefined): boolean {
  const output = guardrailsAt(guardrails, 'output');
  return output.length > 0 && output.every((g) => g.guard.check === 'sentence');
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Field errors of the `guardrails` list (shapes, names, which action fits which type and point). */
export function guardrailProblems(guardrails: unknown): Record<string, string> {
  if (guardrails === undefined || guardrails === null) return {};
  if (!Array.isArray(guardrails)) return { guardrails: 'must be an array of guardrails' };
  if (guardrails.length > MAX_GUARDRAILS) return { guardrails: `at most ${MAX_GUARDRAILS} guardrails` };
  const problems: Record<string, string> = {};
  const names = new Set<string>();
  guardrails.forEach((g, i) => {
    const at = `guardrails[${i}]`;
    if (!isObject(g)) return void (problems[at] = 'must be a guardrail object');
    const problem = oneProblem(g);
    if (problem) return void (problems[problem[0] ? `${at}.${problem[0]}` : at] = problem[1]);
    const name = guardrailName(g as unknown as GuardrailConfig, i);
    if (names.has(name)) problems[`${at}.name`] = `"${name}" names another guardrail too`;
    names.add(name);
  });
  return problems;
}

const FIELDS: Record<GuardrailType, readonly string[]> = {
  grounding: ['type', 'name', 'threshold', 'action', 'check', 'on'],
  judge: ['type', 'name', 'llm_name', 'policy', 'on', 'action', 'threshold', 'check'],
  pattern: ['type', 'name', 'patterns', 'on', 'action', 'check'],
};

function oneProblem(g: Record<string, unknown>): [string, string] | undefined {
  const type = g.type as GuardrailType;
  if (!Object.keys(ACTIONS).includes(type as string)) return ['type', 'must be grounding, judge or pattern'];
  const unknown = Object.keys(g).find((k) => !FIELDS[type].includes(k));
  if (unknown) return [unknown, `is not a field of a ${type} guardrail (${FIELDS[type].join(', ')})`];
  if (g.name !== undefined && (typeof g.name !== 'string' || !NAME.test(g.name))) return ['name', 'must be 1 to 64 letters, digits, underscores or hyphens'];
  if (type === 'grounding' && g.on !== undefined && g.on !== 'output') return ['on', 'a grounding guardrail checks the answer only (output)'];
  if (type !== 'grounding' && !['input', 'output', 'tool_call'].includes(g.on as string)) return ['on', 'must be input, output or tool_call'];
  if (type === 'judge') {
    if (typeof g.llm_name !== 'string' || !g.llm_name) return ['llm_name', 'names a registered LLM (GET /v2/llms)'];
    if (typeof g.policy !== 'string' || !g.policy.trim()) return ['policy', 'is required: the rule the judge holds the text to'];
    if (g.policy.length > MAX_GUARDRAIL_POLICY_LENGTH) return ['policy', `at most ${MAX_GUARDRAIL_POLICY_LENGTH} characters`];
  }
  if (type === 'pattern') {
    if (!Array.isArray(g.patterns) || g.patterns.length === 0 || g.patterns.length > MAX_GUARDRAIL_PATTERNS) return ['patterns', `must list 1 to ${MAX_GUARDRAIL_PATTERNS} regular expressions`];
    const bad = g.patterns.findIndex((p) => typeof p !== 'string' || !p || p.length > MAX_GUARDRAIL_PATTERN_LENGTH);
    if (bad >= 0) return [`patterns[${bad}]`, `must be a regular expression of 1 to ${MAX_GUARDRAIL_PATTERN_LENGTH} characters`];
  }
  if (type !== 'pattern' && g.threshold !== undefined && !(typeof g.threshold === 'number' && g.threshold >= 0 && g.threshold <= 1)) return ['threshold', 'must be a number from 0 to 1'];
  const point = type === 'grounding' ? 'output' : (g.on as GuardrailPoint);
  const allowed = ACTIONS[type][point];
  if (!allowed.includes(g.action as GuardrailAction)) return ['action', `a ${type} guardrail on ${point} takes ${allowed.join(', ')}`];
  if (g.check !== undefined) {
    if (g.check !== 'answer' && g.check !== 'sentence') return ['check', 'must be answer or sentence'];
    if (point !== 'output') return ['check', 'only an output guardrail releases a streamed answer (answer or sentence)'];
    if (g.check === 'sentence' && g.action === 'regenerate') return ['check', 'sentence by sentence, earlier sentences are already out: regenerate needs check "answer"'];
  }
  return undefined;
}

/**
 * Whole sentences at the front of `text` and the rest: a sentence ends at `.`, `!`, `?` or a line break followed by
 * white space (so "3.5" and "e.g.x" do not end one). The rest may be a sentence still being written.
 */
export function takeSentences(text: string): { readonly sentences: string[]; readonly rest: string } {
  const sentences: string[] = [];
  let from = 0;
  const end = /[.!?]+["')\]]*\s+|\n+/g;
  for (let m = end.exec(text); m; m = end.exec(text)) {
    sentences.push(text.slice(from, m.index + m[0].length));
    from = m.index + m[0].length;
  }
  return { sentences, rest: text.slice(from) };
}
