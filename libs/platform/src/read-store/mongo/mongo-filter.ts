import { assertNever } from '../../kernel/errors';
import { type FieldRef, type FilterExpr, type Literal, literalType, NEGATED_CMP } from '../../filter/filter';
import { levelUnsupported } from '../../filter/filter-errors';
import { likeToRegExpSource } from '../../filter/like-pattern';

/** A MongoDB query document (plain object; `Document` in the driver's terms). */
export type MongoQuery = Record<string, unknown>;

/** Dot paths of the metadata objects inside the queried documents, e.g. `{ doc: 'metadata' }`. */
export interface MongoFilterPaths {
  readonly doc: string;
  readonly part?: string;
}

/**
 * The filter as a MongoDB query (semantics in filter/filter.ts): one `$expr` with aggregation operators,
 * for every field, rather than query operators for plain names and `$expr` only for the others:
 * - `$getField` reads names with dots or a leading `$` exactly, and aggregation operators never descend into
 *   arrays, so `$type` guards are exact (a query `{ f: { $type: 'string' } }` also matches `['a']`);
 * - metadata names are the users' own, so no index covers them and `$expr` costs no index use;
 * - one translation is one set of semantics to keep in step with SQLite and `matchesFilter`.
 * MongoDB's `$not` is two-valued, so NOT is pushed down to the atoms (De Morgan): `translate(e, true)` is the
 * condition under which `e` is FALSE. Every atom and its negation is type-guarded, so a missing or
 * wrongly-typed field (UNKNOWN) satisfies neither. Needs MongoDB 5.0 (`$getField`).
 * Throws DomainError invalid `filter.level_unsupported` for a `part.` field when `paths.part` is not given.
 */
export function filterToMongo(expr: FilterExpr, paths: MongoFilterPaths): MongoQuery {
  const vars: Record<string, unknown> = { d: objectOrEmpty(paths.doc) };
  if (paths.part !== undefined) vars.p = objectOrEmpty(paths.part);
  const body = translate(expr, false, (field) => {
    if (field.level === 'part' && paths.part === undefined) throw levelUnsupported(field);
    return { $getField: { field: { $literal: field.name }, input: field.level === 'doc' ? '$$d' : '$$p' } };
  });
  return { $expr: { $let: { vars, in: body } } };
}

type Expr = unknown;

/** A metadata object that is missing or not an object reads as `{}`: all its fields are missing. */
const objectOrEmpty = (path: string): Expr => ({ $cond: [{ $eq: [{ $type: `$${path}` }, 'object'] }, `$${path}`, { $literal: {} }] });

const TYPE_GUARD: Record<'number' | 'string' | 'boolean', (v: Expr) => Expr> = {
  number: (v) => ({ $isNumber: v }),
  string: (v) => ({ $eq: [{ $type: v }, 'string'] }),
  boolean: (v) => ({ $eq: [{ $type: v }, 'bool'] }),
};

const guard = (v: Expr, value: Literal): Expr => TYPE_GUARD[literalType(value)](v);
const MONGO_CMP = { '=': '$eq', '!=': '$ne', '<': '$lt', '<=': '$lte', '>': '$gt', '>=': '$gte' } as const;

function translate(e: FilterExpr, negated: boolean, value: (field: FieldRef) => Expr): Expr {
  switch (e.kind) {
    case 'and':
    case 'or': {
      const items = e.items.map((i) => translate(i, negated, value));
      // Under NOT, AND becomes OR and OR becomes AND; empty lists keep their SQL meaning (TRUE / FALSE).
      return (e.kind === 'and') !== negated ? { $and: items.length ? items : [true] } : { $or: items.length ? items : [false] };
    }
    case 'not':
      return translate(e.item, !negated, value);
    case 'cmp': {
      const v = value(e.field);
      const op = negated ? NEGATED_CMP[e.op] : e.op;
      // $literal: a string literal such as '$x' would otherwise be read as a field path.
      return { $and: [guard(v, e.value), { [MONGO_CMP[op]]: [v, { $literal: e.value }] }] };
    }
    case 'in': {
      if (e.values.length === 0) return negated;
      const v = value(e.field);
      const types = [...new Set(e.values.map(literalType))];
      const typed = types.length === 1 ? TYPE_GUARD[types[0]](v) : { $or: types.map((t) => TYPE_GUARD[t](v)) };
      const member = { $in: [v, { $literal: e.values }] };
      return { $and: [typed, negated ? { $not: [member] } : member] };
    }
    case 'is_null': {
      const isNull = { $in: [{ $type: value(e.field) }, ['missing', 'null']] };
      return e.negated !== negated ? { $not: [isNull] } : isNull;
    }
    case 'like': {
      const v = value(e.field);
      const match = { $regexMatch: { input: v, regex: likeToRegExpSource(e.pattern) } };
      // $cond, not $and: $regexMatch fails on a non-string input instead of answering false.
      return { $cond: [TYPE_GUARD.string(v), negated ? { $not: [match] } : match, false] };
    }
    default:
      return assertNever(e);
  }
}
