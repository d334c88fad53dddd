import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Microsoft's identity platform and Graph for the SharePoint source's tests, built from their published
 * references: `POST /{tenant}/oauth2/v2.0/token` (client credentials; wrong secret → 401 `invalid_client`),
 * `GET /v1.0/sites/{hostname}:/{path}`, `/sites/{id}/drive`, `/drives/{id}/root:/{path}`, `/drives/{id}/items/{id}`,
 * `/drives/{id}/root/delta` (server-driven paging by `@odata.nextLink`, `@odata.deltaLink` for changes since,
 * deleted items with the `deleted` facet, 410 for a token it no longer knows), `/items/{id}/content` (302 to a
 * pre-authenticated download URL). Graph errors are `{error: {code, message}}`; a 429 with `Retry-After` on demand.
 */
export interface GraphItem {
  id: string;
  name: string;
  parent: string;
  folder?: boolean;
  content?: Buffer;
  version: number;
  seq: number;
  deleted?: boolean;
}

export class GraphServer {
  readonly items = new Map<string, GraphItem>();
  readonly requests: { method: string; url: string; authorization?: string }[] = [];
  /** The next Graph requests answer 429 with `Retry-After: 0` (throttling). */
  throttle = 0;
  /** Delta tokens below this are unknown (410 resyncRequired). */
  expiredBefore = 0;
  readonly issued = new Set<string>();
  private seq = 0;
  private server!: Server;
  url = '';

  constructor(
    readonly tenant: string,
    readonly clientId: string,
    readonly secret: string,
    readonly driveId = 'b!drive-docs',
  ) {
    this.items.set('root', { id: 'root', name: 'root', parent: '', folder: true, version: 1, seq: 0 });
  }

