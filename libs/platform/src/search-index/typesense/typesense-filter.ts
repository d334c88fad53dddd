import type { CollectionCreateSchema, CollectionFieldSchema } from 'typesense';
import { assertNever, DomainError } from '../../kernel/errors';
import { likeShape } from '../../filter/like-pattern';
import { type CmpOp, type FieldRef, type FilterExpr, type Literal, literalType, NEGATED_CMP } from '../../filter/filter';
import type { IndexedDocument, IndexedPart } from '../search-index.port';

/**
 * How parts are laid out as Typesense documents, and how filters address that layout.
 *
 * Metadata is flattened into top-level document fields so `filter_by` and `facet_by` can reach it
 * (nested fields are off): `doc__<name>` for document metadata, `part__<name>` for part metadata.
 *
 * Name encoding: every UTF-8 byte outside [A-Za-z0-9] becomes `_` + two upper-case hex digits, so
 * `created at` → `created_20at`, `a.b-c` → `a_2Eb_2Dc`, `x_y` → `x_5Fy`. The underscore is escaped too:
 * that is what makes the encoding reversible (`decodeFieldName`) and keeps the result a plain identifier
 * that needs no quoting in `filter_by`, `facet_by` or the companion presence arrays below.
 */
export function encodeFieldName(name: string): string {
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const isWordChar = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);
    out += isWordChar ? String.fromCharCode(byte) : `_${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function decodeFieldName(encoded: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    if (encoded[i] === '_') {
      bytes.push(parseInt(encoded.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(encoded.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

export const flatFieldName = (field: FieldRef): string => `${field.level}__${encodeFieldName(field.name)}`;

/**
 * Companion `string[]` fields listing the flattened names whose value is present (not null) in a part.
 * Typesense cannot filter on "field missing", so IS NULL becomes `doc_has:!=[doc__x]`. The single underscore
 * keeps these names out of the `doc__`/`part__` namespace, so no metadata name can collide with them.
 */
export const PRESENCE_FIELD = { doc: 'doc_has', part: 'part_has' } as const;

export type FlatValue = string | number | boolean;

/** The flattened fields of one metadata level, and the presence list. Only scalars are filterable. */
export function flattenMetadata(level: FieldRef['level'], metadata: Readonly<Record<string, unknown>>): { fields: Record<string, FlatValue>; present: string[] } {
  const fields: Record<string, FlatValue> = {};
  const present: string[] = [];
  for (const [name, value] of Object.entries(metadata)) {
    if (value === null || value === undefined) continue;
    const flat = flatFieldName({ level, name });
    present.push(flat);
    if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) fields[flat] = value;
  }
  return { fields, present };
}

export const embeddingField = (dimensions: number): CollectionFieldSchema => ({ name: 'embedding', type: 'float[]', num_dim: dimensions, optional: true });

/**
 * One collection per (index, generation). The `.*` auto field indexes the flattened `doc__`/`part__`
 * metadata whatever its names (facet on, so distinctValues works); the JSON copies are stored unindexed
 * and returned as they were written. Stemming on, as SQLite's porter tokenizer.
 */
export function collectionSchema(name: string, dimensions?: number): CollectionCreateSchema {
  return {
    name,
    enable_nested_fields: false,
    fields: [
      { name: 'doc_id', type: 'string', facet: true },
      { name: 'seq', type: 'int32', sort: true },
      { name: 'text', type: 'string', stem: true },
      { name: 'title', type: 'string', optional: true, stem: true },
      { name: 'part_meta', type: 'string', index: false, optional: true },
      { name: 'doc_meta', type: 'string', index: false, optional: true },
      { name: '_pos', type: 'int64' },
      { name: 'doc_has', type: 'string[]', optional: true },
      { name: 'part_has', type: 'string[]', optional: true },
      ...(dimensions ? [embeddingField(dimensions)] : []),
      { name: '.*', type: 'auto', optional: true, facet: true },
    ],
  };
}

/** One part as a Typesense document; its id is deterministic, so re-importing it overwrites, never duplicates. */
export function partDocument(doc: IndexedDocument, part: IndexedPart, position: number, withVector: boolean): Record<string, unknown> {
  const d = flattenMetadata('doc', doc.documentMetadata);
  const p = flattenMetadata('part', part.partMetadata);
  return {
    ...d.fields,
    ...p.fields,
    id: `${doc.documentId}:${part.seq}`,
    doc_id: doc.documentId,
    seq: part.seq,
    text: part.text,
    ...(part.sectionTitle !== undefined && { title: part.sectionTitle }),
    part_meta: JSON.stringify(part.partMetadata),
    doc_meta: JSON.stringify(doc.documentMetadata),
    // The position of the event that wrote the part: not a guard (Typesense has no conditional write), a trace.
    _pos: position,
    doc_has: d.present,
    part_has: p.present,
    ...(withVector && part.vector?.length && { embedding: [...part.vector] }),
  };
}

/** Kinds of flattened fields as the collection schema reports them (auto-detected from the first value). */
export type FieldKind = 'string' | 'int' | 'float' | 'bool' | 'other';
export type KnownFields = ReadonlyMap<string, FieldKind>;

export function fieldKind(typesenseType: string): FieldKind {
  if (typesenseType === 'string') return 'string';
  if (typesenseType === 'int32' || typesenseType === 'int64') return 'int';
  if (typesenseType === 'float') return 'float';
  if (typesenseType === 'bool') return 'bool';
  return 'other';
}

export const unsupportedFilter = (message: string): DomainError => new DomainError('invalid', 'search.filter_unsupported', message);

/**
 * FilterExpr → `filter_by`. Returns `true` for "matches everything" (send no filter) and `false` for
 * "matches nothing" (do not query at all).
 *
 * Typesense has no general NOT, so negations are pushed down to the atoms (De Morgan, `=`↔`!=`, `<`↔`>=`,
 * `in`↔`:!=[…]`, is_null↔is-not-null): `translate(e, true)` selects where `e` is FALSE, which keeps the three-valued
 * semantics of filter/filter.ts as long as every atom and its negation skip UNKNOWN rows. Hence `!=` and
 * NOT IN also require the field to be present (Typesense's `!=` matches documents without the field), and with
 * `known` (the schema's flattened fields) atoms on fields no document has, or with a literal of another type than
 * the field's, fold to false, both ways.
 *
 * Where Typesense departs from the semantics (engine-defined, not fixed here because they live in the document
 * layout): a field's type is fixed by the first value indexed and other values are coerced or dropped, so only
 * fields that keep one scalar type across an index evaluate exactly (an integer field also coerces later
 * reals); arrays and objects are present but not indexed, so `!=` and NOT IN select them; string equality and
 * prefixes are matched on Typesense's normalised tokens (case- and punctuation-insensitive).
 * Not expressible, hence DomainError('invalid', 'search.filter_unsupported'): range comparisons with string
 * literals, LIKE other than `abc%` / `%` / no wildcard, NOT LIKE 'abc%', a prefix with other than letters
 * and digits, strings containing a backtick, numbers that print with an exponent.
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
      return presence(e.field, e.negated === neg ? '!=' : '=');
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

const presence = (field: FieldRef, op: '=' | '!='): string => `${PRESENCE_FIELD[field.level]}:${op}[\`${flatFieldName(field)}\`]`;

/** A filter_by literal: strings backtick-quoted (Typesense has no escape for a backtick inside one). */
export function filterLiteral(v: Literal): string {
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || /e/i.test(String(v))) throw unsupportedFilter(`number ${v} cannot be written in filter_by`);
    return String(v);
  }
  if (v.includes('`')) throw unsupportedFilter('filter strings cannot contain a backtick in Typesense');
  return `\`${v}\``;
}

