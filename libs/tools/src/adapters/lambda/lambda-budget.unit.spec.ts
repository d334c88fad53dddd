import { CallLease, LambdaBudgetError, LambdaSlots } from './lambda-budget';

const tick = () => new Promise((r) => setImmediate(r));

/** A lambda of `height` that starts `fanOut` lambdas one level down, all at once, each holding its sandbox a few turns. */
async function tree(lease: CallLease, height: number, fanOut: number, seen: { now: number; peak: number }, nested = false): Promise<number> {
  await lease.take(height, nested);
  seen.now++;
  seen.peak = Math.max(seen.peak, seen.now);
  try {
    await tick();
    if (height === 0) return 1;
    const counts = await Promise.all(Array.from({ length: fanOut }, () => tree(lease, height - 1, fanOut, seen, true)));
    return 1 + counts.reduce((a, b) => a + b, 0);
  } finally {
    seen.now--;
    lease.give();
  }
}

describe('the lambda sandbox budget', () => {
  it('runs a call of three levels fanning out 4 x 4 inside a reservation of 3, never more at once, without a deadlock', async () => {
    const lease = new CallLease(3, 1_000);
    const seen = { now: 0, peak: 0 };
    expect(await tree(lease, 2, 4, seen)).toBe(21);
    expect(seen.peak).toBeLessThanOrEqual(3);
    await lease.idle();
  });

  it('refuses nested lambdas past the per-call bound, and a level the call did not reserve', async () => {
    const lease = new CallLease(2, 2);
    await lease.take(1, false);
    await lease.take(0, true);
    lease.give();
    await lease.take(0, true);
    lease.give();
    await expect(lease.take(0, true)).rejects.toThrow(/started 2 nested lambdas.*LAMBDA_MAX_NESTED_RUNS/);
    await expect(new CallLease(1, 10).take(1, true)).rejects.toBeInstanceOf(LambdaBudgetError);
  });

  it('serves calls first come first served within the pool, holds a principal to its share without holding back others, and refuses what can never fit', async () => {
    const slots = new LambdaSlots(4, 3);
    const order: string[] = [];
    await slots.reserve('a', 3);
    const a2 = slots.reserve('a', 1).then(() => order.push('a2'));
    const b1 = slots.reserve('b', 1).then(() => order.push('b1'));
    await tick();
    // a holds 3 (its share): its second call waits; b's call takes the fourth sandbox.
    expect(order).toEqual(['b1']);
    slots.release('a', 3);
    await Promise.all([a2, b1]);
    expect(order).toEqual(['b1', 'a2']);
    await expect(slots.reserve('c', 5)).rejects.toThrow(/more than LAMBDA_MAX_SANDBOXES \(4\)/);
    await expect(slots.reserve('c', 4)).rejects.toThrow(/LAMBDA_MAX_SANDBOXES_PER_PRINCIPAL, 3/);
  });

  it('lets a call waiting for sandboxes be cancelled', async () => {
    const slots = new LambdaSlots(1, 1);
    await slots.reserve('a', 1);
    const cancel = new AbortController();
    const waiting = slots.reserve('b', 1, cancel.signal);
    cancel.abort();
    await expect(waiting).rejects.toThrow(/cancelled/);
    slots.release('a', 1);
    await slots.reserve('c', 1);
  });
});
