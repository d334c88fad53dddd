/**
 * PostgreSQL's text and JSONB cannot hold U+0000, which read models do hold (glossary entry ids are `<key>\0<term>`;
 * users' metadata may). Every string crossing into the database is encoded with U+0001 as an escape character:
 * U+0000 → U+0001 U+0001, U+0001 → U+0001 U+0002, everything else as it is. The code is prefix-free and keeps the
 * order of code points (both escapes sort where the characters they stand for sorted, before U+0002), so ids,
 * sorting and range comparisons keep their order; strings without either character are unchanged. What differs:
 * a string holding U+0000 or U+0001 is longer inside the database, which a LIKE `_` would count.
 */
const NEEDS_ENCODING = /[\u0000\u0001]/;
const ENCODED = /\u0001[\u0001\u0002]/g;

export function encodeText(s: string): string {
  return NEEDS_ENCODING.test(s) ? s.replace(/[\u0000\u0001]/g, (c) => (c === '\u0000' ? '\u0001\u0001' : '\u0001\u0002')) : s;
}

export function decodeText(s: string): string {
  return s.includes('\u0001') ? s.replace(ENCODED, (e) => (e === '\u0001\u0001' ? '\u0000' : '\u0001')) : s;
}

function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [f(k), mapStrings(v, f)]));
  }
  return value;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * JSON text for a JSONB parameter. JSON.stringify writes U+0000, U+0001 and lone surrogates as `\u` escapes, so most
 * values need one scan. JSONB refuses a lone surrogate (JSON from a client may hold one): it becomes U+FFFD, as it does
 * in every text parameter (UTF-8 has no form for it), instead of failing the batch.
 */
export function toJsonb(value: unknown): string {
  const json = JSON.stringify(value);
  return /\\u000[01]|\\ud[89a-f]/.test(json) ? JSON.stringify(mapStrings(value, (t) => encodeText(t.replace(LONE_SURROGATE, '\uFFFD')))) : json;
}

/** A JSONB value read as text (`doc::text`); PostgreSQL writes U+0001 as `\u0001`, so only such text is walked. */
export function fromJsonb<T>(text: string): T {
  const value: unknown = JSON.parse(text);
  return (text.includes('\\u0001') ? mapStrings(value, decodeText) : value) as T;
}
