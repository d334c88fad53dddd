import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small Confluence Cloud site for the confluence source's tests, after Atlassian's REST API v2 reference:
 * `GET /wiki/api/v2/spaces` (`keys`, `type`), `/spaces/{id}/pages` (`status`, `body-format=storage`),
 * `/pages/{id}`, `/pages/{id}/attachments`, cursor paging through `_links.next` (and the `Link` header) with the
 * page size capped at `maxLimit`; Basic auth (email:API token) checked on every call, v2 error bodies; an
 * attachment download answered with a redirect to a separate media host, as Cloud does. `throttle` answers the
 * next requests 429 with Retry-After. `startDataCenter` serves the v1 REST API of Data Center instead, under the
 * context path `/confluence`: `/rest/api/space` (`spaceKey`, `type`), `/rest/api/content` (`spaceKey`, `type`,
 * `status`, `expand`), `/content/{id}`, `/content/{id}/child/attachment`, `start`/`limit` paging through
 * `_links.next` (relative to `_links.base`), a personal access token as bearer, downloads served directly.
 */
export interface WikiPage {
  id: string;
  spaceId: string;
  title: string;
  storage: string;
  version: number;
  attachments: { id: string; title: string; mediaType: string; data: Buffer }[];
}

export class ConfluenceServer {
  readonly spaces = [
    { id: '101', key: 'ENG', name: 'Engineering', type: 'global' },
    { id: '102', key: 'HR', name: 'People', type: 'global' },
  ];
  readonly pages = new Map<string, WikiPage>();
  readonly requests: { url: string; authorization?: string }[] = [];
  readonly mediaRequests: { url: string; authorization?: string }[] = [];
  maxLimit = 2;
  throttle = 0;
  private site!: Server;
  private media!: Server;
  url = '';
  private mediaUrl = '';

  constructor(
    private readonly credential: string,
    private readonly dataCenter = false,
  ) {}

  static async startDataCenter(pat: string): Promise<ConfluenceServer> {
    const s = await ConfluenceServer.listen(new ConfluenceServer(`Bearer ${pat}`, true));
    s.url = `${s.url}/confluence`;
    return s;
  }

  static async start(email: string, token: string): Promise<ConfluenceServer> {
    return ConfluenceServer.listen(new ConfluenceServer(`Basic ${Buffer.from(`${email}:${token}`).toString('base64')}`));
  }

  private static async listen(s: ConfluenceServer): Promise<ConfluenceServer> {
    s.site = createServer((req, res) => s.handle(req, res));
    s.media = createServer((req, res) => s.serveMedia(req, res));
    await new Promise<void>((r) => s.site.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => s.media.listen(0, '127.0.0.1', r));
    s.url = `http://127.0.0.1:${(s.site.address() as AddressInfo).port}`;
    s.mediaUrl = `http://127.0.0.1:${(s.media.address() as AddressInfo).port}`;
    return s;
  }

  /** Adds a page or edits one (its version goes up by one, as a Confluence edit does). */
  put(id: string, spaceKey: string, title: string, storage: string, attachments: WikiPage['attachments'] = []): void {
    const before = this.pages.get(id);
    const spaceId = this.spaces.find((s) => s.key === spaceKey)!.id;
    this.pages.set(id, { id, spaceId, title, storage, version: (before?.version ?? 0) + 1, attachments: attachments.length ? attachments : (before?.attachments ?? []) });
  }

  async close(): Promise<void> {
    for (const s of [this.site, this.media]) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  }

