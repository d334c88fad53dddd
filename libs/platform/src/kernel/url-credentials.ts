/**
 * `scheme://user[:password]@` in a URL or anywhere in a text: the userinfo runs to the last `@` before the host
 * (a password may hold one) and stops at a path, query, fragment, space or quote, so `?mail=a@b` is not userinfo.
 */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#"]*@/gi;

/** Whether a URL (or a text holding one) carries credentials in its userinfo. */
export function hasUrlCredentials(text: string): boolean {
  USERINFO.lastIndex = 0;
  return USERINFO.test(text);
}

/** The text with every URL's userinfo shown as `****:****@`. */
export function maskUrlCredentials(text: string): string {
  return text.replace(USERINFO, '$1****:****@');
}
