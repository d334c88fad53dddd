import { assertNever, DomainError } from '../../kernel/errors';
import { likeShape } from '../../filter/like-pattern';
import { type CmpOp, type FieldRef, type FilterExpr, type Literal, literalType, NEGATED_CMP } from '../../filter/filter';
import { flatFieldName, numberKey, PRESENCE_FIELD, stringHash, stringHex, typedFieldName, ValueSlot } from './typesense-layout';

/** The typed metadata fields (`doc__x__h`, …) some document of the collection has, as its schema lists them. */
export type KnownFields = ReadonlySet<string>;

export const unsupportedFilter = (message: string): DomainError => new DomainError('invalid', 'search.filter_unsupported', message);

/** Typesense compares only the first 100 characters of a token (filter_result_iterator.cpp), hex or not. */
const MAX_PREFIX_HEX = 100;

/**
 * FilterExpr → `filter_by` over the typed layout of typesense-layout.ts. Returns `true` for "matches everything"
 * (send no filter) and `false` for "matches nothing" (do not query at all).
 *
 * Typesense has no general NOT, so negations are pushed down to the atoms (De Morgan, `=`↔`!=`, `<`↔`>=`,
 * `in`↔`:!=[…]`, is_null↔is-not-null): `translate(e, true)` selects where `e` is FALSE, which keeps the
 * three-valued semantics of filter/filter.ts as long as every atom and its negation skip UNKNOWN rows. An atom
 * reads only the typed field of its literal's type, so values of another type (and arrays, objects) never match
 * either way; `!=` and NOT IN also require a value of that type (the presence list), since Typesense's `!=`
 * matches documents without the field. With `known`, atoms on typed fields no document has fold to false.
 *
 * Exact: string equality and IN (by hash), prefixes (by hex), number comparisons (by order key), booleans.
 * Not expressible, hence DomainError('invalid', 'search.filter_unsupported'): range comparisons with string
 * literals, LIKE other than `abc%` / `%` / no wildcard, NOT LIKE 'abc%', a prefix over 50 bytes.
 */
export function toFilterBy(expr: FilterExpr, known?: KnownFields): string | boolean {
  return translate(expr, false, known);
}

function translate(e: FilterExpr, neg: boolean, known: KnownFields | undefined): string | boolean {
  switch (e.kind) {
    case 'and':
    case 'or':
      return combine((e.kind === 'and') !== neg, e.items.map((i) => translate(i, neg, known)));
    case 'not':
      return translate(e.item, !neg, known);
    case 'cmp':
      return comparison(e.field, neg ? NEGATED_CMP[e.op] : e.op, e.value, known);
    case 'in':
      return membership(e.field, e.values, neg, known);
    case 'is_null':
      return presence(e.field.level, flatFieldName(e.field), e.negated === neg ? '!=' : '=');
    case 'like':
      return like(e.field, e.pattern, neg, known);
    default:
      return assertNever(e);
  }
}

function combine(isAnd: boolean, parts: (string | boolean)[]): string | boolean {
  if (parts.includes(!isAnd)) return !isAnd;
  const clauses = parts.filter((p): p is string => typeof p === 'string');
  if (clauses.length === 0) return isAnd;
  return clauses.length === 1 ? clauses[0] : `(${clauses.join(isAnd ? ' && ' : ' || ')})`;
}

const presence = (level: FieldRef['level'], name: string, op: '=' | '!='): string => `${PRESENCE_FIELD[level]}:${op}[\`${name}\`]`;

/** A filter_by literal for values the adapter writes itself (document ids): backtick-quoted, which cannot hold a backtick. */
export function filterLiteral(v: string): string {
  if (v.includes('`')) throw unsupportedFilter('filter strings cannot contain a backtick in Typesense');
  return `\`${v}\``;
}

const SLOT: Readonly<Record<'string' | 'number' | 'boolean', ValueSlot>> = { string: 'h', number: 'n', boolean: 'b' };

