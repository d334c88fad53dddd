import { Jexl } from 'jexl';
import { invalid } from '@lib/platform';
import type { ResultFields } from './search-result';

/** What a user function reads through `get('$.…')`. */
export type UserFunctionInput = ResultFields;

/** The result being scored; evaluation is synchronous, so one module-level slot is safe. */
let current: UserFunctionInput | undefined;
let nowSeconds = 0;

const jexl = new Jexl();
const num = (name: string, fn: (...a: number[]) => number) => jexl.addFunction(name, (...a: unknown[]) => fn(...a.map(Number)));
jexl.addFunction('get', (path: unknown, fallback: unknown = null) => {
  if (typeof path !== 'string' || !/^\$(\.[^.]+)*$/.test(path)) throw new Error(`get() takes a path such as '$.score', not ${JSON.stringify(path)}`);
  let value: unknown = current;
  for (const key of path.split('.').slice(1)) value = value !== null && typeof value === 'object' && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  return value === undefined || value === null ? fallback : value;
});
jexl.addFunction('if', (cond: unknown, a: unknown, b: unknown) => (cond ? a : b));
num('abs', Math.abs);
num('power', Math.pow);
num('min', Math.min);
num('max', Math.max);
num('sqrt', Math.sqrt);
num('trunc', Math.trunc);
num('sign', Math.sign);
num('log', (base, x) => Math.log(x) / Math.log(base));
num('ln', Math.log);
num('log10', Math.log10);
for (const f of ['sin', 'cos', 'tan', 'asin', 'acos', 'atan'] as const) num(f, Math[f]);
// Time is in seconds since the epoch, durations in seconds.
jexl.addFunction('now', () => nowSeconds);
// A value that is not a date-time reads as null (the result is dropped unless the expression handles it).
jexl.addFunction('iso_datetime_parse', (s: unknown) => {
  const ms = typeof s === 'string' ? Date.parse(s) : NaN;
  return Number.isNaN(ms) ? null : ms / 1000;
});
num('to_unix_timestamp', (t) => t);
num('seconds', (n) => n);
num('minutes', (n) => n * 60);
num('hours', (n) => n * 3600);
num('days', (n) => n * 86400);
num('as_days', (s) => s / 86400);
num('as_hours', (s) => s / 3600);

/** A compiled user function: a number, or null when the result should be dropped. */
export type UserFunction = (input: UserFunctionInput) => number | null;

const PROBE: UserFunctionInput = { score: 0.5, text: '', document_id: '', corpus_key: '', part_metadata: {}, document_metadata: {} };

/**
 * Compiles a `userfn` expression (the reference's UDF language: `get('$.score')`, `if(c, a, b)`, math and time
 * functions) with jexl, which has no access to JavaScript globals or methods. It is run once on a probe result
 * so that syntax errors and unknown functions are a 400 even when no result comes back.
 */
export function compileUserFunction(source: string, field: string, now: Date): UserFunction {
  let expr: ReturnType<InstanceType<typeof Jexl>['compile']>;
  const fail = (e: unknown): never => {
    const reason = (e instanceof Error ? e.message : String(e)).replace(/^(Error: )+/, '');
    throw invalid('reranker.invalid_function', `user_function: ${reason}`, { [field]: reason });
  };
  try {
    expr = jexl.compile(source);
  } catch (e) {
    return fail(e);
  }
  const run: UserFunction = (input) => {
    current = input;
    nowSeconds = now.getTime() / 1000;
    try {
      const value: unknown = expr.evalSync({});
      if (value === null || value === undefined) return null;
      const n = Number(value);
      return Number.isFinite(n) ? n : null;
    } catch (e) {
      return fail(e);
    } finally {
      current = undefined;
    }
  };
  run(PROBE);
  return run;
}
