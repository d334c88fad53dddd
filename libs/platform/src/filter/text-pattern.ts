import { RE2JS } from 're2js';
import { invalid } from '../kernel/errors';

/**
 * Regular expressions that callers write (the `filter` of list routes, a pipeline's pos_regex / neg_regex, a
 * LIKE pattern) run here, on RE2's engine (re2js, pure JavaScript): matching is linear in the text, whatever the
 * pattern, so no pattern can hold the event loop (JavaScript's backtracking `^(\w+\w?)+@` held it for seconds over a
 * 30-character name). The syntax is RE2's, JavaScript's for ordinary patterns; lookaround and backreferences,
 * which need backtracking, are refused when the pattern is given, never at match time.
 */
export interface TextPattern {
  /** Whether the pattern matches the text (somewhere, or all of it for a `whole` pattern). */
  test(text: string): boolean;
}

/** Longest `filter` a caller may give: compiling is linear in it, and no legitimate name filter comes near. */
export const MAX_PATTERN_LENGTH = 1000;

export interface TextPatternOptions {
  /** Case-insensitive, as JavaScript's `i`. */
  readonly ignoreCase?: boolean;
  /** The pattern must match the whole text, as `^(?:…)$`. */
  readonly whole?: boolean;
  /** `.` matches newlines too, as JavaScript's `s`. */
  readonly dotAll?: boolean;
}

/** A pattern RE2 does not accept (bad syntax, lookaround, backreference, a repeat over 1,000) or one too long. */
export class PatternSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatternSyntaxError';
  }
}

const compiled = new Map<string, TextPattern>();

/** Compiles `source` (JavaScript's `\uXXXX` escapes accepted too); throws {@link PatternSyntaxError}. */
export function compileTextPattern(source: string, options: TextPatternOptions = {}): TextPattern {
  const cacheKey = `${options.ignoreCase ? 'i' : ''}${options.whole ? 'w' : ''}${options.dotAll ? 's' : ''}:${source}`;
  const hit = compiled.get(cacheKey);
  if (hit) return hit;
  let re: RE2JS;
  try {
    re = RE2JS.compile(re2Source(source), (options.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0) | (options.dotAll ? RE2JS.DOTALL : 0));
  } catch (e) {
    throw new PatternSyntaxError((e as Error).message.replace(/^error parsing regexp: /, ''));
  }
  const pattern: TextPattern = options.whole ? { test: (text) => re.testExact(text) } : { test: (text) => re.test(text) };
  // Bounded: patterns come from callers; a full cache starts over rather than growing.
  if (compiled.size >= 500) compiled.clear();
  compiled.set(cacheKey, pattern);
  return pattern;
}

/**
 * The `filter` query parameter of a list route: `undefined` when absent or empty, else the compiled pattern;
 * a pattern RE2 refuses is a 400 `request.invalid` with a field error on `field`.
 */
export function listFilter(filter: string | undefined, field = 'filter'): TextPattern | undefined {
  if (filter === undefined || filter === '') return undefined;
  try {
    // `?filter=a&filter=b` reaches here as a list.
    if (typeof filter !== 'string') throw new PatternSyntaxError('given more than once');
    if (filter.length > MAX_PATTERN_LENGTH) throw new PatternSyntaxError(`longer than ${MAX_PATTERN_LENGTH} characters`);
    return compileTextPattern(filter);
  } catch (e) {
    const reason = e instanceof PatternSyntaxError ? e.message : 'invalid regular expression';
    throw invalid('request.invalid', `${field} must be a regular expression in RE2 syntax (no lookaround or backreferences), at most ${MAX_PATTERN_LENGTH} characters: ${reason}`, { [field]: `invalid regular expression: ${reason}` });
  }
}

/** JavaScript's `\uXXXX` (and a surrogate pair of them) as RE2's `\x{…}`; everything else is left to RE2. */
function re2Source(source: string): string {
  if (!source.includes('\\u')) return source;
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const unit = hex4(source, i + 2);
    if (source[i + 1] === 'u' && unit !== undefined) {
      const low = source.startsWith('\\u', i + 6) ? hex4(source, i + 8) : undefined;
      if (unit >= 0xd800 && unit <= 0xdbff && low !== undefined && low >= 0xdc00 && low <= 0xdfff) {
        out += `\\x{${(((unit - 0xd800) << 10) + (low - 0xdc00) + 0x10000).toString(16)}}`;
        i += 11;
      } else {
        out += `\\x{${unit.toString(16)}}`;
        i += 5;
      }
    } else {
      out += source.slice(i, i + 2);
      i++;
    }
  }
  return out;
}

function hex4(s: string, at: number): number | undefined {
  const digits = s.slice(at, at + 4);
  return /^[0-9a-fA-F]{4}$/.test(digits) ? parseInt(digits, 16) : undefined;
}

/**
 * The same engine for ajv (`new Ajv({ code: { regExp: linearRegExp } })`): a JSON Schema's `pattern` and
 * `patternProperties` come from whoever wrote the schema and run over values the model or a client wrote.
 * RE2 reads by code point, as ajv's `u` flag asks; `code` names it for ajv's standalone output, which the service does not use.
 */
export const linearRegExp = Object.assign((source: string, _unicodeFlag?: string): TextPattern => compileTextPattern(source), { code: 'linearRegExp' });
