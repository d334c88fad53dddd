import { runInSlices, turnsDuring } from './yield';

/** Steps that each hold the loop for `ms`, then the value. */
function* busySteps(count: number, ms: number): Generator<void, number> {
  for (let i = 0; i < count; i++) {
    for (const end = performance.now() + ms; performance.now() < end; );
    yield;
  }
  return count;
}

describe('runInSlices', () => {
  it('gives the loop a turn about every 8 ms of steps, and returns what the steps return', async () => {
    // 60 steps of 1 ms: about 7 slices.
    const { value, turns } = await turnsDuring(() => runInSlices(busySteps(60, 1)));
    expect(value).toBe(60);
    expect(turns).toBeGreaterThanOrEqual(5);
  });

  it('runs short work without a turn', async () => {
    const { value, turns } = await turnsDuring(() => runInSlices(busySteps(3, 0)));
    expect(value).toBe(3);
    expect(turns).toBe(0);
  });

  it('throws what a step throws', async () => {
    function* failing(): Generator<void, string> {
      yield;
      throw new Error('part 50,001');
    }
    await expect(runInSlices(failing())).rejects.toThrow('part 50,001');
  });
});
