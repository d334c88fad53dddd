import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const buildsDir = join(root, '.test-build');
const SOURCES = ['apps', 'libs', 'projections'];
const LOCK_STALE_MS = 5 * 60_000;
const WAIT_MS = 180_000;

/**
 * The service's sources compiled once for the processes and threads tests start (`.test-build/<key>/`, git-ignored), where
 * ts-node transpiled ~650 files at every start: 8.2 s against 1.9 s to load the app, and each thread of such a
 * process (writer, ranking, graph, extraction) loaded ts-node again. Keyed by the sources' newest modification and
 * count, so an edit makes the next start build afresh; built by one jest worker while the others wait on a lock
 * directory; emitted without type checks (`--noCheck`: `npm run typecheck` checks types once, up front).
 * Returns the compiled twin of `entry` (a path under the repository, `.ts`), or undefined when the build failed:
 * the caller runs the sources through ts-node as before.
 */
function compiledEntry(entry: string): string | undefined {
  const dir = compiledDir();
  const js = dir && join(dir, entry.replace(/\.ts$/, '.js'));
  return js && existsSync(js) ? js : undefined;
}

/**
 * Node's arguments to run `entry` (a `.ts` path under the repository): its compiled twin, or the source through ts-node
 * (transpile only, with tsconfig-paths) after `preload` modules, which patch the sources and so always take ts-node.
 */
export function entryArgs(entry: string, preload: readonly string[] = []): string[] {
  const compiled = preload.length === 0 ? compiledEntry(entry) : undefined;
  return compiled ? [compiled] : ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', ...preload.flatMap((p) => ['-r', p]), join(root, entry)];
}

/** The directory of the current sources' build (made if missing), mirroring the repository's; undefined if it failed. */
export function compiledDir(): string | undefined {
  // Looked up once per test file (its module registry): a file starts many threads, and the sources do not move meanwhile.
  key ??= sourcesKey();
  const dir = join(buildsDir, key);
  const compiled = (): string | undefined => (existsSync(join(dir, 'complete')) ? dir : undefined);
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const done = compiled();
    if (done) return done;
    if (existsSync(join(dir, 'failed'))) return undefined;
    if (takeLock(dir)) {
      try {
        if (!compiled()) build(dir);
      } catch (e) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'failed'), String(e));
        return undefined;
      } finally {
        rmSync(`${dir}.lock`, { recursive: true, force: true });
      }
      return compiled();
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
  }
  return undefined;
}

let key: string | undefined;

function sourcesKey(): string {
  let newest = 0;
  let count = 0;
  for (const top of SOURCES) {
    for (const file of readdirSync(join(root, top), { recursive: true }) as string[]) {
      if (!file.endsWith('.ts') && !file.endsWith('.mjs') && !file.endsWith('.py')) continue;
      newest = Math.max(newest, statSync(join(root, top, file)).mtimeMs);
      count++;
    }
  }
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json']) newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  return `${Math.floor(newest)}-${count}`;
}

function takeLock(dir: string): boolean {
  mkdirSync(buildsDir, { recursive: true });
  try {
    mkdirSync(`${dir}.lock`);
    return true;
  } catch {
    // A worker that died while building leaves its lock: taken over once it is old.
    try {
      if (Date.now() - statSync(`${dir}.lock`).mtimeMs > LOCK_STALE_MS) rmSync(`${dir}.lock`, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
    return false;
  }
}

/** `npm run build`'s service steps (scripts/build-service.js, not the console) into a directory of its own, then swapped in. */
function build(dir: string): void {
  const staging = `${dir}.staging`;
  rmSync(staging, { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'scripts', 'build-service.js'), '--outDir', staging, '--noCheck'], { cwd: root, stdio: 'pipe' });
  writeFileSync(join(staging, 'complete'), new Date().toISOString());
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  // Builds of older sources are left to no one: removed, except any a running process may still load from.
  for (const old of readdirSync(buildsDir)) {
    const path = join(buildsDir, old);
    if (path !== dir && !old.endsWith('.lock') && Date.now() - statSync(path).mtimeMs > 60 * 60_000) rmSync(path, { recursive: true, force: true });
  }
}
