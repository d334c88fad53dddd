/** A metadata field of a part: `doc.<name>` (document metadata) or `part.<name>` (part metadata). */
export interface FieldRef {
  readonly level: 'doc' | 'part';
  readonly name: string;
}

export type Literal = string | number | boolean;

/**
 * The filter AST every search adapter translates (SQLite, Typesense) and `matchesFilter` evaluates in memory.
 * Comparisons against a missing field are false, as in SQL where NULL compares to nothing.
 */
export type FilterExpr =
  | { readonly kind: 'and'; readonly items: readonly FilterExpr[] }
  | { readonly kind: 'or'; readonly items: readonly FilterExpr[] }
  | { readonly kind: 'not'; readonly item: FilterExpr }
  | { readonly kind: 'cmp'; readonly field: FieldRef; readonly op: '=' | '!=' | '<' | '<=' | '>' | '>='; readonly value: Literal }
  | { readonly kind: 'in'; readonly field: FieldRef; readonly values: readonly Literal[] }
  | { readonly kind: 'is_null'; readonly field: FieldRef; readonly negated: boolean }
  | { readonly kind: 'like'; readonly field: FieldRef; readonly pattern: string };
