import { compileTextPattern, PatternSyntaxError } from '@lib/platform';

/**
 * Whether one of a source's pos_regex / neg_regex matches the whole name (URL, object key, page title), on
 * RE2's linear-time engine: a configurer's pattern must not hold the event loop over a crafted URL. A pattern
 * RE2 refuses is refused when the pipeline is configured; one stored before that rule (a lookaround) matches
 * nothing rather than failing every record.
 */
export function fullMatch(patterns: readonly string[], name: string): boolean {
  return patterns.some((p) => {
    try {
      return compileTextPattern(p, { whole: true }).test(name);
    } catch (e) {
      if (e instanceof PatternSyntaxError) return false;
      throw e;
    }
  });
}
