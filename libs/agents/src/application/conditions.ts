import { Jexl } from 'jexl';
import { invalid } from '@lib/platform';

/**
 * UserFn expressions over a JSON context (`get('$.session.metadata.tier')`), for `next_steps` conditions and an
 * agent's `run_condition`: the language of user-function rerankers (jexl, with no access to JavaScript globals),
 * with `get()` reading this context. Evaluation is synchronous; the context is passed per call.
 */
const jexl = new Jexl();
let current: unknown;
jexl.addFunction('get', (path: unknown, fallback: unknown = null) => {
  if (typeof path !== 'string' || !/^\$(\.[^.]+)*$/.test(path)) throw new Error(`get() takes a path such as '$.session.metadata.tier', not ${JSON.stringify(path)}`);
  let value: unknown = current;
  for (const key of path.split('.').slice(1)) value = value !== null && typeof value === 'object' && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  return value === undefined || value === null ? fallback : value;
});
jexl.addFunction('if', (cond: unknown, a: unknown, b: unknown) => (cond ? a : b));
jexl.addFunction('contains', (s: unknown, part: unknown) => typeof s === 'string' && typeof part === 'string' && s.includes(part));
jexl.addFunction('lower', (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : s));

export const MAX_CONDITION_LENGTH = 10_000;

export type Condition = (context: Record<string, unknown>) => unknown;

/** Compiles an expression; a syntax error is a 400 on `field`. */
export function compileCondition(source: string, field: string): Condition {
  if (source.length > MAX_CONDITION_LENGTH) throw invalid('agent.invalid_condition', `Invalid ${field}: longer than ${MAX_CONDITION_LENGTH} characters`, { [field]: 'too long' });
  let expr: ReturnType<InstanceType<typeof Jexl>['compile']>;
  try {
    expr = jexl.compile(source);
  } catch (e) {
    const reason = (e instanceof Error ? e.message : String(e)).replace(/^(Error: )+/, '');
    throw invalid('agent.invalid_condition', `Invalid ${field}: ${reason}`, { [field]: reason });
  }
  return (context) => {
    current = context;
    try {
      return expr.evalSync(context);
    } finally {
      current = undefined;
    }
  };
}
