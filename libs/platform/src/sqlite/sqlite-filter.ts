import { levelUnsupported } from '../filter/filter-errors';
import { likeToGlob } from '../filter/like-pattern';
import { assertNever } from '../kernel/errors';
import { type FieldRef, type FilterExpr, type Literal, literalType } from '../filter/filter';

export { likeToGlob };

/** A JSON column (an SQL expression) and the path of the metadata object inside it. */
export interface JsonSource {
  readonly column: string;
  readonly path?: readonly string[];
}

/** Where each level's metadata lives; a missing level makes its fields fail with `filter.level_unsupported`. */
export interface MetadataColumns {
  readonly doc: JsonSource;
  readonly part?: JsonSource;
}

/** The search index's parts table, aliased `p`. */
export const PART_COLUMNS: MetadataColumns = { doc: { column: 'p.doc_meta' }, part: { column: 'p.part_meta' } };

/**
 * `'$."a"."b"'` as an SQL string literal: labels are JSON strings, which SQLite's path syntax reads with their
 * escapes (a name may hold `"`, `\` or `.`), and the path is inlined rather than bound so that it repeats freely.
 */
export function jsonPathLiteral(segments: readonly string[]): string {
  return `'${('$' + segments.map((s) => `.${JSON.stringify(s)}`).join('')).replace(/'/g, "''")}'`;
}

function source(field: FieldRef, columns: MetadataColumns): { column: string; path: string } {
  const src = columns[field.level];
  if (!src) throw levelUnsupported(field);
  return { column: src.column, path: jsonPathLiteral([...(src.path ?? []), field.name]) };
}

/** Column expression for a metadata field: its SQL value (JSON true/false read as 1/0, arrays as JSON text). */
export function fieldSql(field: FieldRef, columns: MetadataColumns = PART_COLUMNS): string {
  const { column, path } = source(field, columns);
  return `json_extract(${column}, ${path})`;
}

/** The field's JSON type: 'null', 'true', 'false', 'integer', 'real', 'text', 'array', 'object', or NULL when missing. */
function typeSql(field: FieldRef, columns: MetadataColumns): string {
  const { column, path } = source(field, columns);
  return `json_type(${column}, ${path})`;
}

const JSON_TYPES: Record<'number' | 'string' | 'boolean', string> = { number: `'integer', 'real'`, string: `'text'`, boolean: `'true', 'false'` };
const bind = (v: Literal): Literal => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/**
 * Translates the filter AST to a WHERE fragment, with positional parameters (semantics in filter/filter.ts).
 * Each atom is NULL when UNKNOWN: a `CASE` on the field's JSON type yields the comparison only for a value of
 * the literal's type, so SQL's own three-valued NOT/AND/OR and WHERE's "TRUE only" do the rest. The type guard
 * also keeps JSON booleans (read as 1/0) away from numeric literals, and arrays (read as JSON text) away from
 * strings. `columns` defaults to the search index's parts table.
 */
export function filterToSql(expr: FilterExpr, params: unknown[], columns: MetadataColumns = PART_COLUMNS): string {
  switch (expr.kind) {
    case 'and':
      return expr.items.length ? `(${expr.items.map((e) => filterToSql(e, params, columns)).join(' AND ')})` : '1';
    case 'or':
      return expr.items.length ? `(${expr.items.map((e) => filterToSql(e, params, columns)).join(' OR ')})` : '0';
    case 'not':
      return `(NOT ${filterToSql(expr.item, params, columns)})`;
    case 'cmp': {
      const type = typeSql(expr.field, columns);
      params.push(bind(expr.value));
      return `(CASE WHEN ${type} IN (${JSON_TYPES[literalType(expr.value)]}) THEN ${fieldSql(expr.field, columns)} ${expr.op === '!=' ? '<>' : expr.op} ? END)`;
    }
    case 'in': {
      if (expr.values.length === 0) return '0';
      const type = typeSql(expr.field, columns);
      const value = fieldSql(expr.field, columns);
      const branches = (['number', 'string', 'boolean'] as const).flatMap((t) => {
        const values = expr.values.filter((v) => literalType(v) === t);
        if (values.length === 0) return [];
        params.push(JSON.stringify(values.map(bind)));
        return [`WHEN ${type} IN (${JSON_TYPES[t]}) THEN ${value} IN (SELECT value FROM json_each(?))`];
      });
      return `(CASE ${branches.join(' ')} END)`;
    }
    case 'is_null':
      return `(COALESCE(${typeSql(expr.field, columns)}, 'null') ${expr.negated ? '<>' : '='} 'null')`;
    case 'like':
      params.push(likeToGlob(expr.pattern));
      return `(CASE WHEN ${typeSql(expr.field, columns)} = 'text' THEN ${fieldSql(expr.field, columns)} GLOB ? END)`;
    default:
      return assertNever(expr);
  }
}
