import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONSOLE_ENTRY } from '../../apps/api/src/console/console-assets';
import { scratchDir } from './scratch-dir';

/**
 * A stand-in for a built console (a page and an empty bundle), for tests that call the console's routes but
 * not its pages: without a build (`npm test` runs no build) those routes answer 503.
 */
export function fakeConsoleDir(): string {
  const dir = scratchDir('ars-console-fake-');
  mkdirSync(join(dir, 'assets'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
  writeFileSync(join(dir, CONSOLE_ENTRY), '');
  return dir;
}
