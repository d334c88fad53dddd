/**
 * The filter language entry (`@lib/platform/filter`): the metadata filter AST, its parser, formatter and
 * in-memory evaluation. Pure: domain code may use it. Each store's translation lives with its adapter.
 */
export * from './filter';
export { parseFilter, MAX_FILTER_DEPTH } from './parse-filter';
export { formatField, formatFilter } from './format-filter';
export { matchesFilter, evaluateFilter, type FilterScope, type Truth } from './match-filter';
export { compileTextPattern, linearRegExp, listFilter, MAX_PATTERN_LENGTH, PatternSyntaxError, type TextPattern, type TextPatternOptions } from './text-pattern';
