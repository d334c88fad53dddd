import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Told when an existing file or directory was readable by others and has been tightened. */
export type PermissionWarning = (message: string, details: { path: string; mode: string }) => void;

const octal = (mode: number): string => (mode & 0o777).toString(8).padStart(4, '0');

/**
 * Creates `dir` (and missing parents) with mode 0700 when it does not exist. Only directories created here
 * are set: an existing one (a mounted volume, a shared parent) is the operator's to set, so it is left as it is.
 * `mkdirSync`'s mode is cut by the umask; the explicit chmod makes the result umask-free.
 */
export function ensurePrivateDir(dir: string): void {
  const target = resolve(dir);
  const missing: string[] = [];
  for (let d = target; !existsSync(d); d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  if (missing.length === 0) return;
  mkdirSync(target, { recursive: true, mode: 0o700 });
  for (const d of missing) chmodSync(d, 0o700);
}

/**
 * Makes `file` readable by its owner only: creates it empty with mode 0600 when missing (before a library
 * opens it with the umask's default), or tightens an existing one readable by group or others and warns.
 */
export function ensurePrivateFile(file: string, warn?: PermissionWarning, create = true): void {
  if (!existsSync(file)) {
    if (!create) return;
    closeSync(openSync(file, 'a', 0o600));
    chmodSync(file, 0o600);
    return;
  }
  const mode = statSync(file).mode;
  if ((mode & 0o077) === 0) return;
  chmodSync(file, 0o600);
  warn?.('a data file was readable by other users; its mode is now 0600', { path: file, mode: octal(mode) });
}
