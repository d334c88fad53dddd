/**
 * Query-string parameters whose name suggests a credential, whatever its exact spelling (`api-key`,
 * `x_api_key`, `Authorization`, `password`, `jwt`, `client_secret`, `sessionToken`, …).
 */
const CREDENTIAL_NAME = /key|token|secret|pass|pwd|auth|jwt|cred|session|sig|cookie|bearer/i;
/** Values that look like a credential under any name: our keys, JWTs, and `Bearer`/`Basic` values. */
const CREDENTIAL_VALUE = /^(?:z[uqw]t_|eyJ|Bearer(?:\s|\+|%20)|Basic(?:\s|\+|%20))/i;

/**
 * The URL as it may be logged: the value of every query parameter that names or looks like a credential is
 * replaced by `****`. Decided by pattern rather than by a list of names, since callers put keys under names
 * no list anticipates. Linear in the length of the URL.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const name = safeDecode(pair.slice(0, eq));
      const value = safeDecode(pair.slice(eq + 1));
      return CREDENTIAL_NAME.test(name) || CREDENTIAL_VALUE.test(value) ? `${pair.slice(0, eq)}=****` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}
