/** One element of a LIKE pattern: a literal run of text, `%` (any run) or `_` (one character). */
export type LikeToken = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'any' } | { readonly kind: 'one' };

/**
 * Splits a LIKE pattern (semantics in filter/filter.ts): `\%`, `\_`, `\\` are literal, a backslash before
 * anything else or at the end is itself literal. Adjacent literal characters are merged into one token.
 */
export function likeTokens(pattern: string): LikeToken[] {
  const tokens: LikeToken[] = [];
  const text = (c: string) => {
    const last = tokens[tokens.length - 1];
    if (last?.kind === 'text') tokens[tokens.length - 1] = { kind: 'text', text: last.text + c };
    else tokens.push({ kind: 'text', text: c });
  };
  // By code point, so that `_` never splits a surrogate pair.
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    const next = chars[i + 1];
    if (c === '\\' && (next === '%' || next === '_' || next === '\\')) {
      text(next);
      i++;
    } else if (c === '%') {
      // `%%` means what `%` means; one token keeps the shapes simple (`abc%%` is still a prefix).
      if (tokens[tokens.length - 1]?.kind !== 'any') tokens.push({ kind: 'any' });
    }
    else if (c === '_') tokens.push({ kind: 'one' });
    else text(c);
  }
  return tokens;
}

/** Characters with a meaning in a regular expression: escaped, they are literal in JavaScript (also with the `u` flag) and PCRE. */
const escapeRegExp = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

/**
 * An anchored regular expression source for the pattern, for JavaScript and PCRE (MongoDB) alike. `[\s\S]`
 * instead of `.` so newlines match without flags; the end anchor is `(?![\s\S])` because PCRE's `$` also
 * matches before a final newline.
 */
export function likeToRegExpSource(pattern: string): string {
  const body = likeTokens(pattern)
    .map((t) => (t.kind === 'text' ? escapeRegExp(t.text) : t.kind === 'any' ? '[\\s\\S]*' : '[\\s\\S]'))
    .join('');
  return `^${body}(?![\\s\\S])`;
}

/** The pattern as an RE2 source to match the whole text with `.` matching newlines (text-pattern.ts: `whole`, `dotAll`). */
export function likeToRe2Source(pattern: string): string {
  return likeTokens(pattern)
    .map((t) => (t.kind === 'text' ? escapeRegExp(t.text) : t.kind === 'any' ? '.*' : '.'))
    .join('');
}

/**
 * The pattern as an SQLite GLOB (case-sensitive, whole string, `?` one UTF-8 character): GLOB's own
 * metacharacters `*`, `?`, `[` are literal inside a bracket expression.
 */
export function likeToGlob(pattern: string): string {
  return likeTokens(pattern)
    .map((t) => (t.kind === 'text' ? t.text.replace(/[*?[]/g, '[$&]') : t.kind === 'any' ? '*' : '?'))
    .join('');
}

/** The literal prefix of a pattern that is `<text>%` or `<text>`; undefined for any other shape. */
export function likeShape(pattern: string): { readonly text: string; readonly prefix: boolean } | undefined {
  const tokens = likeTokens(pattern);
  const [first, second] = tokens;
  if (tokens.length === 0) return { text: '', prefix: false };
  if (tokens.length === 1 && first.kind === 'text') return { text: first.text, prefix: false };
  if (tokens.length === 1 && first.kind === 'any') return { text: '', prefix: true };
  if (tokens.length === 2 && first.kind === 'text' && second.kind === 'any') return { text: first.text, prefix: true };
  return undefined;
}
