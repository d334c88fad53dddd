/**
 * The agents' UserFn conditions (`get('$.session.metadata.tier')`, jexl without JavaScript globals), for a context
 * that judges a session request in the same language as an agent's `run_condition` and `next_steps` (aliases'
 * routing rules). One language, one set of error words: a syntax error is the DomainError
 * `agent.invalid_condition` (400) on `field`.
 */
export interface ConditionCompiler {
  /** Compiles an expression; evaluating it over a JSON context is synchronous and may throw. */
  compile(source: string, field: string): (context: Record<string, unknown>) => unknown;
}

export const CONDITION_COMPILER = Symbol('ConditionCompiler');
