import { readUpTo } from '@lib/platform';
import type { ConfluenceDialect } from './confluence-dialects';
import { retryingFetch } from '../retrying-fetch';

/** One JSON answer's bound: a listing page of 250 pages with their bodies fits; more is refused, not buffered. */
const MAX_JSON_BYTES = 32 * 1024 * 1024;

export type Json = Record<string, unknown>;

/**
 * A Confluence REST API (Cloud v2 or Data Center v1: `dialect`) as this source uses it: JSON GETs with the
 * credential, only to the site's origin (redirects refused: an API does not redirect, following one could hand
 * the credential elsewhere), 429/503 waited out (Retry-After), listings followed through `_links.next`.
 */
export class ConfluenceApi {
  private readonly origin: string;

  constructor(
    readonly dialect: ConfluenceDialect,
    site: string,
    private readonly fetcher: typeof fetch,
    private readonly headers: Record<string, string>,
    private readonly signal: AbortSignal,
  ) {
    this.origin = new URL(site).origin;
  }

  /** The JSON answer; null for a 404 when `missingOk` (a page deleted since it was named). */
  async get(url: string, missingOk = false): Promise<Json | null> {
    if (new URL(url).origin !== this.origin) throw new Error(`the API pointed outside the site (${new URL(url).origin})`);
    const res = await retryingFetch(this.fetcher, url, { headers: { accept: 'application/json', ...this.headers }, signal: this.signal, redirect: 'error' });
    const path = new URL(url).pathname;
    const { bytes, truncated } = await readUpTo(res, MAX_JSON_BYTES);
    if (truncated) throw new Error(`GET ${path} answered more than 32 MiB at once`);
    if (res.status === 404 && missingOk) return null;
    let body: Json = {};
    try {
      body = JSON.parse(bytes.toString('utf8')) as Json;
    } catch {
      if (res.ok) throw new Error(`GET ${path} did not answer JSON`);
    }
    if (!res.ok) throw new Error(`GET ${path} answered ${res.status}${describe(body)}`);
    return body;
  }

  /** Every item of a listing, page by page (`_links.next`: a path carrying the cursor or the next `start`). */
  async *list(url: string): AsyncGenerator<Json> {
    for (let next: string | null = url; next && !this.signal.aborted; ) {
      const page: Json = (await this.get(next))!;
      for (const item of Array.isArray(page.results) ? (page.results as Json[]) : []) yield item;
      const link: unknown = (page._links as { next?: unknown } | undefined)?.next;
      next = typeof link === 'string' && link ? this.dialect.next(link) : null;
    }
  }

  /**
   * A file's bytes (an attachment's `downloadLink`, relative to the web root), at most `limit`. Cloud answers a
   * download with a redirect to its media host: hops are followed here (up to 5) and the credential goes only to
   * the site's own origin, never to the host a redirect names.
   */
  async download(link: string, limit: number): Promise<{ bytes: Buffer; truncated: boolean }> {
    let url = new URL(`${this.dialect.web}${link.startsWith('/') ? '' : '/'}${link}`).href;
    for (let hop = 0; ; hop++) {
      const own = new URL(url).origin === this.origin;
      const res = await retryingFetch(this.fetcher, url, { headers: own ? this.headers : {}, signal: this.signal, redirect: 'manual' });
      const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
      if (location && hop < 5) {
        await res.body?.cancel();
        url = new URL(location, url).href;
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`the download answered ${res.status}`);
      }
      return readUpTo(res, limit);
    }
  }
}

/** An Atlassian error body's message (`errors[].title`, `message`), never the request's headers. */
function describe(body: Json): string {
  const errors = Array.isArray(body.errors) ? (body.errors as { title?: unknown }[]) : [];
  const text = typeof errors[0]?.title === 'string' ? errors[0].title : typeof body.message === 'string' ? body.message : '';
  return text ? `: ${text.slice(0, 300)}` : '';
}
