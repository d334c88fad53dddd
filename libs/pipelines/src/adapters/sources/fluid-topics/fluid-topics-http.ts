import { readUpTo } from '@lib/platform';
import { retryingFetch } from '../retrying-fetch';

export type Json = Record<string, unknown>;
const MAX_JSON_BYTES = 32 * 1024 * 1024;

/**
 * Fluid Topics' Knowledge Hub API (`{portal}/api/khub`) as the portal source uses it: the API key as a bearer
 * token (none for a portal open to anonymous reads), `Ft-Calling-App` naming the caller as Fluid Topics asks,
 * redirects refused (the key goes to the portal only), 429/503 waited out, every answer bounded.
 */
export class FluidTopicsApi {
  constructor(
    private readonly portal: string,
    private readonly apiKey: string | undefined,
    private readonly fetcher: typeof fetch,
    private readonly signal: AbortSignal,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'ft-calling-app': 'pipelines', ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}), ...extra };
  }

  async json(path: string, body?: unknown): Promise<unknown> {
    const init = body === undefined ? { headers: this.headers({ accept: 'application/json' }) } : { method: 'POST', headers: this.headers({ accept: 'application/json', 'content-type': 'application/json' }), body: JSON.stringify(body) };
    const { res, bytes } = await this.send(path, init, MAX_JSON_BYTES, 'answered more than 32 MiB at once');
    try {
      return JSON.parse(bytes.toString('utf8')) as unknown;
    } catch {
      throw new Error(`${body === undefined ? 'GET' : 'POST'} ${path} did not answer JSON (${res.status})`);
    }
  }

  /** A topic's HTML or a document's bytes, at most `limit`; null for a 404 (gone since it was listed). */
  async content(path: string, limit: number): Promise<Buffer | null> {
    try {
      return (await this.send(path, { headers: this.headers() }, limit, `is larger than ${limit} bytes`)).bytes;
    } catch (e) {
      if ((e as { status?: number }).status === 404) return null;
      throw e;
    }
  }

  private async send(path: string, init: RequestInit, limit: number, tooLarge: string): Promise<{ res: Response; bytes: Buffer }> {
    const res = await retryingFetch(this.fetcher, `${this.portal}${path}`, { ...init, signal: this.signal, redirect: 'error' });
    const { bytes, truncated } = await readUpTo(res, limit);
    if (!res.ok) throw Object.assign(new Error(`${init.method ?? 'GET'} ${path.split('?')[0]} answered ${res.status}${describe(bytes)}`), { status: res.status });
    if (truncated) throw new Error(`${path.split('?')[0]} ${tooLarge}`);
    return { res, bytes };
  }
}

/** Fluid Topics' error body (`{message}` or `{error}`), never the request's key. */
function describe(bytes: Buffer): string {
  try {
    const body = JSON.parse(bytes.toString('utf8')) as Json;
    const text = [body.message, body.error].find((x): x is string => typeof x === 'string' && x.length > 0);
    return text ? `: ${text.slice(0, 300)}` : '';
  } catch {
    return '';
  }
}
