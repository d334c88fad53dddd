// The PostgreSQL server of the `postgres` bench (issue 47): POSTGRES_URL when set, otherwise a throwaway cluster of
// Debian's server binaries, as test/support/postgres-cluster.js starts for jest. Copied (the minimum) rather than
// imported: the build compiles bench/ without test/ (tsconfig.build.json), and the tests' cluster runs with fsync off,
// while a benchmark of a durable log must pay for its flushes: this one runs fsync, synchronous_commit and
// full_page_writes on (PostgreSQL's defaults).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

export interface BenchPostgres {
  /** Where the server is, for a report: host and port, never the user or password. */
  readonly where: string;
  /** The durability settings the server runs with (SHOW fsync, synchronous_commit, full_page_writes, wal_sync_method). */
  readonly settings: Record<string, string>;
  /** A fresh database (its URL), dropped by `drop`. */
  database(label: string): Promise<{ readonly url: string; drop(): Promise<void> }>;
  close(): Promise<void>;
}

const SERVER_SETTINGS = ['fsync=on', 'synchronous_commit=on', 'full_page_writes=on', 'max_connections=200', 'shared_buffers=128MB'];

/** POSTGRES_URL's server, or a throwaway cluster (removed by `close`) when it is unset. */
export async function benchPostgres(): Promise<BenchPostgres> {
  if (process.env.POSTGRES_URL) return onServer(process.env.POSTGRES_URL, async () => undefined);
  const cluster = startCluster();
  let removed = false;
  const remove = (): void => {
    if (removed) return;
    removed = true;
    removeCluster(cluster.bin, cluster.dir);
  };
  // A bench that throws, or is interrupted, still stops its server and removes its files.
  process.once('exit', remove);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  try {
    return await onServer(cluster.url, async () => remove());
  } catch (e) {
    remove();
    throw e;
  }
}

async function onServer(url: string, close: () => Promise<void>): Promise<BenchPostgres> {
  const admin = async <T>(fn: (c: Client) => Promise<T>): Promise<T> => {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  const settings = await admin(async (c) => {
    const out: Record<string, string> = {};
    for (const name of ['fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'server_version']) out[name] = (await c.query(`SHOW ${name}`)).rows[0][name];
    return out;
  });
  const u = new URL(url);
  return {
    where: `${u.hostname}:${u.port || 5432}`,
    settings,
    async database(label) {
      const name = `bench_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase().slice(0, 30)}_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
      await admin((c) => c.query(`CREATE DATABASE "${name}"`));
      const at = new URL(url);
      at.pathname = `/${name}`;
      return { url: at.toString(), drop: async () => void (await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))) };
    },
    close,
  };
}

function postgresBin(): string {
  if (process.env.POSTGRES_BIN && existsSync(join(process.env.POSTGRES_BIN, 'initdb'))) return process.env.POSTGRES_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (!versions.length) throw new Error('the postgres bench needs POSTGRES_URL or PostgreSQL installed (apt-get install postgresql)');
  return join(root, versions[0], 'bin');
}

const asRoot = (): boolean => process.getuid?.() === 0;

/** Runs a server binary as the cluster's owner (`postgres` when we are root: initdb refuses root). */
function run(bin: string, name: string, args: string[]): void {
  const [cmd, full] = asRoot() ? ['runuser', ['-u', 'postgres', '--', join(bin, name), ...args]] : [join(bin, name), args];
  execFileSync(cmd, full, { stdio: 'pipe' });
}

function startCluster(): { bin: string; dir: string; url: string } {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'bench-pg-'));
  chmodSync(dir, 0o700);
  const password = randomUUID();
  const pwfile = `${dir}.pw`;
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  try {
    if (asRoot()) {
      const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
      chownSync(dir, id('-u'), id('-g'));
      chownSync(pwfile, id('-u'), id('-g'));
    }
    run(bin, 'initdb', ['-D', dir, '-U', 'bench', `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--no-sync', '--locale=C']);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  } finally {
    rmSync(pwfile, { force: true });
  }
  const port = freePortSync();
  const options = ['-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', ...SERVER_SETTINGS.flatMap((s) => ['-c', s])];
  try {
    run(bin, 'pg_ctl', ['-D', dir, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', options.join(' '), 'start']);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return { bin, dir, url: `postgres://bench:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres` };
}

function removeCluster(bin: string, dir: string): void {
  try {
    if (existsSync(join(dir, 'postmaster.pid'))) run(bin, 'pg_ctl', ['-D', dir, '-m', 'immediate', '-w', '-t', '60', 'stop']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A free port on 127.0.0.1, asked of the OS by a throwaway listener in a child (pg_ctl's start is synchronous too). */
function freePortSync(): number {
  const out = execFileSync(process.execPath, ['-e', "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"]);
  return Number(out.toString().trim());
}