/** Whether values of the literal's type can be in a field of this kind ('other': the schema does not say). */
function sameType(kind: FieldKind, v: Literal): boolean {
  if (kind === 'other') return true;
  const type = literalType(v);
  return type === 'number' ? kind === 'int' || kind === 'float' : type === 'string' ? kind === 'string' : kind === 'bool';
}

/** The kind of a field the schema knows; `null` when the atom is UNKNOWN on every document (missing field). */
function kindOf(field: FieldRef, known: KnownFields | undefined): FieldKind | undefined | null {
  if (!known) return undefined;
  return known.get(flatFieldName(field)) ?? null;
}

const orderBooleans = (a: boolean, op: CmpOp, b: boolean): boolean => compareNumbers(Number(a), op, Number(b));

function compareNumbers(a: number, op: CmpOp, b: number): boolean {
  return op === '=' ? a === b : op === '!=' ? a !== b : op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
}

/** `op` is already negated where the atom was under NOT: this is the condition for TRUE. */
function comparison(field: FieldRef, op: CmpOp, value: Literal, known: KnownFields | undefined): string | boolean {
  const ranged = op !== '=' && op !== '!=';
  if (ranged && typeof value === 'string') throw unsupportedFilter(`Typesense compares strings only for equality (${field.level}.${field.name} ${op} "${value}")`);
  const name = flatFieldName(field);
  const kind = kindOf(field, known);
  if (kind === null || (kind && !sameType(kind, value))) return false;
  if (typeof value === 'boolean') {
    // Typesense has no range on booleans: the booleans that satisfy the comparison, as equality or presence.
    const holds = [false, true].filter((b) => orderBooleans(b, op, value));
    if (holds.length === 0) return false;
    return holds.length === 2 ? presence(field, '=') : `${name}:=${holds[0]}`;
  }
  if (kind === 'int' && typeof value === 'number' && !Number.isInteger(value)) {
    // An integer field never equals a fraction, and a fractional bound rounds to an integer one.
    if (op === '=') return false;
    if (op === '!=') return presence(field, '=');
    return op === '<' || op === '<=' ? `${name}:<=${Math.floor(value)}` : `${name}:>=${Math.ceil(value)}`;
  }
  const clause = `${name}:${op}${filterLiteral(value)}`;
  return op === '!=' ? `(${clause} && ${presence(field, '=')})` : clause;
}

