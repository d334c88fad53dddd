/** Source of time; injected so domain code and tests stay deterministic. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export function fixedClock(at: Date | string): Clock & { advance(ms: number): void } {
  let t = new Date(at).getTime();
  return { now: () => new Date(t), advance: (ms) => void (t += ms) };
}

export const CLOCK = Symbol('Clock');