  private pageJson(p: WikiPage, body: boolean) {
    return { id: p.id, status: 'current', title: p.title, spaceId: p.spaceId, parentId: null, authorId: 'acc-1', createdAt: '2026-01-01T00:00:00.000Z', version: { number: p.version, createdAt: `2026-01-0${Math.min(p.version, 9)}T00:00:00.000Z`, message: '', minorEdit: false, authorId: 'acc-1' }, body: body ? { storage: { value: p.storage, representation: 'storage' } } : {}, _links: { webui: `/spaces/${this.spaces.find((s) => s.id === p.spaceId)!.key}/pages/${p.id}`, editui: `/pages/resumedraft.action?draftId=${p.id}`, tinyui: `/x/${p.id}` } };
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    const error = (status: number, code: string, title: string) => send(status, { errors: [{ status, code, title, detail: null }] });
    if (this.throttle > 0) return this.throttle--, void res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }).end('{"errors":[{"status":429,"code":"TOO_MANY_REQUESTS","title":"Rate limited"}]}');
    if (req.headers.authorization !== this.credential) return error(401, 'UNAUTHORIZED', 'Unauthorized; scope does not match');
    if (this.dataCenter) return this.handleV1(req, res);
    const u = new URL(req.url ?? '/', this.url);
    const download = /^\/wiki\/download\/attachments\/([^/]+)\/([^/]+)$/.exec(u.pathname);
    if (download) {
      const file = this.pages.get(download[1])?.attachments.find((a) => a.title === decodeURIComponent(download[2]));
      if (!file) return error(404, 'NOT_FOUND', 'Attachment not found');
      return void res.writeHead(302, { location: `${this.mediaUrl}/file/${download[1]}/${file.id}?token=signed-${file.id}` }).end();
    }
    const limit = Math.min(Number(u.searchParams.get('limit') ?? 25), this.maxLimit);
    const offset = Number(Buffer.from(u.searchParams.get('cursor') ?? '', 'base64url').toString() || 0);
    const listing = (items: unknown[]) => {
      const page = items.slice(offset, offset + limit);
      const more = offset + limit < items.length;
      const q = new URLSearchParams(u.searchParams);
      q.set('cursor', Buffer.from(String(offset + limit)).toString('base64url'));
      const next = `${u.pathname}?${q}`;
      send(200, { results: page, _links: { base: `${this.url}/wiki`, ...(more ? { next } : {}) } }, more ? { link: `<${next}>; rel="next"` } : {});
    };
    const m = /^\/wiki\/api\/v2\/(spaces|pages)(?:\/([^/]+))?(?:\/(pages|attachments))?$/.exec(u.pathname);
    if (!m) return error(404, 'NOT_FOUND', 'No route');
    const [, kind, id, sub] = m;
    if (kind === 'spaces' && !id) {
      const keys = u.searchParams.get('keys')?.split(',');
      return listing(this.spaces.filter((s) => (!keys || keys.includes(s.key)) && (!u.searchParams.get('type') || s.type === u.searchParams.get('type'))));
    }
    if (kind === 'spaces' && sub === 'pages') {
      if (!this.spaces.some((s) => s.id === id)) return error(404, 'NOT_FOUND', 'Space not found');
      const body = u.searchParams.get('body-format') === 'storage';
      return listing([...this.pages.values()].filter((p) => p.spaceId === id).sort((a, b) => a.id.localeCompare(b.id)).map((p) => this.pageJson(p, body)));
    }
    const page = kind === 'pages' && id ? this.pages.get(decodeURIComponent(id)) : undefined;
    if (!page) return error(404, 'NOT_FOUND', 'Page not found');
    if (!sub) return send(200, this.pageJson(page, u.searchParams.get('body-format') === 'storage'));
    if (sub === 'attachments') return listing(page.attachments.map((a) => ({ id: a.id, status: 'current', title: a.title, mediaType: a.mediaType, fileSize: a.data.length, pageId: page.id, version: { number: 1 }, downloadLink: `/download/attachments/${page.id}/${encodeURIComponent(a.title)}?version=1&api=v2`, _links: { download: `/download/attachments/${page.id}/${encodeURIComponent(a.title)}?version=1&api=v2` } })));
    return error(404, 'NOT_FOUND', 'No route');
  }

  private handleV1(req: IncomingMessage, res: ServerResponse): void {
    const send = (status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const error = (status: number, message: string) => send(status, { statusCode: status, message, data: { authorized: true, valid: false } });
    const u = new URL(req.url ?? '/', this.url);
    const path = u.pathname.replace(/^\/confluence/, '');
    const q = u.searchParams;
    const download = /^\/download\/attachments\/([^/]+)\/([^/]+)$/.exec(path);
    if (download) {
      const file = this.pages.get(download[1])?.attachments.find((a) => a.title === decodeURIComponent(download[2]));
      return file ? void res.writeHead(200, { 'content-type': file.mediaType }).end(file.data) : error(404, 'Attachment not found');
    }
    const listing = (items: unknown[]) => {
      const start = Number(q.get('start') ?? 0);
      const limit = Math.min(Number(q.get('limit') ?? 25), this.maxLimit);
      const page = items.slice(start, start + limit);
      const next = new URLSearchParams(q);
      next.set('start', String(start + limit));
      send(200, { results: page, start, limit, size: page.length, _links: { base: this.url, context: '/confluence', ...(start + limit < items.length ? { next: `${path}?${next}` } : {}) } });
    };
    const space = (id: string) => this.spaces.find((s) => s.id === id)!;
    const v1 = (p: WikiPage) => ({ id: p.id, type: 'page', status: 'current', title: p.title, space: { id: Number(p.spaceId), key: space(p.spaceId).key, name: space(p.spaceId).name }, version: { number: p.version, when: '2026-01-01T00:00:00.000Z' }, ...(q.get('expand')?.split(',').includes('body.storage') ? { body: { storage: { value: p.storage, representation: 'storage' } } } : {}), _links: { webui: `/display/${space(p.spaceId).key}/${encodeURIComponent(p.title)}` } });
    if (path === '/rest/api/space') return listing(this.spaces.filter((s) => (!q.has('spaceKey') || q.getAll('spaceKey').includes(s.key)) && (!q.has('type') || s.type === q.get('type'))).map((s) => ({ ...s, id: Number(s.id) })));
    if (path === '/rest/api/content') return listing([...this.pages.values()].filter((p) => q.get('type') === 'page' && space(p.spaceId).key === q.get('spaceKey')).sort((a, b) => a.id.localeCompare(b.id)).map(v1));
    const m = /^\/rest\/api\/content\/([^/]+)(\/child\/attachment)?$/.exec(path);
    const page = m ? this.pages.get(decodeURIComponent(m[1])) : undefined;
    if (!page) return error(404, 'No content found with id');
    if (!m![2]) return send(200, v1(page));
    listing(page.attachments.map((a) => ({ id: a.id, type: 'attachment', title: a.title, extensions: { mediaType: a.mediaType, fileSize: a.data.length }, _links: { download: `/download/attachments/${page.id}/${encodeURIComponent(a.title)}?version=1&api=v2` } })));
  }

  /** The media host: a signed URL needs no credential (and must not get one). */
  private serveMedia(req: IncomingMessage, res: ServerResponse): void {
    this.mediaRequests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    const m = /^\/file\/([^/]+)\/([^/?]+)\?token=signed-(.+)$/.exec(req.url ?? '');
    const file = m && m[2] === m[3] ? this.pages.get(m[1])?.attachments.find((a) => a.id === m[2]) : undefined;
    if (!file) return void res.writeHead(403).end();
    res.writeHead(200, { 'content-type': file.mediaType, 'content-length': String(file.data.length) }).end(file.data);
  }
}
