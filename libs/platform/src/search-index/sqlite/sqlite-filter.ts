import { assertNever } from '../../kernel/errors';
import type { FieldRef, FilterExpr, Literal } from '../filter';

/** Column expression for a metadata field of the parts table aliased `p`. */
export function fieldSql(field: FieldRef): string {
  const path = `$."${field.name.replace(/"/g, '\\"')}"`.replace(/'/g, "''");
  return `json_extract(p.${field.level === 'doc' ? 'doc_meta' : 'part_meta'}, '${path}')`;
}

const bind = (v: Literal): Literal => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/** SQL `LIKE` semantics (%, _, backslash escapes), case-sensitive, expressed as a GLOB pattern. */
export function likeToGlob(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\' && i + 1 < pattern.length) {
      const n = pattern[++i];
      out += n === '*' || n === '?' || n === '[' ? `[${n}]` : n;
    } else if (c === '%') out += '*';
    else if (c === '_') out += '?';
    else if (c === '*' || c === '?' || c === '[') out += `[${c}]`;
    else out += c;
  }
  return out;
}

/** Translates the filter AST to a WHERE fragment over `p`, with positional parameters. */
export function filterToSql(expr: FilterExpr, params: unknown[]): string {
  switch (expr.kind) {
    case 'and':
      return expr.items.length ? `(${expr.items.map((e) => filterToSql(e, params)).join(' AND ')})` : '1';
    case 'or':
      return expr.items.length ? `(${expr.items.map((e) => filterToSql(e, params)).join(' OR ')})` : '0';
    case 'not':
      return `(NOT ${filterToSql(expr.item, params)})`;
    case 'cmp':
      params.push(bind(expr.value));
      return `(${fieldSql(expr.field)} ${expr.op === '!=' ? '<>' : expr.op} ?)`;
    case 'in':
      params.push(JSON.stringify(expr.values.map(bind)));
      return `(${fieldSql(expr.field)} IN (SELECT value FROM json_each(?)))`;
    case 'is_null':
      return `(${fieldSql(expr.field)} IS ${expr.negated ? 'NOT ' : ''}NULL)`;
    case 'like':
      params.push(likeToGlob(expr.pattern));
      return `(${fieldSql(expr.field)} GLOB ?)`;
    default:
      return assertNever(expr);
  }
}
