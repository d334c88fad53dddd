/** How long a source waits, at most, when a service answers 429/503 with Retry-After; a longer ask fails the request. */
export const MAX_RETRY_AFTER_MS = 60_000;
const ATTEMPTS = 4;

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((r) => (signal.aborted ? r() : (setTimeout(r, ms).unref(), signal.addEventListener('abort', () => r(), { once: true }))));

/** Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * A request sent again while the service answers 429 (rate limited) or 503: after its Retry-After (else 1, 2, 4 s),
 * at most 4 attempts and never waiting past MAX_RETRY_AFTER_MS, so a throttled run slows down instead of failing
 * at once, and a service asking for an hour fails the run with its answer rather than holding it.
 */
export async function retryingFetch(fetcher: typeof fetch, url: string, init: RequestInit & { signal: AbortSignal }): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetcher(url, init);
    if ((res.status !== 429 && res.status !== 503) || attempt >= ATTEMPTS) return res;
    const wait = retryAfterMs(res.headers.get('retry-after')) ?? 1000 * 2 ** (attempt - 1);
    if (wait > MAX_RETRY_AFTER_MS) return res;
    await res.body?.cancel();
    await sleep(wait, init.signal);
    if (init.signal.aborted) return res;
  }
}
