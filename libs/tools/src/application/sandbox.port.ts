/** Longest a jq program or a pattern may run when the tool gives no shorter bound. */
export const SANDBOX_DEADLINE_MS = 2_000;

/** A program that failed (its message is the tool error the model sees). */
export class SandboxError extends Error {}

/**
 * Callers' jq programs and regular expressions, each under a deadline (docs/tools.md): a program that fails, runs
 * past its deadline or its memory rejects with a SandboxError. Implemented by adapters/sandbox/sandbox-pool.ts
 * (SandboxPool, its worker threads); the abstract class is the Nest token ToolsModule binds.
 */
export abstract class Sandbox {
  /** Runs jq `program` over `input`; resolves with its outputs' first value as jq-web gives it. */
  abstract jq(program: string, input: unknown, deadlineMs?: number): Promise<unknown>;
  abstract grep(text: string, pattern: string, options: { flags: string; invert: boolean; maxMatches: number }, deadlineMs?: number): Promise<{ matches: { line: number; text: string }[]; count: number; lines: number }>;
}
