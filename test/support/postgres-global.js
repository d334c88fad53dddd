// jest globalSetup/globalTeardown (issue 47): one PostgreSQL cluster for the whole run, so the PostgreSQL contract
// suites run wherever the server binaries are installed (CI installs Debian's postgresql: they never skip there).
// POSTGRES_URL set by the caller wins (an operator's own server). The tests read it as ARS_TEST_POSTGRES_URL and
// POSTGRES_URL is removed from the environment: the services e2e tests start (in process or as children) would
// otherwise all put their logs in one shared database. Each test file makes a database of its own
// (test/support/postgres.ts). REQUIRE_POSTGRES=1 (.ci/run) turns "not installed" into a failure instead of a skip.
const { existsSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { postgresBin, initCluster, startCluster, removeCluster, freePort } = require('./postgres-cluster');

/** Clusters of earlier runs whose jest died before its teardown (killed, interrupted): stopped and removed. */
function sweepOrphans() {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith('ars-jest-pg-')) continue;
    const dir = join(tmpdir(), name);
    const ownerFile = join(dir, '..', `${name}.owner`);
    // No owner file: not made by this code (or being made right now): left alone.
    if (!existsSync(ownerFile)) continue;
    const owner = Number(readFileSync(ownerFile, 'utf8'));
    let alive = false;
    try {
      if (owner > 0) alive = (process.kill(owner, 0), true);
    } catch {
      alive = false;
    }
    if (alive) continue;
    try {
      removeCluster({ bin: postgresBin(), dir });
    } catch {
      // Not ours to remove (permissions): leave it.
    }
    require('node:fs').rmSync(ownerFile, { force: true });
  }
}

module.exports = async function setup() {
  if (process.env.POSTGRES_URL) {
    process.env.ARS_TEST_POSTGRES_URL = process.env.POSTGRES_URL;
    delete process.env.POSTGRES_URL;
    return;
  }
  if (!postgresBin()) {
    if (process.env.REQUIRE_POSTGRES === '1') throw new Error('REQUIRE_POSTGRES=1 but PostgreSQL is not installed (apt-get install postgresql)');
    return;
  }
  sweepOrphans();
  const cluster = initCluster({ prefix: 'ars-jest-pg-' });
  writeFileSync(join(cluster.dir, '..', `${cluster.dir.split('/').pop()}.owner`), String(process.pid));
  const url = startCluster(cluster, freePort());
  globalThis.__postgresCluster = cluster;
  // The workers jest starts after this inherit the environment.
  process.env.ARS_TEST_POSTGRES_URL = url;
};

module.exports.teardown = async function teardown() {
  const cluster = globalThis.__postgresCluster;
  if (!cluster) return;
  removeCluster(cluster);
  require('node:fs').rmSync(join(cluster.dir, '..', `${cluster.dir.split('/').pop()}.owner`), { force: true });
};
