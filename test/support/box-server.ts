import { createHash } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Box's API for the Box source's tests, from its published reference: `POST /oauth2/token` (Client Credentials
 * Grant with `box_subject_type=enterprise`; wrong credentials → 400 `invalid_client`), `GET /2.0/folders/{id}`
 * (with `path_collection`), `/2.0/folders/{id}/items` (`usemarker=true`, `marker`, `limit`, `fields`),
 * `/2.0/{folders|files}/{id}/collaborations`, `/2.0/files/{id}` and `/2.0/files/{id}/content` (302 to a download
 * URL). Errors are Box's `{type: error, status, code, message}`; a 429 with `Retry-After` on demand.
 */
export interface BoxNode {
  id: string;
  name: string;
  parent: string;
  folder: boolean;
  content?: Buffer;
  version: number;
}
export interface BoxCollab {
  on: string;
  user: { id: string; name: string; login: string };
  role: string;
  status: 'accepted' | 'pending';
}

export class BoxServer {
  readonly nodes = new Map<string, BoxNode>([['0', { id: '0', name: 'All Files', parent: '', folder: true, version: 0 }]]);
  readonly collabs: BoxCollab[] = [];
  readonly requests: { method: string; url: string; authorization?: string }[] = [];
  /** The next API requests answer 429 with `Retry-After: 0`. */
  throttle = 0;
  /** Entries per page of a folder listing, whatever `limit` asks (Box may answer fewer). */
  pageSize = 2;
  private readonly issued = new Set<string>();
  private server!: Server;
  url = '';

  constructor(private readonly creds: { clientId: string; secret: string; enterprise: string }) {}

  static async start(creds: { clientId: string; secret: string; enterprise: string }): Promise<BoxServer> {
    const s = new BoxServer(creds);
    s.server = createServer((req, res) => void s.handle(req, res));
    await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r));
    s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
    return s;
  }

  put(id: string, name: string, parent: string, content?: Buffer): void {
    this.nodes.set(id, { id, name, parent, folder: !content, ...(content ? { content } : {}), version: (this.nodes.get(id)?.version ?? 0) + 1 });
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  private chain(n: BoxNode): BoxNode[] {
    return n.parent ? [...this.chain(this.nodes.get(n.parent)!), this.nodes.get(n.parent)!] : [];
  }

  private view(n: BoxNode, fields: string[] | null): Record<string, unknown> {
    const full: Record<string, unknown> = {
      type: n.folder ? 'folder' : 'file',
      id: n.id,
      name: n.name,
      etag: String(n.version),
      ...(n.folder ? {} : { sha1: createHash('sha1').update(n.content!).digest('hex'), size: n.content!.length }),
      modified_at: new Date(Date.UTC(2026, 0, 1, 0, n.version)).toISOString().replace('.000Z', '-00:00'),
      path_collection: { total_count: this.chain(n).length, entries: this.chain(n).map((c) => ({ type: 'folder', id: c.id, name: c.name, etag: String(c.version) })) },
    };
    // Box answers the mini representation plus the fields asked for.
    return fields ? Object.fromEntries(Object.entries(full).filter(([k]) => ['type', 'id', 'etag', 'name', ...fields].includes(k))) : full;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url!, this.url);
    this.requests.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization });
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    const error = (status: number, code: string, message: string) => json(status, { type: 'error', status, code, message, request_id: 'req1' });
    if (req.method === 'POST' && url.pathname === '/oauth2/token') {
      const f = new URLSearchParams(Buffer.concat(chunks).toString());
      if (f.get('grant_type') !== 'client_credentials' || f.get('box_subject_type') !== 'enterprise') return json(400, { error: 'invalid_grant', error_description: 'Grant type or subject type not supported' });
      if (f.get('client_id') !== this.creds.clientId || f.get('client_secret') !== this.creds.secret) return json(400, { error: 'invalid_client', error_description: 'The client credentials are invalid' });
      if (f.get('box_subject_id') !== this.creds.enterprise) return json(400, { error: 'invalid_grant', error_description: 'Please check the box_subject_id' });
      const token = `box-token-${this.issued.size + 1}`;
      this.issued.add(token);
      return json(200, { access_token: token, expires_in: 3600, token_type: 'bearer', restricted_to: [] });
    }
    if (url.pathname.startsWith('/dl/')) {
      const n = this.nodes.get(url.pathname.slice(4));
      return n?.content ? void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(n.content) : error(404, 'not_found', 'Not Found');
    }
    if (!this.issued.has(req.headers.authorization?.replace(/^Bearer /, '') ?? '')) return void res.writeHead(401, { 'www-authenticate': 'Bearer realm="Service", error="invalid_token"' }).end();
    if (this.throttle > 0) return this.throttle--, error(429, 'rate_limit_exceeded', 'Request rate limit exceeded, please try again later'), undefined;
    const fields = url.searchParams.get('fields')?.split(',') ?? null;
    const m = /^\/2\.0\/(folders|files)\/(\d+)(\/items|\/collaborations|\/content)?$/.exec(url.pathname);
    const node = m ? this.nodes.get(m[2]) : undefined;
    if (!m || !node || node.folder !== (m[1] === 'folders')) return error(404, 'not_found', 'Not Found');
    if (m[3] === '/content') return void res.writeHead(302, { location: `${this.url}/dl/${node.id}` }).end();
    if (m[3] === '/collaborations') {
      const entries = this.collabs.filter((c) => c.on === node.id).map((c, i) => ({ type: 'collaboration', id: `${node.id}-${i}`, role: c.role, status: c.status, accessible_by: { type: 'user', ...c.user } }));
      return json(200, { entries, limit: 1000, next_marker: null });
    }
    if (m[3] === '/items') {
      if (url.searchParams.get('usemarker') !== 'true') return error(400, 'bad_request', 'this fake pages by marker only');
      const children = [...this.nodes.values()].filter((n) => n.parent === node.id).sort((a, b) => a.id.localeCompare(b.id));
      const start = Number(url.searchParams.get('marker') ?? 0);
      const size = Math.min(this.pageSize, Number(url.searchParams.get('limit') ?? 100));
      const next = start + size < children.length ? String(start + size) : null;
      return json(200, { entries: children.slice(start, start + size).map((n) => this.view(n, fields)), limit: size, next_marker: next });
    }
    return json(200, this.view(node, fields));
  }
}
