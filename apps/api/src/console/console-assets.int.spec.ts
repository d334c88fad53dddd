import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONSOLE_ENTRY, consoleDir, consoleFile } from './console-assets';

describe('console assets', () => {
  let root: string;
  let built: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'console-assets-'));
    built = join(root, 'console');
    mkdirSync(join(built, 'assets'), { recursive: true });
    writeFileSync(join(built, 'index.html'), '<!doctype html>');
    writeFileSync(join(built, CONSOLE_ENTRY), 'void 0');
    writeFileSync(join(root, 'secret.json'), '{"key":"zut_x"}');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('serves the page for the root and for paths without an extension, assets with their content type', () => {
    expect(consoleFile(built, '')?.type).toBe('text/html; charset=utf-8');
    expect(consoleFile(built, 'corpora/notes')?.body.toString()).toBe('<!doctype html>');
    expect(consoleFile(built, 'assets/console.js')?.type).toBe('text/javascript; charset=utf-8');
  });

  it('serves nothing outside its directory, nothing missing, and no file type it does not know', () => {
    expect(consoleFile(built, '../secret.json')).toBeUndefined();
    expect(consoleFile(built, 'assets/../../secret.json')).toBeUndefined();
    expect(consoleFile(built, '..%2fsecret.json')).toBeUndefined();
    expect(consoleFile(built, 'assets/missing.js')).toBeUndefined();
    writeFileSync(join(built, 'notes.txt'), 'x');
    expect(consoleFile(built, 'notes.txt')).toBeUndefined();
  });

  it('finds a built console by CONSOLE_DIR and ignores a directory without the bundle', () => {
    expect(consoleDir({ CONSOLE_DIR: built })).toBe(built);
    expect(consoleDir({ CONSOLE_DIR: root })).toBeUndefined();
  });
});
