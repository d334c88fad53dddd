// A throwaway PostgreSQL cluster for tests (issue 47): Debian's server binaries (`initdb`, `pg_ctl`, `postgres`),
// a data directory under the system temp dir, password (SCRAM) authentication, fsync off (a test cluster loses
// nothing that matters to a machine crash; commits stay synchronous, so a server killed with `-m immediate` keeps
// every acknowledged one). As root, the binaries run as the `postgres` user (initdb refuses root).
// Plain CommonJS so that jest's globalSetup (not transformed) and the TypeScript tests share it.
const { execFileSync } = require('node:child_process');
const { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/** The directory of the server binaries, or undefined when PostgreSQL is not installed. */
function postgresBin() {
  if (process.env.POSTGRES_BIN && existsSync(join(process.env.POSTGRES_BIN, 'initdb'))) return process.env.POSTGRES_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0], 'bin') : undefined;
}

const asRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a server binary as the cluster's owner (`postgres` when we are root). */
function command(bin, name, args) {
  return asRoot() ? ['runuser', ['-u', 'postgres', '--', join(bin, name), ...args]] : [join(bin, name), args];
}

function ownerIds() {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

/**
 * Creates a cluster's data directory (not started). `user`/`password` own it. Returns `{ dir, user, password }`.
 * `listen` is the address the server listens on (127.0.0.1 unless a test host's address is given); host auth is
 * SCRAM for every TCP client.
 */
function initCluster({ user = 'ars', password = 'ars-test-password', listen = '127.0.0.1', prefix = 'ars-pg-' } = {}) {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o700);
  const pwfile = join(dir, '..', `${dir.split('/').pop()}.pw`);
  writeFileSync(pwfile, password + '\n', { mode: 0o600 });
  if (asRoot()) {
    const { uid, gid } = ownerIds();
    chownSync(dir, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  try {
    const [cmd, args] = command(bin, 'initdb', ['-D', dir, '-U', user, `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--no-sync', '--locale=C']);
    execFileSync(cmd, args, { stdio: 'pipe' });
  } finally {
    rmSync(pwfile, { force: true });
  }
  // Any address may connect with the password (the test hosts of the multi-host suite are on their own subnet).
  writeFileSync(join(dir, 'pg_hba.conf'), 'local all all trust\nhost all all 0.0.0.0/0 scram-sha-256\n');
  return { bin, dir, user, password, listen };
}

/** The arguments `postgres` runs with: the socket in the data dir, a test's settings. */
function serverOptions(cluster, port) {
  return [
    '-p', String(port),
    '-k', cluster.dir,
    '-c', `listen_addresses=${cluster.listen}`,
    '-c', 'fsync=off',
    '-c', 'full_page_writes=off',
    '-c', 'max_connections=200',
    '-c', 'shared_buffers=64MB',
  ];
}

/** Starts the cluster with `pg_ctl -w` (waits until it accepts connections). `wrap` runs it inside a namespace. */
function startCluster(cluster, port, wrap = []) {
  const [cmd, args] = command(cluster.bin, 'pg_ctl', ['-D', cluster.dir, '-l', join(cluster.dir, 'server.log'), '-w', '-t', '60', '-o', serverOptions(cluster, port).join(' '), 'start']);
  const full = [...wrap, cmd, ...args];
  execFileSync(full[0], full.slice(1), { stdio: 'pipe' });
  cluster.port = port;
  return `postgres://${encodeURIComponent(cluster.user)}:${encodeURIComponent(cluster.password)}@${cluster.listen}:${port}/postgres`;
}

/** Stops it: `fast` (disconnects clients, clean shutdown) or `immediate` (as a crash: recovery at the next start). */
function stopCluster(cluster, mode = 'fast') {
  if (!existsSync(join(cluster.dir, 'postmaster.pid'))) return;
  const [cmd, args] = command(cluster.bin, 'pg_ctl', ['-D', cluster.dir, '-m', mode, '-w', '-t', '60', 'stop']);
  try {
    execFileSync(cmd, args, { stdio: 'pipe' });
  } catch {
    // Already stopped.
  }
}

function removeCluster(cluster) {
  stopCluster(cluster, 'immediate');
  rmSync(cluster.dir, { recursive: true, force: true });
}

/** A free TCP port on 127.0.0.1 (asked of the OS by a throwaway listener, synchronously through a child). */
function freePort() {
  const out = execFileSync(process.execPath, ['-e', "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"]);
  return Number(out.toString().trim());
}

/** Creates a database named `name` on the cluster at `url` (a fresh one per test file), through psql-free SQL. */
async function createDatabase(url, name) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

module.exports = { postgresBin, initCluster, startCluster, stopCluster, removeCluster, freePort, createDatabase };
