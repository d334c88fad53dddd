import { retryAfterMs, retryingFetch } from './retrying-fetch';

describe('retryingFetch (a source throttled by its service)', () => {
  const answers = (...statuses: [number, string?][]) => {
    const calls: string[] = [];
    const fetcher = (async (url: string) => {
      calls.push(url);
      const [status, retryAfter] = statuses[Math.min(calls.length - 1, statuses.length - 1)];
      return new Response('{}', { status, headers: retryAfter ? { 'retry-after': retryAfter } : {} });
    }) as unknown as typeof fetch;
    return { fetcher, calls };
  };
  const signal = new AbortController().signal;

  it('sends the request again after a 429 and answers what follows', async () => {
    const { fetcher, calls } = answers([429, '0'], [503, '0'], [200]);
    expect((await retryingFetch(fetcher, 'http://x/a', { signal })).status).toBe(200);
    expect(calls).toHaveLength(3);
  });

  it('gives up after four attempts, and at once when asked to wait past the bound', async () => {
    const always = answers([429, '0']);
    expect((await retryingFetch(always.fetcher, 'http://x/a', { signal })).status).toBe(429);
    expect(always.calls).toHaveLength(4);
    const hour = answers([429, '3600'], [200]);
    expect((await retryingFetch(hour.fetcher, 'http://x/a', { signal })).status).toBe(429);
    expect(hour.calls).toHaveLength(1);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs(new Date(Date.parse('2026-01-01T00:00:30Z')).toUTCString(), Date.parse('2026-01-01T00:00:00Z'))).toBe(30_000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(null)).toBeNull();
  });
});
