/**
 * Agent skills (the reference's AgentSkill): instructions disclosed progressively. The system message lists the
 * skills a step may use (name, description, when to use); the content reaches the model only when the skill is
 * loaded, by the model's `invoke_skill` call or by a `{"type": "skill"}` input, as a user message recorded in a
 * `skill_load` event (the content as it was then, so a later edit of the agent does not rewrite history).
 */
export interface AgentSkill {
  readonly description: string;
  readonly when_to_use?: string;
  readonly content: string;
}

/** The built-in tool through which the model loads a skill; offered only when the step allows a skill. */
export const INVOKE_SKILL_TOOL = 'invoke_skill';

/** The reference's AgentSkill limits; the name and the count are ours (the reference sets none, docs/conformance.md). */
export const SKILL_LIMITS = { description: 500, when_to_use: 500, content: 50_000, skills: 100 } as const;
export const SKILL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const FIELDS = new Set(['description', 'when_to_use', 'content']);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The skills a step may use, by name, in the agent's order: `allowed_skills` absent is all of them, `[]` none. */
export function stepSkills(skills: Readonly<Record<string, AgentSkill>> | undefined, allowed: readonly string[] | undefined): [string, AgentSkill][] {
  const all = Object.entries(skills ?? {});
  return allowed === undefined ? all : all.filter(([name]) => allowed.includes(name));
}

/** Why a skill cannot be loaded in a step (unknown, or not among the step's `allowed_skills`), or undefined. */
export function skillRefusal(skills: Readonly<Record<string, AgentSkill>> | undefined, allowed: readonly string[] | undefined, step: string, name: unknown): string | undefined {
  if (typeof name !== 'string' || !name) return 'skill_name must name a skill';
  if (!skills || !Object.hasOwn(skills, name)) return `there is no skill named ${name}${skills && Object.keys(skills).length ? ` (the skills are ${Object.keys(skills).join(', ')})` : ' (the agent has no skills)'}`;
  if (allowed !== undefined && !allowed.includes(name)) return `skill ${name} is not allowed in step ${step}`;
  return undefined;
}

/** What is wrong with an agent's `skills` map and the steps' `allowed_skills`, by field (empty when nothing is). */
export function skillProblems(skills: unknown, steps: Readonly<Record<string, { readonly allowed_skills?: unknown }>>, toolNames: readonly string[]): Record<string, string> {
  const problems: Record<string, string> = {};
  if (skills !== undefined && !isObject(skills)) return { skills: 'must be a map of skill names to skills' };
  const map = (skills ?? {}) as Record<string, unknown>;
  const names = Object.keys(map);
  if (names.length > SKILL_LIMITS.skills) problems.skills = `at most ${SKILL_LIMITS.skills} skills`;
  for (const [name, skill] of Object.entries(map)) {
    const at = `skills.${name}`;
    if (!SKILL_NAME.test(name)) problems[at] = 'a skill name is 1 to 64 letters, digits, underscores or hyphens';
    else if (!isObject(skill)) problems[at] = 'must be a skill object: {description, content, when_to_use?}';
    else {
      const unknown = Object.keys(skill).find((k) => !FIELDS.has(k));
      if (unknown) problems[`${at}.${unknown}`] = 'is not a field of a skill (description, when_to_use, content)';
      for (const field of ['description', 'content'] as const) if (skill[field] === undefined) problems[`${at}.${field}`] = 'is required';
      for (const field of ['description', 'when_to_use', 'content'] as const) {
        const v = skill[field];
        if (v === undefined) continue;
        if (typeof v !== 'string') problems[`${at}.${field}`] = 'must be a string';
        else if (v.length > SKILL_LIMITS[field]) problems[`${at}.${field}`] = `must be at most ${SKILL_LIMITS[field]} characters`;
      }
    }
  }
  if (names.length && toolNames.includes(INVOKE_SKILL_TOOL)) problems[`tool_configurations.${INVOKE_SKILL_TOOL}`] = `${INVOKE_SKILL_TOOL} is the built-in tool that loads skills: name this tool configuration otherwise`;
  for (const [stepName, step] of Object.entries(steps)) {
    const allowed = isObject(step) ? step.allowed_skills : undefined;
    if (allowed === undefined) continue;
    const at = `steps.${stepName}.allowed_skills`;
    if (!Array.isArray(allowed) || !allowed.every((s) => typeof s === 'string')) problems[at] = 'must be an array of skill names';
    else {
      const unknown = allowed.find((s) => !Object.hasOwn(map, s));
      if (unknown !== undefined) problems[at] = `${unknown} is not one of the agent's skills${names.length ? ` (${names.join(', ')})` : ' (the agent has none)'}`;
    }
  }
  return problems;
}

/** The system message's part that lists a step's skills (names, descriptions, when to use), never their content. */
export function skillsPrompt(available: readonly [string, AgentSkill][]): string {
  if (!available.length) return '';
  const lines = available.map(([name, s]) => `- ${name}: ${s.description}${s.when_to_use ? ` When to use: ${s.when_to_use}` : ''}`);
  return `You have skills: instructions you load when a task needs them. Call the ${INVOKE_SKILL_TOOL} tool with a skill's name to receive its full instructions, then follow them.\n${lines.join('\n')}`;
}

/** The `invoke_skill` tool as the model sees it, its `skill_name` limited to the step's skills. */
export function invokeSkillDefinition(available: readonly [string, AgentSkill][]) {
  return {
    type: 'function' as const,
    function: {
      name: INVOKE_SKILL_TOOL,
      description: 'Loads a skill: its full instructions are given to you as the next message.',
      parameters: { type: 'object', properties: { skill_name: { type: 'string', enum: available.map(([n]) => n), description: 'The name of the skill to load' } }, required: ['skill_name'], additionalProperties: false },
    },
  };
}
