import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small Wolken ServiceDesk knowledge-base API for the wolken_kb source's tests, after the endpoints Wolken's KB
 * REST API gives (docs/pipelines.md lists which paths are assumed): `POST /wolken-secure/oauth/token` (refresh-token
 * grant: the instance's auth code as Authorization, the tenant in `domain`), `GET /wolken-secure/api/kb/categories/
 * {limit}/{offset}`, `/api/kb/articles/{catId}/{limit}/{offset}` (`statusId`, `validationStatusId`, `levelId`
 * filters), `/api/kb/articles/{articleId}`; every call needs the bearer token with `clientId`, `domain` and
 * `serviceAccount` headers. Pages are capped at `maxLimit` items; a token serves `tokenCalls` calls, then answers 401.
 */
export interface KbArticle {
  articleId: number;
  articleNumber: string;
  catId: number;
  articleTitle: string;
  statusId: number;
  statusName?: string;
  validationStatusId: number;
  levelId: number;
  updatedTime: string;
  sections: Record<string, string>;
}

export class WolkenServer {
  readonly categories = [
    { catId: 1, catName: 'Network' },
    { catId: 2, catName: 'Email' },
    { catId: 3, catName: 'Hardware' },
  ];
  readonly articles = new Map<number, KbArticle>();
  readonly requests: { method: string; url: string; status?: number }[] = [];
  readonly tokenRequests: { authorization?: string; domain?: string; body: string }[] = [];
  maxLimit = 2;
  /** Calls one access token serves before it answers 401 (a token expiring mid-run). */
  tokenCalls = Number.POSITIVE_INFINITY;
  private issued = new Map<string, number>();
  private n = 0;
  private clock = Date.parse('2026-02-01T00:00:00Z');
  private server!: Server;
  url = '';

  constructor(private readonly expect: { domain: string; clientId: string; serviceAccount: string; authCode: string; refreshToken: string }) {}

  static async start(expect: WolkenServer['expect']): Promise<WolkenServer> {
    const s = new WolkenServer(expect);
    s.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => s.handle(req, res, body));
    });
    await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r));
    s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
    return s;
  }

  /** Adds or edits an article (a later `updatedTime`). */
  put(a: Omit<KbArticle, 'updatedTime'>): void {
    this.clock += 60_000;
    this.articles.set(a.articleId, { ...a, updatedTime: new Date(this.clock).toISOString() });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private summary(a: KbArticle) {
    return { articleId: a.articleId, articleNumber: a.articleNumber, articleTitle: a.articleTitle, catId: a.catId, statusId: a.statusId, ...(a.statusName ? { statusName: a.statusName } : {}), validationStatusId: a.validationStatusId, levelId: a.levelId, updatedTime: a.updatedTime, createdTime: '2026-01-01T00:00:00.000Z' };
  }

  private handle(req: IncomingMessage, res: ServerResponse, body: string): void {
    const entry: WolkenServer['requests'][number] = { method: req.method ?? '', url: req.url ?? '' };
    this.requests.push(entry);
    const send = (status: number, json: unknown) => ((entry.status = status), void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json)));
    const u = new URL(req.url ?? '/', this.url);
    if (req.method === 'POST' && u.pathname === '/wolken-secure/oauth/token') {
      this.tokenRequests.push({ authorization: req.headers.authorization, domain: req.headers.domain as string | undefined, body });
      const form = new URLSearchParams(body);
      if (req.headers.authorization !== this.expect.authCode || req.headers.domain !== this.expect.domain) return send(401, { error: 'unauthorized', error_description: 'Full authentication is required to access this resource' });
      if (form.get('grant_type') !== 'refresh_token' || form.get('refresh_token') !== this.expect.refreshToken) return send(400, { error: 'invalid_grant', error_description: 'Invalid refresh token' });
      const token = `wat-${++this.n}`;
      this.issued.set(token, this.tokenCalls);
      return send(200, { access_token: token, token_type: 'bearer', expires_in: 3599, scope: 'read' });
    }
    const h = req.headers;
    const bearer = /^Bearer (.+)$/.exec(h.authorization ?? '')?.[1];
    const left = bearer ? (this.issued.get(bearer) ?? 0) : 0;
    if (left <= 0) return send(401, { error: 'invalid_token', error_description: 'Access token expired' });
    this.issued.set(bearer!, left - 1);
    if (h.clientid !== this.expect.clientId || h.domain !== this.expect.domain || h.serviceaccount !== this.expect.serviceAccount) return send(403, { status: 'FORBIDDEN', message: 'clientId, domain and serviceAccount do not match the token' });
    const list = /^\/wolken-secure\/api\/kb\/(categories|articles\/(\d+))\/(\d+)\/(\d+)$/.exec(u.pathname);
    if (list) {
      const [, , catId, limit, offset] = list;
      const q = u.searchParams;
      const items = catId
        ? [...this.articles.values()].filter((a) => a.catId === Number(catId) && (['statusId', 'validationStatusId', 'levelId'] as const).every((f) => !q.has(f) || a[f] === Number(q.get(f)))).sort((a, b) => a.articleId - b.articleId).map((a) => this.summary(a))
        : this.categories;
      return send(200, { status: 'SUCCESS', data: items.slice(Number(offset), Number(offset) + Math.min(Number(limit), this.maxLimit)) });
    }
    const one = /^\/wolken-secure\/api\/kb\/articles\/(\d+)$/.exec(u.pathname);
    const a = one ? this.articles.get(Number(one[1])) : undefined;
    if (!a) return send(404, { status: 'NOT_FOUND', message: 'No such article' });
    send(200, { status: 'SUCCESS', data: { ...this.summary(a), description: '', articleOtherInfo: { ...a.sections, validationStatusId: a.validationStatusId, publishedDate: '2026-01-02' } } });
  }
}
