import { SandboxError, SandboxPool } from './sandbox-pool';

/** jq and regular expressions off the main thread: real jq, bounded in time, sandboxed from the host. */
describe('SandboxPool', () => {
  const pool = new SandboxPool();
  afterAll(() => pool.onModuleDestroy());

  it('runs real jq (paths, reduce, string interpolation, error())', async () => {
    expect(await pool.jq('{q: .args.query, n: (.args.items | map(.n) | add), s: "\\(.agent.name)!"}', { args: { query: 'x', items: [{ n: 1 }, { n: 2 }] }, agent: { name: 'A' } })).toEqual({ q: 'x', n: 3, s: 'A!' });
    expect(await pool.jq('reduce .[] as $x (0; . + $x)', [1, 2, 3])).toBe(6);
    await expect(pool.jq('error("no such customer")', {})).rejects.toThrow(/no such customer/);
    await expect(pool.jq('.[', {})).rejects.toThrow(/syntax error/);
  });

  it('stops a program that never ends, and the next one runs', async () => {
    const started = Date.now();
    const endless = await pool.jq('[repeat(1)] | length', {}, 300).catch((e: unknown) => e);
    expect(endless).toBeInstanceOf(SandboxError);
    expect((endless as Error).message).toMatch(/stopped after 300 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await pool.jq('.a', { a: 42 })).toBe(42);
  }, 20_000);

  it('sees nothing of the host: no files, no environment', async () => {
    await expect(pool.jq('include "/etc/passwd"; .', {})).rejects.toThrow(/module not found/);
    await expect(pool.jq('import "/etc/hostname" as $h; $h', {})).rejects.toThrow(/module not found/);
    const env = (await pool.jq('$ENV', {})) as Record<string, string>;
    expect(JSON.stringify(env)).not.toContain(process.env.HOME ?? '/root-home-not-set');
    expect(env.PATH).not.toBe(process.env.PATH);
  });

  it('greps with a deadline: a catastrophic pattern is stopped', async () => {
    expect(await pool.grep('alpha\nbeta\ngamma', '^(al|ga)', { flags: '', invert: false, maxMatches: 10 })).toEqual({ matches: [{ line: 1, text: 'alpha' }, { line: 3, text: 'gamma' }], count: 2, lines: 3 });
    const evil = await pool.grep(`${'a'.repeat(40)}!`, '^(a+)+$', { flags: '', invert: false, maxMatches: 10 }, 300).catch((e: unknown) => e);
    expect(evil).toBeInstanceOf(SandboxError);
  }, 20_000);
});
