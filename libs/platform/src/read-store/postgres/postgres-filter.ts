import { assertNever } from '../../kernel/errors';
import { type FieldRef, type FilterExpr, type Literal, literalType } from '../../filter/filter';
import { levelUnsupported } from '../../filter/filter-errors';
import { likeTokens } from '../../filter/like-pattern';
import { encodeText } from './postgres-text';

/** A JSONB column (an SQL expression) and the path of the metadata object inside it. */
export interface JsonbSource {
  readonly column: string;
  readonly path?: readonly string[];
}

/** Where each level's metadata lives; a missing level makes its fields fail with `filter.level_unsupported`. */
export interface PostgresMetadataColumns {
  readonly doc: JsonbSource;
  readonly part?: JsonbSource;
}

/** Appends a value to the statement's parameters and returns its placeholder (`$n`). */
function param(params: unknown[], value: unknown): string {
  params.push(value);
  return `$${params.length}`;
}

/**
 * The field's JSONB value, or NULL when missing. Names are bound, never spliced in; `->` with a text key reads an
 * object's own member only (on an array or a scalar it is NULL), as `#>` would not: `{metadata,0}` indexes arrays.
 */
function fieldValue(field: FieldRef, columns: PostgresMetadataColumns, params: unknown[]): string {
  const src = columns[field.level];
  if (!src) throw levelUnsupported(field);
  return [...(src.path ?? []), field.name].reduce((expr, key) => `(${expr} -> ${param(params, encodeText(key))}::text)`, src.column);
}

const JSONB_TYPE: Record<'number' | 'string' | 'boolean', string> = { number: 'number', string: 'string', boolean: 'boolean' };

/**
 * The value as the literal's SQL type: numbers exactly (`numeric`, as JSONB stores them), strings in byte order
 * (`COLLATE "C"`: UTF-8 bytes, as SQLite and MongoDB compare, whatever the database's collation), booleans with
 * false < true.
 */
function typed(value: string, type: 'number' | 'string' | 'boolean'): string {
  if (type === 'number') return `(${value})::numeric`;
  if (type === 'string') return `((${value}) #>> '{}') COLLATE "C"`;
  return `(${value})::boolean`;
}

const SQL_TYPE = { number: 'numeric', string: 'text', boolean: 'boolean' } as const;

/** A LIKE pattern (filter/filter.ts semantics) as PostgreSQL's LIKE with `\` as the escape character. */
export function likeToPostgres(pattern: string): string {
  return likeTokens(pattern)
    .map((t) => (t.kind === 'text' ? encodeText(t.text).replace(/[\\%_]/g, '\\$&') : t.kind === 'any' ? '%' : '_'))
    .join('');
}

/** One character of an encoded string (postgres-text.ts): an escape pair or any other character. */
const ENCODED_CHAR = '(?:\u0001[\u0001\u0002]|[^\u0001])';

/**
 * The pattern as an anchored regular expression over encoded text, for strings holding an escape pair: LIKE would
 * count a pair as two characters for `_`, and could match a literal from the middle of a pair.
 */
export function likeToPostgresRegex(pattern: string): string {
  const body = likeTokens(pattern)
    .map((t) => (t.kind === 'text' ? encodeText(t.text).replace(/[\\^$.|?*+()[\]{}]/g, '\\$&') : t.kind === 'any' ? `${ENCODED_CHAR}*` : ENCODED_CHAR))
    .join('');
  return `^${body}$`;
}

/**
 * Translates the filter AST to a WHERE fragment with positional parameters (semantics in filter/filter.ts), as the
 * SQLite translator does: each atom is NULL when UNKNOWN (a `CASE` on the field's JSONB type yields the comparison
 * only for a value of the literal's type), so SQL's own three-valued NOT/AND/OR and WHERE's "TRUE only" do the rest.
 * Every value and every field name is a parameter: nothing from the filter is spliced into the SQL text.
 */
export function filterToPostgres(expr: FilterExpr, params: unknown[], columns: PostgresMetadataColumns): string {
  switch (expr.kind) {
    case 'and':
      return expr.items.length ? `(${expr.items.map((e) => filterToPostgres(e, params, columns)).join(' AND ')})` : 'TRUE';
    case 'or':
      return expr.items.length ? `(${expr.items.map((e) => filterToPostgres(e, params, columns)).join(' OR ')})` : 'FALSE';
    case 'not':
      return `(NOT ${filterToPostgres(expr.item, params, columns)})`;
    case 'cmp': {
      const v = fieldValue(expr.field, columns, params);
      const type = literalType(expr.value);
      const op = expr.op === '!=' ? '<>' : expr.op;
      return `(CASE WHEN jsonb_typeof(${v}) = '${JSONB_TYPE[type]}' THEN ${typed(v, type)} ${op} ${literal(params, expr.value)} END)`;
    }
    case 'in': {
      if (expr.values.length === 0) return 'FALSE';
      const v = fieldValue(expr.field, columns, params);
      const branches = (['number', 'string', 'boolean'] as const).flatMap((t) => {
        const values = expr.values.filter((x) => literalType(x) === t);
        if (values.length === 0) return [];
        const list = param(params, values.map((x) => (t === 'number' ? String(x) : t === 'string' ? encodeText(x as string) : x)));
        return [`WHEN jsonb_typeof(${v}) = '${JSONB_TYPE[t]}' THEN ${typed(v, t)} = ANY(${list}::${SQL_TYPE[t]}[])`];
      });
      return `(CASE ${branches.join(' ')} END)`;
    }
    case 'is_null':
      return `(COALESCE(jsonb_typeof(${fieldValue(expr.field, columns, params)}), 'null') ${expr.negated ? '<>' : '='} 'null')`;
    case 'like': {
      const v = fieldValue(expr.field, columns, params);
      const s = `((${v}) #>> '{}')`;
      // LIKE for the strings without an escape pair (nearly all), the exact regular expression for the others.
      const like = `${s} LIKE ${param(params, likeToPostgres(expr.pattern))}`;
      const regex = `${s} ~ ${param(params, likeToPostgresRegex(expr.pattern))}`;
      return `(CASE WHEN jsonb_typeof(${v}) = 'string' THEN (CASE WHEN strpos(${s}, chr(1)) = 0 THEN ${like} ELSE ${regex} END) END)`;
    }
    default:
      return assertNever(expr);
  }
}

function literal(params: unknown[], value: Literal): string {
  const type = literalType(value);
  // Numbers travel as their shortest decimal text, which `numeric` reads exactly (JSONB stored the same text).
  return `${param(params, type === 'number' ? String(value) : type === 'string' ? encodeText(value as string) : value)}::${SQL_TYPE[type]}${type === 'string' ? ' COLLATE "C"' : ''}`;
}
