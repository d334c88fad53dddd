import { readUpTo } from '@lib/platform';
import type { WolkenKbSourceSettings } from '../../../domain/pipeline-wolken-source';
import { retryingFetch } from '../retrying-fetch';

type Json = Record<string, unknown>;
const MAX_JSON_BYTES = 32 * 1024 * 1024;
/** Items asked per listing request; the listing is read until an empty page, so a server that caps it lower still pages right. */
const PAGE_SIZE = 100;

/**
 * The Wolken ServiceDesk knowledge-base API (`{api_endpoint}/wolken-secure`) as this source uses it. Auth: the
 * refresh token is exchanged at `POST /oauth/token` (form `grant_type=refresh_token`, the instance's `auth_code`
 * as the Authorization header, the tenant in the `domain` header); calls carry the access token as a bearer with
 * the `clientId`, `domain` and `serviceAccount` headers. A 401 on a call refreshes the token once. The token lives
 * in this object for one run only: never logged, never recorded. Redirects are refused (an API does not redirect).
 */
export class WolkenApi {
  private readonly root: string;
  private token: string | null = null;

  constructor(
    private readonly source: WolkenKbSourceSettings,
    private readonly secrets: Readonly<Record<string, string>>,
    private readonly fetcher: typeof fetch,
    private readonly signal: AbortSignal,
  ) {
    this.root = `${source.api_endpoint}/wolken-secure`;
  }

  /** Every item of a paged listing `{path}/{limit}/{offset}`: `data` arrays until an empty one. */
  async *pages(path: string, query = new URLSearchParams()): AsyncGenerator<Json> {
    for (let offset = 0; !this.signal.aborted; ) {
      const body = await this.get(`${path}/${PAGE_SIZE}/${offset}${query.size ? `?${query}` : ''}`);
      const data = body?.data;
      const items = (Array.isArray(data) ? data : data && typeof data === 'object' ? [data] : []) as Json[];
      if (!items.length) return;
      yield* items;
      offset += items.length;
    }
  }

  /** One article's detail; null when it no longer exists. */
  async article(articleId: string): Promise<Json | null> {
    const body = await this.get(`/api/kb/articles/${encodeURIComponent(articleId)}`, true);
    const data = body?.data;
    const detail = Array.isArray(data) ? data[0] : data;
    return detail && typeof detail === 'object' ? (detail as Json) : null;
  }

  private async get(path: string, missingOk = false): Promise<Json | null> {
    for (let refreshed = false; ; refreshed = true) {
      if (!this.token) this.token = await this.exchange();
      const headers = { accept: 'application/json', authorization: `Bearer ${this.token}`, clientId: this.source.client_id, domain: this.source.domain, serviceAccount: this.source.service_account };
      const res = await retryingFetch(this.fetcher, `${this.root}${path}`, { headers, signal: this.signal, redirect: 'error' });
      if (res.status === 401 && !refreshed) {
        await res.body?.cancel();
        this.token = null; // Expired mid-run: one new token, then the call again.
        continue;
      }
      const body = await readJson(res, `GET ${path.split('?')[0]}`);
      if (res.status === 404 && missingOk) return null;
      if (!res.ok) throw new Error(`GET ${path.split('?')[0]} answered ${res.status}${describe(body)}`);
      return body;
    }
  }

  private async exchange(): Promise<string> {
    const code = this.secrets.auth_code ?? '';
    // Wolken issues the auth code as a whole Basic credential; one given without its scheme gets it.
    const authorization = /^[A-Za-z]+ /.test(code) ? code : `Basic ${code}`;
    const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: this.secrets.refresh_token ?? '' });
    const res = await retryingFetch(this.fetcher, `${this.root}/oauth/token`, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', authorization, domain: this.source.domain }, body: form.toString(), signal: this.signal, redirect: 'error' });
    const body = await readJson(res, 'POST /oauth/token');
    if (!res.ok || typeof body.access_token !== 'string' || !body.access_token) throw new Error(`the token endpoint (POST /wolken-secure/oauth/token) answered ${res.status}${describe(body)}`);
    return body.access_token;
  }
}

async function readJson(res: Response, what: string): Promise<Json> {
  const { bytes, truncated } = await readUpTo(res, MAX_JSON_BYTES);
  if (truncated) throw new Error(`${what} answered more than 32 MiB at once`);
  try {
    const parsed = JSON.parse(bytes.toString('utf8')) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Json) : {};
  } catch {
    if (res.ok) throw new Error(`${what} did not answer JSON`);
    return {};
  }
}

/** The service's own words (`error_description`, `message`), never the request's credentials. */
function describe(body: Json): string {
  const text = [body.error_description, body.message, body.error].find((x): x is string => typeof x === 'string' && x.length > 0);
  return text ? `: ${text.slice(0, 300)}` : '';
}
