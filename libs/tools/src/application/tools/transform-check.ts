import { Sandbox, SandboxError } from '../sandbox.port';
import type { ToolConfig } from '../../domain/tool-config';

/**
 * Tools' jq transforms must compile. jq has no compile-only mode here, so each runs once over `null` with a
 * short deadline: a compile error is a 400; a runtime error or the deadline says nothing about the program.
 */
export async function transformProblems(sandbox: Sandbox, tools: Readonly<Record<string, ToolConfig>>, prefix: string): Promise<Record<string, string>> {
  const problems: Record<string, string> = {};
  for (const [name, tool] of Object.entries(tools)) {
    for (const field of ['input_transform', 'output_transform'] as const) {
      const program = tool[field];
      if (typeof program !== 'string') continue;
      const failure = await sandbox.jq(program, null, 500).then(
        () => undefined,
        (e: unknown) => (e instanceof SandboxError && /compile error/.test(e.message) ? e.message : undefined),
      );
      if (failure) problems[`${prefix}${name ? `${name}.` : ''}${field}`] = `not a jq program: ${failure.split('\n')[0]}`;
    }
  }
  return problems;
}
