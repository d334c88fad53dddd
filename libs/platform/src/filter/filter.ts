/**
 * Metadata filters: one AST that `parseFilter` produces, `matchesFilter` evaluates in memory, and the SQLite,
 * MongoDB and Typesense translators turn into queries. Every evaluator keeps to these semantics:
 *
 * - SQL three-valued logic: each node is TRUE, FALSE or UNKNOWN; a part (or document) is selected only when
 *   the whole expression is TRUE. AND/OR/NOT are Kleene's: NOT UNKNOWN is UNKNOWN, FALSE AND UNKNOWN is FALSE,
 *   TRUE OR UNKNOWN is TRUE.
 * - A field's value is the own property `name` of the level's metadata object (`doc.` → document metadata,
 *   `part.` → part metadata). Its type is one of number (integers and reals alike), string, boolean, null
 *   (missing or JSON null) or other (arrays, objects).
 * - Comparisons (`=`, `!=`, `<`, `<=`, `>`, `>=`) are UNKNOWN unless the value has the literal's type: numbers
 *   compare with numbers, strings with strings, booleans with booleans (false < true). `doc.n = 1` is UNKNOWN,
 *   not FALSE, for `"1"`, `true`, `[1]` or a missing field, and so is `doc.n != 1`.
 * - Strings compare by UTF-16 code units (binary, case-sensitive). SQLite and MongoDB compare UTF-8 bytes, which
 *   orders every string the same way except astral characters against U+E000–U+FFFF: ordering of non-ASCII
 *   strings is engine-defined.
 * - `IN (l1, …)` is TRUE when the value equals a literal of its own type; FALSE when the value's type is among
 *   the literals' types but equals none of them; UNKNOWN otherwise (null, arrays, objects, or a type no literal
 *   has). So `doc.x IN (1, 'a')` is FALSE for 2 and for 'b', UNKNOWN for true. An empty list (the grammar cannot
 *   write one) is FALSE for every row, as in SQLite, so NOT IN () is TRUE.
 * - `LIKE 'pattern'` applies to strings only (UNKNOWN for anything else), case-sensitive, matching the whole
 *   string: `%` any run of characters, `_` exactly one character (code point), `\%`, `\_`, `\\` a literal `%`,
 *   `_`, `\`. A backslash before any other character, or at the end, is a literal backslash.
 * - `IS NULL` is TRUE for a missing field or JSON null and FALSE otherwise (never UNKNOWN); `IS NOT NULL` is
 *   its negation. Arrays and objects are not null.
 * - Where an evaluator has no part metadata (document lists, `matchesFilter` without `part`), every `part.` atom,
 *   IS NULL included, is UNKNOWN; the read stores reject `part.` fields instead (`filter.level_unsupported`).
 */

/** A metadata field of a part: `doc.<name>` (document metadata) or `part.<name>` (part metadata). */
export interface FieldRef {
  readonly level: 'doc' | 'part';
  readonly name: string;
}

export type Literal = string | number | boolean;

export type CmpOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

/** The filter AST. And/or produced by the parser are flat (no and directly inside and) and hold two or more items. */
export type FilterExpr =
  | { readonly kind: 'and'; readonly items: readonly FilterExpr[] }
  | { readonly kind: 'or'; readonly items: readonly FilterExpr[] }
  | { readonly kind: 'not'; readonly item: FilterExpr }
  | { readonly kind: 'cmp'; readonly field: FieldRef; readonly op: CmpOp; readonly value: Literal }
  | { readonly kind: 'in'; readonly field: FieldRef; readonly values: readonly Literal[] }
  | { readonly kind: 'is_null'; readonly field: FieldRef; readonly negated: boolean }
  | { readonly kind: 'like'; readonly field: FieldRef; readonly pattern: string };

/** The comparison that is TRUE exactly where `NOT (a op b)` is TRUE, for values of the same type. */
export const NEGATED_CMP: Readonly<Record<CmpOp, CmpOp>> = { '=': '!=', '!=': '=', '<': '>=', '<=': '>', '>': '<=', '>=': '<' };

/** The type classes comparisons respect; `null` and `other` values never compare. */
export type ValueType = 'number' | 'string' | 'boolean' | 'null' | 'other';

export function valueType(v: unknown): ValueType {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number') return Number.isFinite(v) ? 'number' : 'other';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  return 'other';
}

export const literalType = (v: Literal): 'number' | 'string' | 'boolean' => valueType(v) as 'number' | 'string' | 'boolean';

/** Every field an expression names, in order of appearance (with repeats). */
export function filterFields(expr: FilterExpr): FieldRef[] {
  switch (expr.kind) {
    case 'and':
    case 'or':
      return expr.items.flatMap(filterFields);
    case 'not':
      return filterFields(expr.item);
    default:
      return [expr.field];
  }
}
