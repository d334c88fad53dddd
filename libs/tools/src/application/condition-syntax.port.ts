/**
 * The agents' UserFn condition language, for the `requires_approval.when` of a reusable tool configuration: the
 * language is the agents' (libs/tools never reaches agents), bound by AgentsModule to the compiler their
 * `next_steps` conditions use, so one expression means one thing and fails with the same words everywhere.
 */
export abstract class ConditionSyntax {
  /** Why `source` does not compile (the message names `field`), or undefined when it does. */
  abstract problem(source: string, field: string): string | undefined;
}

/** The `requires_approval.when` conditions of some tools that do not compile, by field under `prefix`. */
export function approvalConditionProblems(syntax: ConditionSyntax, tools: Readonly<Record<string, { readonly requires_approval?: unknown }>>, prefix: string): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const when = (tool.requires_approval as { when?: unknown } | undefined)?.when;
    if (typeof when !== 'string') continue;
    const field = `${prefix}${name ? `${name}.` : ''}requires_approval.when`;
    const problem = syntax.problem(when, field);
    if (problem) problems[field] = problem;
  }
  return problems;
}
