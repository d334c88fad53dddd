import { escapeLiteral } from 'pg';
import type { Condition, MetadataFilter } from '../read-store.port';
import { filterToPostgres } from './postgres-filter';
import { encodeText, toJsonb } from './postgres-text';

/**
 * A field of the `doc` column as JSONB, JSON null read as SQL NULL (as SQLite's `json_extract` reads it, so that
 * `ne`, `IS NULL` and sorting treat a missing field and a null one alike). The path is a literal, not a parameter:
 * it comes from code (a projection's declared index or a query handler's condition), and the expression must be
 * the very text of the index's expression for the planner to use the index.
 */
export function column(field: string): string {
  if (field === 'id') return 'id';
  return `NULLIF(doc${field.split('.').map((k) => ` -> ${escapeLiteral(encodeText(k))}`).join('')}, 'null'::jsonb)`;
}

const OPS: Record<Exclude<Condition['op'], 'in'>, string> = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' };

/** The JSONB type a range condition's value has: ranges compare values of that type only, as MongoDB's do. */
const jsonbType = (v: unknown): string => (typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'string');

function param(params: unknown[], value: unknown): string {
  params.push(value);
  return `$${params.length}`;
}

/** Conditions AND-ed, with parameters appended to `params`; JSONB comparison (numbers numerically, `1 = 1.0`). */
export function conditionSql(conditions: readonly Condition[] | undefined, params: unknown[]): string {
  const parts: string[] = [];
  for (const c of conditions ?? []) {
    const id = c.field === 'id';
    const col = column(c.field);
    if (c.op === 'in') {
      const values = c.value as readonly unknown[];
      parts.push(id ? `id = ANY(${param(params, values.map((v) => encodeText(String(v))))}::text[])` : `${col} = ANY(${param(params, values.map(toJsonb))}::jsonb[])`);
    } else if (c.value === null) {
      parts.push(c.op === 'ne' ? `${col} IS NOT NULL` : `${col} IS NULL`);
    } else if (id) {
      parts.push(`id ${OPS[c.op]} ${param(params, encodeText(String(c.value)))}`);
    } else {
      parts.push(`${col} ${OPS[c.op]} ${param(params, toJsonb(c.value))}::jsonb`);
      if (c.op !== 'eq' && c.op !== 'ne') parts.push(`jsonb_typeof(${col}) = '${jsonbType(c.value)}'`);
    }
  }
  return parts.length ? parts.join(' AND ') : 'TRUE';
}

/** Conditions and a metadata filter, AND-ed; the filter reads the metadata object at `docField` of the `doc` column. */
export function whereSql(where: readonly Condition[] | undefined, metadata: MetadataFilter | undefined, params: unknown[]): string {
  const w = conditionSql(where, params);
  if (!metadata) return w;
  return `${w} AND ${filterToPostgres(metadata.filter, params, { doc: { column: 'doc', path: metadata.docField.split('.') } })}`;
}

/** Keyset continuation after the cursor, in the order `ORDER BY col ASC NULLS FIRST, id ASC` (or both DESC, NULLS LAST). */
export function cursorSql(sortField: string, desc: boolean, key: { sortValue: unknown; id: string }, params: unknown[]): string {
  const cmp = desc ? '<' : '>';
  const keyId = encodeText(key.id);
  if (sortField === 'id') return `id ${cmp} ${param(params, keyId)}`;
  const col = column(sortField);
  if (key.sortValue === null || key.sortValue === undefined) {
    // NULLs sort first ascending and last descending; "> NULL" is never true, so NULL needs its own case.
    return desc ? `(${col} IS NULL AND id < ${param(params, keyId)})` : `(${col} IS NOT NULL OR id > ${param(params, keyId)})`;
  }
  const v = `${param(params, toJsonb(key.sortValue))}::jsonb`;
  const id = param(params, keyId);
  return desc ? `(${col} < ${v} OR ${col} IS NULL OR (${col} = ${v} AND id < ${id}))` : `(${col} > ${v} OR (${col} = ${v} AND id > ${id}))`;
}

export function orderSql(sortField: string, desc: boolean): string {
  if (sortField === 'id') return desc ? 'id DESC' : 'id ASC';
  const col = column(sortField);
  return desc ? `${col} DESC NULLS LAST, id DESC` : `${col} ASC NULLS FIRST, id ASC`;
}
