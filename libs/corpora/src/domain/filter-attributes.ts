import { invalid } from '@lib/platform/kernel';
import type { FieldRef, FilterExpr, Literal } from '@lib/platform/filter';
import type { FilterAttribute, FilterAttributeType } from './corpus';

const LEVEL: Record<FieldRef['level'], FilterAttribute['level']> = { doc: 'document', part: 'part' };

const literalFits = (type: FilterAttributeType, value: Literal): boolean => {
  const element = type.startsWith('list[') ? type.slice(5, -1) : type;
  if (element === 'integer') return typeof value === 'number' && Number.isInteger(value);
  if (element === 'real_number') return typeof value === 'number';
  if (element === 'boolean') return typeof value === 'boolean';
  return typeof value === 'string';
};

/**
 * A filter may name only the corpus's filter attributes, each at its level, with literals of its type; LIKE
 * only on text. Returns the problems found, one message each, for a 400 on the caller's field.
 */
export function filterProblems(expr: FilterExpr, attributes: readonly FilterAttribute[], levels: readonly FieldRef['level'][] = ['doc', 'part']): string[] {
  const problems: string[] = [];
  const attributeOf = (field: FieldRef): FilterAttribute | undefined => {
    if (!levels.includes(field.level)) {
      problems.push(`${field.level}.${field.name}: only ${levels.map((l) => `${l}.`).join(' and ')} fields can be used here`);
      return undefined;
    }
    const attr = attributes.find((a) => a.name === field.name && a.level === LEVEL[field.level]);
    if (!attr) problems.push(`${field.level}.${field.name} is not a filter attribute of this corpus (declare it in filter_attributes at level ${LEVEL[field.level]})`);
    return attr;
  };
  const checkLiteral = (field: FieldRef, attr: FilterAttribute, value: Literal) => {
    if (!literalFits(attr.type, value)) problems.push(`${field.level}.${field.name} is of type ${attr.type}; ${JSON.stringify(value)} does not fit it`);
  };
  const walk = (e: FilterExpr): void => {
    switch (e.kind) {
      case 'and':
      case 'or':
        e.items.forEach(walk);
        return;
      case 'not':
        walk(e.item);
        return;
      case 'cmp': {
        const attr = attributeOf(e.field);
        if (attr) checkLiteral(e.field, attr, e.value);
        return;
      }
      case 'in': {
        const attr = attributeOf(e.field);
        if (attr) e.values.forEach((v) => checkLiteral(e.field, attr, v));
        return;
      }
      case 'is_null':
        attributeOf(e.field);
        return;
      case 'like': {
        const attr = attributeOf(e.field);
        if (attr && attr.type !== 'text') problems.push(`LIKE applies to text attributes; ${e.field.level}.${e.field.name} is of type ${attr.type}`);
        return;
      }
    }
  };
  walk(expr);
  return [...new Set(problems)];
}

/** Throws a 400 on `fieldName` when the filter names anything the corpus does not declare. */
export function requireFilterFits(expr: FilterExpr, attributes: readonly FilterAttribute[], fieldName: string, levels?: readonly FieldRef['level'][]): void {
  const problems = filterProblems(expr, attributes, levels);
  if (problems.length) throw invalid('filter.invalid_attribute', `Invalid metadata filter: ${problems.join('; ')}`, { [fieldName]: problems.join('; ') });
}
