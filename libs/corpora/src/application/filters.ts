import { DomainError, FieldRef, FilterExpr, formatField, invalid, parseFilter } from '@lib/platform';
import type { FilterAttribute } from '../domain/corpus';
import { requireFilterFits } from '../domain/filter-attributes';

/**
 * Parses a metadata filter and checks it against the corpus's filter attributes. Blank → no filter. Errors are
 * 400s on `fieldName` (e.g. `metadata_filter`, `search.corpora[0].metadata_filter`).
 */
export function compileFilter(text: string | undefined, attributes: readonly FilterAttribute[], fieldName: string, levels?: readonly FieldRef['level'][]): FilterExpr | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  let expr: FilterExpr;
  try {
    expr = parseFilter(text);
  } catch (e) {
    if (e instanceof DomainError) throw new DomainError(e.kind, e.code, e.message, { fieldErrors: { [fieldName]: e.message } });
    throw e;
  }
  requireFilterFits(expr, attributes, fieldName, levels);
  return expr;
}

const levelOf = (attribute: FilterAttribute): FieldRef['level'] => (attribute.level === 'document' ? 'doc' : 'part');

/** `doc.name` or `part.name`, quoted where the name needs it (`doc."created at"`). */
export const qualifiedName = (attribute: FilterAttribute): string => formatField({ level: levelOf(attribute), name: attribute.name });

/** The field a qualified name means, read by the filter grammar itself so quoting works as in filters. */
function fieldNamed(qualified: string): FieldRef | undefined {
  try {
    const expr = parseFilter(`${qualified} IS NULL`);
    return expr.kind === 'is_null' ? expr.field : undefined;
  } catch {
    return undefined;
  }
}

/** The filter attribute a qualified name (`doc.x`, `part."x y"`) names, or a 400 on `fieldName`. */
export function resolveAttribute(corpus: { key: string; filter_attributes: readonly FilterAttribute[] }, qualified: string, fieldName: string): { attribute: FilterAttribute; field: FieldRef } {
  const named = fieldNamed(qualified);
  const attribute = named && corpus.filter_attributes.find((a) => a.name === named.name && levelOf(a) === named.level);
  if (!attribute) {
    throw invalid('filter.invalid_attribute', `"${qualified}" is not a filter attribute of corpus "${corpus.key}" (use doc.<name> or part.<name>)`, { [fieldName]: 'not a filter attribute of this corpus' });
  }
  return { attribute, field: { level: levelOf(attribute), name: attribute.name } };
}
