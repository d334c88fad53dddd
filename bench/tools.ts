import { SandboxPool } from '../libs/agents/src/adapters/sandbox/sandbox-pool';
import { now, percentile, report, round } from './common';

/**
 * The cost of a jq transform per tool call: a typical input transform sent to the sandbox pool's worker threads
 * (message in, jq compiled and run in WebAssembly, message out), against the same program run by jq-web on this
 * thread (what a transform would cost without the isolation that keeps a hostile program off the event loop).
 */
export async function toolsBench(args: string[]): Promise<void> {
  const calls = Number(args[0] ?? 2000);
  const program = '{query: (.args.q + " " + (.session.metadata.region // "")), limit: ([.args.n, 10] | min), filters: [.tools[]?.outputs.latest.ids[]?] | unique}';
  const input = { args: { q: 'refund policy', n: 25 }, session: { key: 's', metadata: { region: 'eu' } }, agent: { key: 'a', name: 'A' }, tools: { docs: { outputs: { latest: { ids: ['d1', 'd2', 'd1'] } } } }, currentDate: new Date().toISOString() };
  const pool = new SandboxPool();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const jq = await (require('jq-web') as Promise<{ json(i: unknown, p: string): unknown }>);
  try {
    for (let i = 0; i < 50; i++) await pool.jq(program, input);
    const pooled: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < calls; i++) {
      let t = now();
      await pool.jq(program, input);
      pooled.push(now() - t);
      t = now();
      jq.json(input, program);
      direct.push(now() - t);
    }
    // Two transforms at once on each of the pool's two threads, as concurrent tool calls would send them.
    const t = now();
    await Promise.all(Array.from({ length: 200 }, () => pool.jq(program, input)));
    const concurrentPerCall = (now() - t) / 200;
    const p = (xs: number[], q: number) => round(percentile(xs, q), 3);
    report('tools', [
      { measure: 'jq transform on the sandbox pool', p50_ms: p(pooled, 50), p99_ms: p(pooled, 99) },
      { measure: 'same program on this thread (no isolation)', p50_ms: p(direct, 50), p99_ms: p(direct, 99) },
      { measure: '200 transforms at once, per transform', p50_ms: round(concurrentPerCall, 3) },
    ], { calls });
  } finally {
    await pool.onModuleDestroy();
  }
}
