import { assertNever } from '../kernel/errors';
import { type CmpOp, type FieldRef, type FilterExpr, type Literal, literalType, valueType } from './filter';
import { likeToRe2Source } from './like-pattern';
import { compileTextPattern, type TextPattern } from './text-pattern';

/** The metadata an expression is evaluated against; without `part`, every `part.` atom is UNKNOWN. */
export interface FilterScope {
  readonly doc: Readonly<Record<string, unknown>>;
  readonly part?: Readonly<Record<string, unknown>>;
}

/** TRUE, FALSE, or UNKNOWN as `undefined`. */
export type Truth = boolean | undefined;

/** Whether the expression is TRUE for this metadata (semantics in filter/filter.ts). */
export function matchesFilter(expr: FilterExpr, scope: FilterScope): boolean {
  return evaluateFilter(expr, scope) === true;
}

export function evaluateFilter(expr: FilterExpr, scope: FilterScope): Truth {
  switch (expr.kind) {
    case 'and': {
      let result: Truth = true;
      for (const item of expr.items) {
        const t = evaluateFilter(item, scope);
        if (t === false) return false;
        if (t === undefined) result = undefined;
      }
      return result;
    }
    case 'or': {
      let result: Truth = false;
      for (const item of expr.items) {
        const t = evaluateFilter(item, scope);
        if (t === true) return true;
        if (t === undefined) result = undefined;
      }
      return result;
    }
    case 'not': {
      const t = evaluateFilter(expr.item, scope);
      return t === undefined ? undefined : !t;
    }
    default:
      return atom(expr, scope);
  }
}

type Atom = Exclude<FilterExpr, { kind: 'and' | 'or' | 'not' }>;

function atom(expr: Atom, scope: FilterScope): Truth {
  const metadata = scope[expr.field.level];
  if (!metadata) return undefined;
  const value = read(metadata, expr.field);
  switch (expr.kind) {
    case 'is_null':
      return (valueType(value) === 'null') !== expr.negated;
    case 'cmp':
      return valueType(value) === literalType(expr.value) ? compare(value as Literal, expr.op, expr.value) : undefined;
    case 'in': {
      if (expr.values.length === 0) return false;
      const type = valueType(value);
      const sameType = expr.values.filter((v) => literalType(v) === type);
      return sameType.length === 0 ? undefined : sameType.includes(value as Literal);
    }
    case 'like':
      return typeof value === 'string' ? likeRegExp(expr.pattern).test(value) : undefined;
    default:
      return assertNever(expr);
  }
}

/** Own properties only: `constructor` or `__proto__` are metadata names like any other, never inherited members. */
const read = (metadata: Readonly<Record<string, unknown>>, field: FieldRef): unknown =>
  Object.prototype.hasOwnProperty.call(metadata, field.name) ? metadata[field.name] : undefined;

/** Same-type values only; `<` on strings compares UTF-16 code units, on booleans false < true. */
function compare(a: Literal, op: CmpOp, b: Literal): boolean {
  switch (op) {
    case '=':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    default:
      return assertNever(op);
  }
}

/**
 * On RE2's engine (text-pattern.ts): a LIKE pattern with many `%` backtracks polynomially in JavaScript
 * (`%a%a%a%a%b` over a long value), linearly here. Dot-all and by code point, so `_` matches one code point
 * and newlines, as SQLite's GLOB `?` and MongoDB's PCRE do.
 */
function likeRegExp(pattern: string): TextPattern {
  return compileTextPattern(likeToRe2Source(pattern), { whole: true, dotAll: true });
}