  static async start(tenant: string, clientId: string, secret: string): Promise<GraphServer> {
    const s = new GraphServer(tenant, clientId, secret);
    s.server = createServer((req, res) => void s.handle(req, res));
    await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r));
    s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
    return s;
  }

  /** Adds or changes a file (a new version, a new eTag) or a folder. */
  put(id: string, name: string, parent: string, content?: Buffer): void {
    const before = this.items.get(id);
    this.items.set(id, { id, name, parent, ...(content ? { content } : { folder: true }), version: (before?.version ?? 0) + 1, seq: ++this.seq });
  }

  remove(id: string): void {
    const item = this.items.get(id)!;
    this.items.set(id, { ...item, deleted: true, seq: ++this.seq });
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  private view(i: GraphItem): Record<string, unknown> {
    if (i.deleted) return { id: i.id, deleted: { state: 'deleted' }, parentReference: { driveId: this.driveId, id: i.parent } };
    const base = { id: i.id, name: i.name, eTag: `"{${i.id}},${i.version}"`, lastModifiedDateTime: new Date(Date.UTC(2026, 0, 1, 0, 0, i.seq)).toISOString(), webUrl: `https://contoso.sharepoint.com/sites/legal/Shared%20Documents/${i.name}` };
    if (i.id === 'root') return { ...base, root: {}, folder: { childCount: 0 } };
    const parentReference = { driveId: this.driveId, driveType: 'documentLibrary', id: i.parent };
    return i.folder ? { ...base, folder: { childCount: 0 }, parentReference } : { ...base, cTag: `"c:{${i.id}},${i.version}"`, size: i.content!.length, file: { mimeType: 'application/octet-stream' }, parentReference };
  }

  private pathOf(i: GraphItem): string {
    return i.id === 'root' ? '' : `${this.pathOf(this.items.get(i.parent)!)}/${i.name}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url!, this.url);
    this.requests.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization });
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    const error = (status: number, code: string, message: string) => json(status, { error: { code, message } });
    if (req.method === 'POST' && url.pathname.endsWith('/oauth2/v2.0/token')) {
      const form = new URLSearchParams(Buffer.concat(chunks).toString());
      if (url.pathname !== `/${this.tenant}/oauth2/v2.0/token`) return json(400, { error: 'invalid_request', error_description: 'AADSTS90002: Tenant not found.' });
      if (form.get('grant_type') !== 'client_credentials' || form.get('scope') !== 'https://graph.microsoft.com/.default') return json(400, { error: 'invalid_scope', error_description: 'AADSTS70011' });
      if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.secret) return json(401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' });
      const token = `eyJ0eXAi.fake.${this.issued.size + 1}`;
      this.issued.add(token);
      return json(200, { token_type: 'Bearer', expires_in: 3599, access_token: token });
    }
    if (url.pathname.startsWith('/download/')) {
      const item = this.items.get(url.pathname.slice('/download/'.length));
      return item?.content && !item.deleted ? void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(item.content) : error(404, 'itemNotFound', 'gone');
    }
    if (!url.pathname.startsWith('/v1.0/')) return error(404, 'notFound', 'no such path');
    if (!this.issued.has(req.headers.authorization?.replace(/^Bearer /, '') ?? '')) return error(401, 'InvalidAuthenticationToken', 'Access token is empty.');
    if (this.throttle > 0) return this.throttle--, json(429, { error: { code: 'TooManyRequests', message: 'throttled' } }, { 'retry-after': '0' });
    const path = decodeURIComponent(url.pathname.slice('/v1.0'.length));
    let m: RegExpExecArray | null;
    if ((m = /^\/sites\/([^/:]+):(\/.*)$/.exec(path))) return m[1] === 'contoso.sharepoint.com' && m[2] === '/sites/legal' ? json(200, { id: 'contoso.sharepoint.com,site-1,web-1', name: 'legal', webUrl: 'https://contoso.sharepoint.com/sites/legal' }) : error(404, 'itemNotFound', 'Requested site could not be found');
    if (path === '/sites/contoso.sharepoint.com,site-1,web-1/drive') return json(200, { id: this.driveId, driveType: 'documentLibrary', name: 'Documents' });
    if (!path.startsWith(`/drives/${this.driveId}/`)) return error(404, 'itemNotFound', 'The resource could not be found.');
    const rest = path.slice(`/drives/${this.driveId}`.length);
    const live = [...this.items.values()].filter((i) => !i.deleted);
    if ((m = /^\/root:(\/.*)$/.exec(rest))) {
      const found = live.find((i) => this.pathOf(i) === m![1].replace(/\/$/, ''));
      return found ? json(200, this.view(found)) : error(404, 'itemNotFound', 'The resource could not be found.');
    }
    if (rest === '/root/delta') return this.delta(url, json, error);
    if ((m = /^\/items\/([^/]+)(\/content)?$/.exec(rest))) {
      const item = this.items.get(m[1]);
      if (!item || item.deleted) return error(404, 'itemNotFound', 'The resource could not be found.');
      return m[2] ? void res.writeHead(302, { location: `${this.url}/download/${item.id}?tempauth=abc` }).end() : json(200, this.view(item));
    }
    return error(400, 'invalidRequest', 'Invalid request');
  }

  /** Pages of 2; the snapshot's upper bound rides in the skip token, the delta token is the sequence number reached. */
  private delta(url: URL, json: (s: number, b: unknown) => void, error: (s: number, c: string, m: string) => void): void {
    const skip = url.searchParams.get('$skiptoken');
    const [since, upTo, offset] = skip ? skip.split('.').map(Number) : [url.searchParams.has('token') ? Number(url.searchParams.get('token')) : -1, this.seq, 0];
    if (since >= 0 && since < this.expiredBefore) return error(410, 'resyncRequired', 'Resync required. Replace any local items with the server version.');
    const all = [...this.items.values()].filter((i) => (since < 0 ? !i.deleted : i.seq > since) && i.seq <= upTo).sort((a, b) => a.seq - b.seq);
    const page = all.slice(offset, offset + 2);
    const base = `${this.url}/v1.0/drives/${this.driveId}/root/delta`;
    const next = offset + 2 < all.length ? { '@odata.nextLink': `${base}?$skiptoken=${since}.${upTo}.${offset + 2}` } : { '@odata.deltaLink': `${base}?token=${upTo}` };
    json(200, { value: page.map((i) => this.view(i)), ...next });
  }
}
