import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { serviceEnv } from './common';

/** The repository (this file runs from dist/bench once built). */
export const ROOT = [resolve(__dirname, '..', '..'), resolve(__dirname, '..')].find((r) => existsSync(join(r, 'bench', 'peers', 'package.json')))!;
const PEERS = join(ROOT, 'bench', 'peers');

/** A server the bench started in a process of its own, on a fresh data directory. */
export interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly dir: string;
  /** The peer's first line (its pragmas and versions); the service's log lines. */
  readonly info: Record<string, unknown>;
}

/**
 * The peer's packages, installed on first use into bench/peers/node_modules from its own lockfile (never by the root
 * `npm ci`: LangGraph is no dependency of the service). better-sqlite3 builds from source there: about a minute.
 */
export function ensurePeerInstalled(): void {
  if (existsSync(join(PEERS, 'node_modules', '@langchain', 'langgraph', 'package.json'))) return;
  process.stdout.write('installing the LangGraph peer into bench/peers/node_modules (once)…\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const ran = spawnSync(npm, ['ci', '--prefix', PEERS, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  if (ran.status !== 0) throw new Error(`npm ci --prefix bench/peers failed (${ran.status ?? ran.signal})`);
}

/** Starts `args` with node and resolves once `ready` finds its line in the output (stdout and stderr). */
function startProcess(args: string[], cwd: string, env: NodeJS.ProcessEnv, ready: (line: string) => Record<string, unknown> | undefined, timeoutMs: number) {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const info = new Promise<Record<string, unknown>>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`${args.join(' ')} did not start:\n${output.slice(-20).join('\n')}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        if (output.length < 200) output.push(line);
        const found = ready(line);
        if (found) {
          clearTimeout(timer);
          ok(found);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => fail(new Error(`${args.join(' ')} exited with ${code}:\n${output.slice(-20).join('\n')}`)));
  });
  return { child, info, output };
}

const parsed = (line: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

/**
 * A built service (`dist`/apps/main.js, run from the directory above it) in its own process on a fresh data directory, the event log at the
 * synchronous level asked (FULL, the service's default), logs at info only to see it start and its default encoder
 * load: that load takes a core for seconds, so the bench waits for it before measuring anything.
 */
export async function startService(apiKey: string, synchronous: string, dist: string): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-vs-langgraph-ours-'));
  const env = {
    ...process.env,
    DATA_DIR: dir,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_API_KEY: apiKey,
    LOG_LEVEL: 'info',
    SQLITE_SYNCHRONOUS: synchronous,
    // No lambda snapshot made in the background while the turns are measured.
    LAMBDA_SNAPSHOT_AT_START: 'false',
    RATE_LIMIT_PER_MINUTE: '10000000',
    RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000',
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    OUTBOUND_TOOLS_ALLOWED_HOSTS: '127.0.0.1',
    OUTBOUND_PIPELINES_ALLOWED_HOSTS: '127.0.0.1',
    ...serviceEnv(),
  };
  const main = join(dist, 'apps', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run through npm run bench (it builds first)`);
  let started: Record<string, unknown> | undefined;
  let startedAt = 0;
  const p = startProcess([main], resolve(dist, '..'), env, (line) => {
    const entry = parsed(line);
    if (entry?.msg === 'service started') {
      started = entry;
      startedAt = Date.now();
    }
    // Started, and the default encoder loaded (or failed to, or there is none to load).
    if (started && (entry?.msg === 'default encoder loaded' || String(entry?.msg ?? '').startsWith('default encoder failed'))) return started;
    return undefined;
  }, 90_000);
  const fallback = new Promise<Record<string, unknown>>((ok) => {
    const poll = setInterval(() => {
      // No encoder line 20 s after the start line: the service has none to load.
      if (started && Date.now() - startedAt > 20_000) {
        clearInterval(poll);
        ok(started);
      }
    }, 500);
    p.child.once('exit', () => clearInterval(poll));
  });
  const info = await Promise.race([p.info, fallback]);
  return { child: p.child, url: `http://127.0.0.1:${String(info.port)}`, dir, info };
}

/** The LangGraph peer (bench/peers/langgraph-server.mjs) on a fresh checkpoint file: `FULL` or `installed`. */
export async function startPeer(synchronous: 'FULL' | 'installed', modelBaseUrl: string): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), `bench-vs-langgraph-peer-${synchronous.toLowerCase()}-`));
  const env = { ...process.env, PEER_DB: join(dir, 'checkpoints.db'), PEER_SYNCHRONOUS: synchronous, MODEL_BASE_URL: modelBaseUrl };
  const p = startProcess([join(PEERS, 'langgraph-server.mjs')], PEERS, env, (line) => {
    const entry = parsed(line);
    return entry && typeof entry.listening === 'number' ? entry : undefined;
  }, 60_000);
  const info = await p.info;
  return { child: p.child, url: `http://127.0.0.1:${String(info.listening)}`, dir, info };
}

export async function stop(s: Started): Promise<void> {
  const gone = new Promise((ok) => (s.child.exitCode !== null ? ok(undefined) : s.child.once('exit', ok)));
  s.child.kill('SIGTERM');
  await Promise.race([gone, new Promise((ok) => setTimeout(ok, 10_000))]);
  s.child.kill('SIGKILL');
  rmSync(s.dir, { recursive: true, force: true });
}

/** Whether strace can be used to count a process's fsyncs. */
export function straceAvailable(): boolean {
  try {
    execFileSync('strace', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The fsync and fdatasync calls `pid` (all its threads) makes while `during` runs, by file name: a durable commit
 * of SQLite in WAL mode at synchronous=FULL is one sync of its -wal file (a checkpoint adds syncs of the database
 * file). Counted from the outside, so the count holds whatever the service's code does. strace slows the process:
 * this runs apart from the timed phases.
 */
export async function countSyncs(pid: number, during: () => Promise<void>): Promise<Record<string, number>> {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-vs-langgraph-strace-')), 'syncs.txt');
  const tracer = spawn('strace', ['-f', '-y', '-qq', '-e', 'trace=fsync,fdatasync', '-o', out, '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  const errors: string[] = [];
  tracer.stderr!.on('data', (c: Buffer) => errors.push(String(c)));
  const exited = new Promise<number | null>((ok) => tracer.once('exit', ok));
  // strace attaches to every thread before it reports anything; give it that time (it prints nothing with -qq).
  await new Promise((ok) => setTimeout(ok, 1_000));
  if (tracer.exitCode !== null) throw new Error(`strace failed: ${errors.join('')}`);
  try {
    await during();
    // Let what a turn set off after its answer (projections, a lease's release) land in the count.
    await new Promise((ok) => setTimeout(ok, 1_000));
  } finally {
    tracer.kill('SIGINT');
    await exited;
  }
  const counts: Record<string, number> = {};
  for (const line of readFileSync(out, 'utf8').split('\n')) {
    const m = /\b(?:fsync|fdatasync)\(\d+<([^>]*)>\)/.exec(line);
    if (m) counts[basename(m[1])] = (counts[basename(m[1])] ?? 0) + 1;
  }
  rmSync(join(out, '..'), { recursive: true, force: true });
  return counts;
}