/** A literal as its typed field holds it: hash, order key or boolean. */
function typedLiteral(v: Literal): string {
  return typeof v === 'string' ? stringHash(v) : typeof v === 'number' ? String(numberKey(v)) : String(v);
}

/** The typed field for literals of `v`'s type, or undefined when no document has a value of that type there. */
function typedField(field: FieldRef, slot: ValueSlot, known: KnownFields | undefined): string | undefined {
  const name = typedFieldName(field, slot);
  return known && !known.has(name) ? undefined : name;
}

/** `name != values` where the value has that type: Typesense's `:!=` alone also matches a missing field. */
const unequal = (field: FieldRef, name: string, list: string): string => `(${name}:!=${list} && ${presence(field.level, name, '=')})`;

const holdsBoolean = (a: boolean, op: CmpOp, b: boolean): boolean => {
  const [x, y] = [Number(a), Number(b)];
  return op === '=' ? x === y : op === '!=' ? x !== y : op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
};

/** `op` is already negated where the atom was under NOT: this is the condition for TRUE. */
function comparison(field: FieldRef, op: CmpOp, value: Literal, known: KnownFields | undefined): string | boolean {
  if (op !== '=' && op !== '!=' && typeof value === 'string') throw unsupportedFilter(`Typesense compares strings only for equality (${field.level}.${field.name} ${op} "${value}")`);
  const name = typedField(field, SLOT[literalType(value)], known);
  if (!name) return false;
  if (typeof value === 'boolean') {
    // Typesense has no range on booleans: the booleans that satisfy the comparison, as equality or presence.
    const holds = [false, true].filter((b) => holdsBoolean(b, op, value));
    if (holds.length === 0) return false;
    return holds.length === 2 ? presence(field.level, name, '=') : `${name}:=${holds[0]}`;
  }
  return op === '!=' ? unequal(field, name, typedLiteral(value)) : `${name}:${op}${typedLiteral(value)}`;
}

/** IN is TRUE for a value equal to a same-type literal, FALSE for another value of a type the list has (filter.ts). */
function membership(field: FieldRef, values: readonly Literal[], neg: boolean, known: KnownFields | undefined): string | boolean {
  // `x IN ()` is FALSE for every row, so `NOT (x IN ())` is TRUE for every row.
  if (values.length === 0) return neg;
  const clauses: (string | boolean)[] = (['string', 'number', 'boolean'] as const).map((type) => {
    const typed = values.filter((v) => literalType(v) === type);
    const name = typed.length ? typedField(field, SLOT[type], known) : undefined;
    if (!name) return false;
    if (type === 'boolean') {
      const listed = [false, true].filter((b) => typed.includes(b) !== neg);
      return listed.length === 2 ? presence(field.level, name, '=') : listed.length === 1 ? `${name}:=${listed[0]}` : false;
    }
    const list = `[${[...new Set(typed.map(typedLiteral))].join(',')}]`;
    return neg ? unequal(field, name, list) : `${name}:=${list}`;
  });
  return combine(false, clauses);
}

/** SQL LIKE (filter.ts) as far as Typesense filters go: exact value, prefix, or any string. */
function like(field: FieldRef, pattern: string, neg: boolean, known: KnownFields | undefined): string | boolean {
  const shape = likeShape(pattern);
  if (!shape) throw unsupportedFilter(`LIKE "${pattern}": Typesense matches only a whole value (abc) or a prefix (abc%)`);
  if (!shape.prefix) return comparison(field, neg ? '!=' : '=', shape.text, known);
  if (neg && shape.text !== '') throw unsupportedFilter(`NOT LIKE "${pattern}": Typesense has no negated prefix filter`);
  const hex = stringHex(shape.text);
  if (hex.length > MAX_PREFIX_HEX) throw unsupportedFilter(`LIKE "${pattern}": a Typesense prefix may be at most ${MAX_PREFIX_HEX / 2} bytes`);
  const name = typedField(field, 's', known);
  // `%` is TRUE for every string, so NOT LIKE '%' is never TRUE.
  if (!name || neg) return false;
  return shape.text === '' ? presence(field.level, name, '=') : `${name}:=${hex}*`;
}
