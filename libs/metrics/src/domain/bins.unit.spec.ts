import { binIndex, MINUTE_MS, planBins } from './bins';

const at = (iso: string) => Date.parse(iso);

describe('planBins', () => {
  it('gives whole-minute bins, never more than asked, the last ending at the window end', () => {
    const plan = planBins(at('2026-12-01T00:00:00Z'), at('2026-12-02T00:00:00Z'), 60);
    expect(plan.binMs).toBe(24 * MINUTE_MS);
    expect(plan.count).toBe(60);
    expect(plan.firstMs + plan.count * plan.binMs).toBe(at('2026-12-02T00:00:00Z'));
  });

  it('rounds a bin up to a minute and widens the window to whole minutes', () => {
    const plan = planBins(at('2026-12-01T00:00:30Z'), at('2026-12-01T00:10:10Z'), 1000);
    expect(plan).toMatchObject({ binMs: MINUTE_MS, count: 11, fromMs: at('2026-12-01T00:00:00Z'), toMs: at('2026-12-01T00:11:00Z') });
    expect(binIndex(plan, at('2026-12-01T00:00:00Z'))).toBe(0);
    expect(binIndex(plan, at('2026-12-01T00:10:00Z'))).toBe(10);
  });

  it('keeps to max_bins when the minutes do not divide evenly', () => {
    for (const [minutes, maxBins] of [[7, 3], [61, 60], [43_200, 1000], [43_200, 7], [1, 1], [5, 1]]) {
      const plan = planBins(0, minutes * MINUTE_MS, maxBins);
      expect(plan.count).toBeLessThanOrEqual(maxBins);
      expect(plan.firstMs).toBeLessThanOrEqual(plan.fromMs);
      expect(binIndex(plan, plan.toMs - MINUTE_MS)).toBe(plan.count - 1);
    }
  });
});
