import { Pool } from 'pg';
import { havePostgres, testDatabase } from '../../test/support/postgres';
import { postgresRateLimits } from './rate-limits';

/**
 * Issue 47: API processes on different hosts (each its own DATA_DIR) count their rate limits in PostgreSQL. Two pools
 * stand for two processes: together they allow the limit, not twice it.
 */
const suite = havePostgres('PostgreSQL rate limits') ? describe : describe.skip;

suite('postgresRateLimits', () => {
  const pools: Pool[] = [];
  const closers: (() => void)[] = [];
  let url: string;

  const process_ = async () => {
    const pool = new Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5_000 });
    pools.push(pool);
    const shared = await postgresRateLimits(pool);
    closers.push(shared.close);
    return shared.limits;
  };
  /** Whether a consume passed (a rejection with a RateLimiterRes means limited). */
  const passed = (p: Promise<unknown>) =>
    p.then(
      () => true,
      (e: unknown) => {
        if (e instanceof Error) throw e;
        return false;
      },
    );

  beforeAll(async () => {
    url = (await testDatabase('rate_limits'))!;
  });

  afterAll(async () => {
    for (const close of closers) close();
    await Promise.all(pools.map((p) => p.end()));
  });

  it('makes its table before the first count, so the first request is counted in PostgreSQL', async () => {
    const limits = await process_();
    const res = await limits('first', 5, 60).consume('key-1');
    expect(res.remainingPoints).toBe(4);
    const row = await pools[0].query('SELECT key, points FROM rate_limits WHERE key = $1', ['first:key-1']);
    expect(row.rows).toEqual([{ key: 'first:key-1', points: 1 }]);
  });

  it('two processes on one database together allow the limit, not twice it (in turn and at once)', async () => {
    const [a, b] = [await process_(), await process_()];
    const [la, lb] = [a('api', 10, 60), b('api', 10, 60)];
    const inTurn: boolean[] = [];
    for (let i = 0; i < 30; i++) inTurn.push(await passed((i % 2 ? la : lb).consume('cred-1')));
    expect(inTurn.filter(Boolean)).toHaveLength(10);
    expect(inTurn.slice(0, 10).every(Boolean)).toBe(true);

    const atOnce = await Promise.all(Array.from({ length: 40 }, (_, i) => passed((i % 2 ? la : lb).consume('cred-2'))));
    expect(atOnce.filter(Boolean)).toHaveLength(10);
  });

  it('keeps limiters of different names apart in the one table', async () => {
    const limits = await process_();
    const [x, y] = [limits('x', 2, 60), limits('y', 2, 60)];
    await x.consume('same');
    await x.consume('same');
    await expect(passed(x.consume('same'))).resolves.toBe(false);
    await expect(passed(y.consume('same'))).resolves.toBe(true);
  });

  it('counts in memory, within a bound, while PostgreSQL does not answer', async () => {
    const pool = new Pool({ connectionString: url, max: 2 });
    pools.push(pool);
    let hang = false;
    const stalled = { query: (q: never) => (hang ? new Promise<never>(() => undefined) : pool.query(q)) } as unknown as Pool;
    const shared = await postgresRateLimits(stalled);
    closers.push(shared.close);
    hang = true;
    const limiter = shared.limits('stalled', 3, 60);
    const started = Date.now();
    const results: boolean[] = [];
    for (let i = 0; i < 5; i++) results.push(await passed(limiter.consume('k')));
    // Each count waits out the one-second deadline, then the insurance limiter answers: still a limit, per process.
    expect(results).toEqual([true, true, true, false, false]);
    expect(Date.now() - started).toBeLessThan(5 * 1_000 + 2_000);
  }, 20_000);

  it('counts in memory when the database refuses connections', async () => {
    const pool = new Pool({ connectionString: url, max: 2 });
    pools.push(pool);
    const shared = await postgresRateLimits(pool);
    closers.push(shared.close);
    const limiter = shared.limits('refused', 2, 60);
    // Ending the pool makes every later query fail at once, as a refused connection does.
    await pool.end();
    pools.pop();
    const results: boolean[] = [];
    for (let i = 0; i < 3; i++) results.push(await passed(limiter.consume('k')));
    expect(results).toEqual([true, true, false]);
  });
});
