/** Answers that say "later": throttling (429, S3's 503 SlowDown) and a server's passing failure. */
const RETRIED = new Set([429, 500, 502, 503, 504]);
const ATTEMPTS = 4;
/** The longest wait a source's Retry-After is honoured for; past it the run fails rather than stall for hours. */
export const MAX_RETRY_WAIT_MS = 30_000;

/** A Retry-After header (seconds or an HTTP date) in ms, or null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => (signal.removeEventListener('abort', abort), resolve()), ms);
    const abort = () => (clearTimeout(t), reject(signal.reason));
    signal.addEventListener('abort', abort, { once: true });
  });
}

/**
 * Sends a request (built again each time: a signature carries its time) until it is not throttled, up to 4
 * attempts; waits what Retry-After asks (at most 30 s), else 0.5 s, 1 s, 2 s. A Retry-After above the bound is
 * answered as is: the caller reports the throttling rather than wait.
 */
export async function getWithRetry(send: () => Promise<Response>, signal: AbortSignal): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await send();
    if (!RETRIED.has(res.status) || attempt >= ATTEMPTS) return res;
    const asked = retryAfterMs(res.headers.get('retry-after'), Date.now());
    if (asked !== null && asked > MAX_RETRY_WAIT_MS) return res;
    await res.body?.cancel().catch(() => undefined);
    await sleep(asked ?? 500 * 2 ** (attempt - 1), signal);
  }
}
