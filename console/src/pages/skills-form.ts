/** The skills section of the agent form, without the view: rows from the stored agent and the PATCH they make. */

/** A skill as the form edits it: `id` keeps a row's identity while its name is typed. */
export interface SkillRow {
  id: number;
  name: string;
  description: string;
  when_to_use: string;
  content: string;
}

export type Skill = { description: string; when_to_use?: string; content: string };
/** A step's `allowed_skills`: null is every skill (the service's default when the field is absent). */
export type Allowed = Record<string, string[] | null>;

let rowIds = 0;
export const nextRowId = () => ++rowIds;
export const skillRows = (skills: Record<string, Skill> | undefined): SkillRow[] => Object.entries(skills ?? {}).map(([name, s]) => ({ id: ++rowIds, name, description: s.description, when_to_use: s.when_to_use ?? '', content: s.content }));
export const allowedOf = (steps: Record<string, unknown> | undefined): Allowed => Object.fromEntries(Object.entries(steps ?? {}).map(([name, s]) => [name, ((s as { allowed_skills?: string[] }).allowed_skills ?? null) as string[] | null]));

/**
 * The PATCH's `skills`: every row (a value replaces that skill), and null for each stored skill no row names any
 * more (PATCH merges by name, so a renamed skill is the old name deleted and the new one added). Undefined when
 * there is nothing to say.
 */
export function skillsPatch(rows: readonly SkillRow[], stored: readonly string[]): Record<string, Skill | null> | undefined {
  const out: Record<string, Skill | null> = Object.fromEntries(stored.filter((n) => !rows.some((r) => r.name === n)).map((n) => [n, null]));
  for (const r of rows) out[r.name] = { description: r.description, content: r.content, ...(r.when_to_use ? { when_to_use: r.when_to_use } : {}) };
  return Object.keys(out).length ? out : undefined;
}


/**
 * The steps of the PATCH with each step's `allowed_skills` from the ticks (null: every skill), unless its JSON sets
 * them itself; a ticked skill no row names any more (removed or renamed) is dropped.
 */
export function withAllowedSkills(steps: Record<string, unknown>, allowed: Allowed, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(steps).map(([step, config]) => {
      if (!config || typeof config !== 'object' || 'allowed_skills' in config) return [step, config];
      return [step, { ...config, allowed_skills: allowed[step]?.filter((n) => names.includes(n)) ?? null }];
    }),
  );
}