/** IN is TRUE for a value equal to a same-type literal, FALSE for another value of a type the list has (filter.ts). */
function membership(field: FieldRef, values: readonly Literal[], neg: boolean, known: KnownFields | undefined): string | boolean {
  // `x IN ()` is FALSE for every row, so `NOT (x IN ())` is TRUE for every row.
  if (values.length === 0) return neg;
  const name = flatFieldName(field);
  const kind = kindOf(field, known);
  if (kind === null) return false;
  const typed = kind ? values.filter((v) => sameType(kind, v)) : values;
  if (typed.length === 0) return false;
  if (kind === 'bool') {
    const listed = [false, true].filter((b) => typed.includes(b) !== neg);
    return listed.length === 2 ? presence(field, '=') : listed.length === 1 ? `${name}:=${listed[0]}` : false;
  }
  const equal = kind === 'int' ? typed.filter((v) => Number.isInteger(v)) : typed;
  if (equal.length === 0) return neg ? presence(field, '=') : false;
  const list = `[${equal.map(filterLiteral).join(',')}]`;
  return neg ? `(${name}:!=${list} && ${presence(field, '=')})` : `${name}:=${list}`;
}

/** SQL LIKE (filter.ts) as far as Typesense filters go: exact value, prefix, or any string. */
function like(field: FieldRef, pattern: string, neg: boolean, known: KnownFields | undefined): string | boolean {
  const shape = likeShape(pattern);
  if (!shape) throw unsupportedFilter(`LIKE "${pattern}": Typesense matches only a whole value (abc) or a prefix (abc%)`);
  const kind = kindOf(field, known);
  if (kind === null || (kind && kind !== 'string' && kind !== 'other')) return false;
  const name = flatFieldName(field);
  // `%` is TRUE for every string, so NOT LIKE '%' is never TRUE.
  if (shape.prefix && shape.text === '') return neg ? false : presence(field, '=');
  if (!shape.prefix) return neg ? `(${name}:!=${filterLiteral(shape.text)} && ${presence(field, '=')})` : `${name}:=${filterLiteral(shape.text)}`;
  if (neg) throw unsupportedFilter(`NOT LIKE "${pattern}": Typesense has no negated prefix filter`);
  // Typesense's prefix filter (`f:=abc*`) takes a bare token, so only letters and digits are safe in it.
  if (!/^[\p{L}\p{N}]+$/u.test(shape.text)) throw unsupportedFilter(`LIKE "${pattern}": a Typesense prefix may hold only letters and digits`);
  return `${name}:=${shape.text}*`;
}
