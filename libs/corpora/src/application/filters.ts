import { DomainError, FieldRef, FilterExpr, parseFilter } from '@lib/platform';
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
