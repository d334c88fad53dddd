// jest globalSetup/globalTeardown (issue 47): one PostgreSQL cluster for the whole run, so the PostgreSQL contract
// suites run wherever the server binaries are installed (CI installs Debian's postgresql: they never skip there).
// POSTGRES_URL set by the caller wins (an operator's own server). The tests read it as ARS_TEST_POSTGRES_URL and
// POSTGRES_URL is removed from the environment: the services e2e tests start (in process or as children) would
// otherwise all put their logs in one shared database. Each test file makes a database of its own
// (test/support/postgres.ts). REQUIRE_POSTGRES=1 (.ci/run) turns "not installed" into a failure instead of a skip.
const { postgresBin, initCluster, startCluster, removeCluster, freePort } = require('./postgres-cluster');

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
  const cluster = initCluster({ prefix: 'ars-jest-pg-' });
  const url = startCluster(cluster, freePort());
  globalThis.__postgresCluster = cluster;
  // The workers jest starts after this inherit the environment.
  process.env.ARS_TEST_POSTGRES_URL = url;
};

module.exports.teardown = async function teardown() {
  if (globalThis.__postgresCluster) removeCluster(globalThis.__postgresCluster);
};
