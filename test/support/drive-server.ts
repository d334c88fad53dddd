import { createHash, createPublicKey, verify } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Google's token endpoint and Drive v3 for the Google Drive source's tests, from their published references:
 * `POST /token` (JWT-bearer grant: an RS256 assertion of a trusted service account, `aud` this endpoint, the
 * `drive.readonly` scope; `sub` only for users the Workspace admin delegated), `GET /drive/v3/files/{id}`
 * (`root` alias, `alt=media`; shared-drive items need `supportsAllDrives=true`), `/files/{id}/export`,
 * `GET /drive/v3/files?q='<id>' in parents and trashed = false` (pageToken paging; shared-drive items only with
 * `includeItemsFromAllDrives=true`), 403 `userRateLimitExceeded` on demand. A shared drive's files are visible to the service account (a member); a My
 * Drive's only to its owner's delegated token. Errors are `{error: {code, message, errors}}`.
 */
export interface DriveNode {
  id: string;
  name: string;
  mimeType: string;
  parent: string;
  driveId?: string;
  owner?: string;
  content?: Buffer;
  version: number;
}
export const FOLDER = 'application/vnd.google-apps.folder';
export const GDOC = 'application/vnd.google-apps.document';

export class DriveServer {
  readonly nodes = new Map<string, DriveNode>();
  readonly requests: { method: string; url: string; identity?: string }[] = [];
  readonly tokens = new Map<string, string>();
  /** The subjects each token request asked for (`sub`, or null for the service account itself). */
  readonly subjects: (string | null)[] = [];
  /** The next Drive requests answer 403 `userRateLimitExceeded` (Drive's rate limit answer besides 429). */
  rateLimit = 0;
  private readonly trusted = new Map<string, string>();
  private server!: Server;
  url = '';

  constructor(private readonly delegated: Set<string>) {}

  static async start(delegated: string[]): Promise<DriveServer> {
    const s = new DriveServer(new Set(delegated));
    s.server = createServer((req, res) => void s.handle(req, res));
    await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r));
    s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
    return s;
  }

  trust(email: string, publicKeyPem: string): void {
    this.trusted.set(email, publicKeyPem);
  }

  put(node: Omit<DriveNode, 'version'>): void {
    this.nodes.set(node.id, { ...node, version: (this.nodes.get(node.id)?.version ?? 0) + 1 });
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  private view(n: DriveNode): Record<string, unknown> {
    const binary = n.content && !n.mimeType.startsWith('application/vnd.google-apps.');
    return { kind: 'drive#file', id: n.id, name: n.name, mimeType: n.mimeType, parents: [n.parent], version: String(n.version), modifiedTime: new Date(Date.UTC(2026, 0, 1, 0, n.version)).toISOString(), ...(n.driveId ? { driveId: n.driveId } : {}), ...(binary ? { md5Checksum: createHash('md5').update(n.content!).digest('hex'), size: String(n.content!.length) } : {}), webViewLink: `https://drive.google.com/file/d/${n.id}/view` };
  }

  private token(form: URLSearchParams): { status: number; body: unknown } {
    const refuse = (status: number, error: string, why: string) => ({ status, body: { error, error_description: why } });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse(400, 'unsupported_grant_type', 'Invalid grant_type');
    const [head, payload, signature] = (form.get('assertion') ?? '').split('.');
    if (!head || !payload || !signature) return refuse(400, 'invalid_grant', 'Invalid JWT');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { iss?: string; aud?: string; scope?: string; sub?: string; exp?: number; iat?: number };
    const pem = claims.iss ? this.trusted.get(claims.iss) : undefined;
    if (!pem || !verify('RSA-SHA256', Buffer.from(`${head}.${payload}`), createPublicKey(pem), Buffer.from(signature, 'base64url'))) return refuse(400, 'invalid_grant', 'Invalid JWT Signature.');
    const now = Date.now() / 1000;
    if (claims.aud !== `${this.url}/token` || !claims.exp || claims.exp < now || !claims.iat || claims.iat > now + 60) return refuse(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe');
    if (claims.scope !== 'https://www.googleapis.com/auth/drive.readonly') return refuse(400, 'invalid_scope', 'Bad scope');
    if (claims.sub && !this.delegated.has(claims.sub)) return refuse(401, 'unauthorized_client', 'Client is unauthorized to retrieve access tokens using this method');
    this.subjects.push(claims.sub ?? null);
    const token = `ya29.drive-${this.tokens.size + 1}`;
    this.tokens.set(token, claims.sub ?? claims.iss!);
    return { status: 200, body: { access_token: token, expires_in: 3599, token_type: 'Bearer' } };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url!, this.url);
    const json = (status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const error = (status: number, reason: string, message: string) => json(status, { error: { code: status, message, errors: [{ reason, message, domain: 'global' }] } });
    if (req.method === 'POST' && url.pathname === '/token') {
      const t = this.token(new URLSearchParams(Buffer.concat(chunks).toString()));
      return json(t.status, t.body);
    }
    const identity = this.tokens.get(req.headers.authorization?.replace(/^Bearer /, '') ?? '');
    this.requests.push({ method: req.method!, url: req.url!, identity });
    if (!identity) return error(401, 'authError', 'Invalid Credentials');
    if (this.rateLimit > 0) return this.rateLimit--, error(403, 'userRateLimitExceeded', 'User Rate Limit Exceeded'), undefined;
    const allDrives = url.searchParams.get('supportsAllDrives') === 'true';
    const visible = (n: DriveNode | undefined): n is DriveNode => !!n && (n.driveId ? !n.owner : n.owner === identity) && (n.driveId ? !this.delegated.has(identity) : true);
    if (url.pathname === '/drive/v3/files') {
      const m = /^'([^']+)' in parents and trashed = false$/.exec(url.searchParams.get('q') ?? '');
      if (!m) return error(400, 'invalid', 'Invalid Value');
      const withShared = url.searchParams.get('includeItemsFromAllDrives') === 'true' && allDrives;
      const all = [...this.nodes.values()].filter((n) => n.parent === m[1] && visible(n) && (!n.driveId || withShared)).sort((a, b) => a.id.localeCompare(b.id));
      const start = Number(url.searchParams.get('pageToken') ?? 0);
      const next = start + 2 < all.length ? { nextPageToken: String(start + 2) } : {};
      return json(200, { kind: 'drive#fileList', files: all.slice(start, start + 2).map((n) => this.view(n)), ...next });
    }
    const m = /^\/drive\/v3\/files\/([^/]+)(\/export)?$/.exec(url.pathname);
    const id = m?.[1] === 'root' ? [...this.nodes.values()].find((n) => n.owner === identity && n.parent === '')?.id : m?.[1];
    const node = id ? this.nodes.get(id) : undefined;
    if (!m || !visible(node) || (node.driveId && !allDrives && !m[2])) return error(404, 'notFound', `File not found: ${m?.[1]}.`);
    const googleType = node.mimeType.startsWith('application/vnd.google-apps.');
    if (m[2]) return googleType && url.searchParams.get('mimeType') === 'text/plain' ? void res.writeHead(200, { 'content-type': 'text/plain' }).end(node.content) : error(403, 'fileNotExportable', 'Export only supports Docs Editors files.');
    if (url.searchParams.get('alt') === 'media') return googleType ? error(403, 'fileNotDownloadable', 'Only files with binary content can be downloaded. Use Export with Docs Editors files.') : void res.writeHead(200, { 'content-type': node.mimeType }).end(node.content);
    return json(200, this.view(node));
  }
}
