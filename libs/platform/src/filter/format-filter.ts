import { assertNever } from '../kernel/errors';
import type { FieldRef, FilterExpr, Literal } from './filter';

/**
 * Prints an AST as filter text that `parseFilter` reads back to the same AST (for logs and tests). NOT IN and
 * NOT LIKE print as `NOT <field> IN (…)`, which is the same node. And/or must hold two or more items, as
 * the parser makes them (an empty list has no text form, a one-item list reads back as its item), and an and
 * directly inside an and (or in an or) reads back flattened.
 */
export function formatFilter(expr: FilterExpr): string {
  return formatAt(expr, 'or');
}

type Level = 'or' | 'and' | 'unary';
const RANK: Record<Level, number> = { or: 0, and: 1, unary: 2 };

function formatAt(expr: FilterExpr, context: Level): string {
  const wrap = (own: Level, text: string) => (RANK[own] < RANK[context] ? `(${text})` : text);
  switch (expr.kind) {
    case 'or':
    case 'and': {
      if (expr.items.length < 2) throw new Error(`formatFilter: ${expr.kind} needs two or more items to have a text form`);
      const items = expr.items.map((i) => formatAt(i, expr.kind === 'or' ? 'and' : 'unary'));
      return wrap(expr.kind, items.join(expr.kind === 'or' ? ' OR ' : ' AND '));
    }
    case 'not':
      return `NOT ${formatAt(expr.item, 'unary')}`;
    case 'cmp':
      return `${formatField(expr.field)} ${expr.op} ${formatLiteral(expr.value)}`;
    case 'in':
      if (expr.values.length === 0) throw new Error('formatFilter: IN () has no text form');
      return `${formatField(expr.field)} IN (${expr.values.map(formatLiteral).join(', ')})`;
    case 'is_null':
      return `${formatField(expr.field)} IS ${expr.negated ? 'NOT ' : ''}NULL`;
    case 'like':
      return `${formatField(expr.field)} LIKE ${formatLiteral(expr.pattern)}`;
    default:
      return assertNever(expr);
  }
}

export function formatField(field: FieldRef): string {
  const name = /^[A-Za-z0-9_]+$/.test(field.name) ? field.name : `"${field.name.replace(/[\\"]/g, '\\$&')}"`;
  return `${field.level}.${name}`;
}

export function formatLiteral(value: Literal): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
  if (typeof value === 'boolean') return String(value);
  if (!Number.isFinite(value)) throw new Error(`formatFilter: ${value} has no text form`);
  return Object.is(value, -0) ? '-0' : String(value);
}
