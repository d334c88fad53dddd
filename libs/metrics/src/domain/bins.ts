/** Time bins of a metric query over per-minute buckets (docs/metrics.md). Pure. */

export const MINUTE_MS = 60_000;
export const MAX_LOOKBACK_MS = 30 * 24 * 60 * MINUTE_MS;
export const DEFAULT_MAX_BINS = 60;
export const MAX_BINS = 1000;

export interface BinPlan {
  /** Width of a bin, a whole number of minutes so that every minute falls in one bin. */
  readonly binMs: number;
  /** Start of the first bin: the window's end (whole minutes) minus the bins, "end-time aligned" as the reference says. */
  readonly firstMs: number;
  readonly count: number;
  /** The minutes read: `[fromMs, toMs)`, the window widened to whole minutes. */
  readonly fromMs: number;
  readonly toMs: number;
}

/**
 * Bins for `[startMs, endMs)`: at most `maxBins` of them, each a whole number of minutes, the last ending at the
 * window's end rounded up to a minute. The first may start before the window; minutes before it are not read.
 */
export function planBins(startMs: number, endMs: number, maxBins: number): BinPlan {
  const fromMs = Math.floor(startMs / MINUTE_MS) * MINUTE_MS;
  const toMs = Math.ceil(endMs / MINUTE_MS) * MINUTE_MS;
  const minutes = Math.max(1, (toMs - fromMs) / MINUTE_MS);
  const binMinutes = Math.ceil(minutes / maxBins);
  const count = Math.ceil(minutes / binMinutes);
  const binMs = binMinutes * MINUTE_MS;
  return { binMs, firstMs: toMs - count * binMs, count, fromMs, toMs: Math.max(toMs, fromMs + MINUTE_MS) };
}

/** Index of the bin a bucket minute falls in (the minutes read always fall in one). */
export const binIndex = (plan: BinPlan, minuteMs: number): number => Math.floor((minuteMs - plan.firstMs) / plan.binMs);
