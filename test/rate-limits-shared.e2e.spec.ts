import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnService, ServiceProcess } from './support/service-process';

/**
 * Issue 20: rate limits count in a store every process on the data dir shares (DATA_DIR/rate-limits.db), so two API
 * processes together allow the limit, not twice it: per credential, and for failed authentications per address.
 */

const KEY = 'zut_test_bootstrap_key_0123456789abcdef';
const PER_CREDENTIAL = 10;
const FAILURES = 40;

describe('rate limits shared by two API processes on one data dir', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ars-rate-'));
  const env = { DATA_DIR: dataDir, ADMIN_API_KEY: KEY, SQLITE_SYNCHRONOUS: 'NORMAL', RATE_LIMIT_PER_MINUTE: String(PER_CREDENTIAL), AUTH_FAILURES_PER_MINUTE: String(FAILURES) };
  const processes: ServiceProcess[] = [];
  let apis: ServiceProcess[];
  /** 401s from the address while waiting for the owner key to show: they count as failures too. */
  let failuresWhileStarting = 0;

  const get = async (api: ServiceProcess, key: string) => (await fetch(`${api.url}/v2/corpora`, { headers: { 'x-api-key': key } })).status;
  /** Calls the two processes in turn until one answers 429; the statuses before it. */
  const untilLimited = async (key: string, max: number): Promise<number[]> => {
    const statuses: number[] = [];
    for (let i = 0; i < max; i++) {
      const status = await get(apis[i % 2], key);
      if (status === 429) return statuses;
      statuses.push(status);
    }
    return statuses;
  };

  beforeAll(async () => {
    // The worker creates the store and the owner and runs the projections; the API processes only answer.
    processes.push(await spawnService(env, 45_000, [], ['--role=worker']));
    apis = await Promise.all([spawnService(env, 45_000, [], ['--role=api']), spawnService(env, 45_000, [], ['--role=api'])]);
    processes.push(...apis);
    for (const deadline = Date.now() + 20_000; ; ) {
      const status = await get(apis[0], KEY);
      if (status === 200) break;
      expect(status).toBe(401);
      failuresWhileStarting++;
      if (Date.now() > deadline) throw new Error('the owner key never worked');
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 90_000);

  afterAll(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('allows a credential its limit across both processes, not the limit in each', async () => {
    const statuses = await untilLimited(KEY, 3 * PER_CREDENTIAL);
    // One request of the credential already passed: the one that found the owner key working.
    expect(statuses).toEqual(Array(PER_CREDENTIAL - 1).fill(200));
    expect(await get(apis[0], KEY)).toBe(429);
    expect(await get(apis[1], KEY)).toBe(429);
  });

  it('counts failed authentications from one address across both processes', async () => {
    const statuses = await untilLimited('zqt_aky_1_wrongwrongwrongwrongwrong', 3 * FAILURES);
    expect(statuses).toEqual(Array(FAILURES - failuresWhileStarting).fill(401));
  });
});
