import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';

/** The file whose presence marks a directory as a built console (the source folder holds no bundle). */
export const CONSOLE_ENTRY = 'assets/console.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/**
 * The console only talks to this origin's `/v2/...` routes: no inline script or style, nothing from another
 * origin, not framable. `blob:` images are document images fetched with the caller's key (an `<img src>` to the
 * API could not send the key header).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Where the built console is: `CONSOLE_DIR` when set, else `dist/console` beside the compiled service (`npm
 * run build`) or, when running from source (tests, ts-node), the repository's `dist/console`.
 */
export function consoleDir(env: Readonly<Record<string, string | undefined>>, here = __dirname): string | undefined {
  const candidates = env.CONSOLE_DIR ? [env.CONSOLE_DIR] : [join(here, '../../../../console'), join(here, '../../../../dist/console')];
  return candidates.find((dir) => existsSync(join(dir, CONSOLE_ENTRY)));
}

export interface ConsoleFile {
  readonly body: Buffer;
  readonly type: string;
}

/**
 * The file a console path names, or index.html for a path without an extension (the console routes in its
 * URL hash, but a reload of `/console/` or a bookmarked `/console/corpora` still gets the page). Undefined
 * for an asset that does not exist or a path that climbs out of the directory.
 */
export function consoleFile(dir: string, path: string): ConsoleFile | undefined {
  const clean = normalize(`/${path}`).replace(/^[/\\]+/, '');
  const file = clean === '' || extname(clean) === '' ? 'index.html' : clean;
  const full = join(dir, file);
  if (!full.startsWith(dir.endsWith(sep) ? dir : dir + sep)) return undefined;
  const type = TYPES[extname(file)];
  if (!type || !existsSync(full) || !statSync(full).isFile()) return undefined;
  return { body: readFileSync(full), type };
}
