import { randomBytes } from 'node:crypto';
import { havePostgres, testDatabase } from './support/postgres';
import { scratchDir } from './support/scratch-dir';
import { spawnService, ServiceProcess } from './support/service-process';

/**
 * Issue 47: two service processes as on two hosts, each with a DATA_DIR of its own, share PostgreSQL (the log, and
 * their rate limits): the limits count there, so together they allow the limit, not twice it (on SQLite each `--role=all` process would count
 * in memory alone). Both start only because they are given the keys every host must share.
 */
const KEY = 'zut_test_bootstrap_key_0123456789abcdef';
const PER_CREDENTIAL = 12;
const suite = havePostgres('rate limits across hosts on PostgreSQL') ? describe : describe.skip;

suite('rate limits of two hosts on one PostgreSQL', () => {
  const processes: ServiceProcess[] = [];
  let hosts: ServiceProcess[];
  let passedWhileStarting = 0;

  const get = async (host: ServiceProcess, key: string) => (await fetch(`${host.url}/v2/corpora`, { headers: { 'x-api-key': key } })).status;

  beforeAll(async () => {
    const url = (await testDatabase('rate_hosts'))!;
    // The same keys on every host (the owner key's digest is keyed by SECRETS_KEY: a host with another could not check it).
    const shared = { OAUTH_SIGNING_KEY: randomBytes(32).toString('base64'), SECRETS_KEY: randomBytes(32).toString('hex') };
    const env = (dataDir: string) => ({
      DATA_DIR: dataDir,
      POSTGRES_URL: url,
      ADMIN_API_KEY: KEY,
      ...shared,
      SQLITE_SYNCHRONOUS: 'NORMAL',
      RATE_LIMIT_PER_MINUTE: String(PER_CREDENTIAL),
      // The 401s while a host's projections catch up with the owner key count as failures of this address: not the subject here.
      AUTH_FAILURES_PER_MINUTE: '100000',
      LAMBDA_SNAPSHOT_AT_START: 'false',
    });
    hosts = await Promise.all([spawnService(env(scratchDir('ars-host-a-')), 60_000), spawnService(env(scratchDir('ars-host-b-')), 60_000)]);
    processes.push(...hosts);
    // Each host's owner key works once its own projections show it: one request of the credential each.
    for (const host of hosts) {
      for (const deadline = Date.now() + 30_000; ; ) {
        const status = await get(host, KEY);
        if (status === 200) {
          passedWhileStarting++;
          break;
        }
        expect(status).toBe(401);
        if (Date.now() > deadline) throw new Error('the owner key never worked');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }, 150_000);

  afterAll(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
  });

  it('allows a credential its limit across both hosts, not the limit on each', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3 * PER_CREDENTIAL; i++) {
      const status = await get(hosts[i % 2], KEY);
      if (status === 429) break;
      statuses.push(status);
    }
    expect(statuses).toEqual(Array(PER_CREDENTIAL - passedWhileStarting).fill(200));
    expect(await get(hosts[0], KEY)).toBe(429);
    expect(await get(hosts[1], KEY)).toBe(429);
  });
});
