import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small SCIM 2.0 service provider (RFC 7643/7644) for the SCIM pipeline source's tests: `/Users` as a
 * ListResponse paged by `startIndex`/`count`, `GET /Users/{id}`, filters made of `eq` / `gt` comparisons
 * joined by `and` (parentheses allowed), `attributes` projection, bearer auth, SCIM Error bodies.
 */
export interface ScimUser {
  id: string;
  userName: string;
  displayName: string;
  active: boolean;
  title: string;
  emails: { value: string; type: string; primary?: boolean }[];
  meta: { resourceType: 'User'; created: string; lastModified: string; version: string; location: string };
}

const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

const valueAt = (u: ScimUser, path: string): unknown => path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[Object.keys(v).find((x) => x.toLowerCase() === k.toLowerCase()) ?? k] : undefined), u);

/** A predicate for `a eq "x" and (b gt "y")`; null when the filter is outside what this server understands. */
export function parseFilter(filter: string): ((u: ScimUser) => boolean) | null {
  const clauses: string[] = [];
  let depth = 0;
  let current = '';
  for (const part of filter.split(/(\(|\)|\s+and\s+)/i)) {
    if (part === '(') depth++ === 0 || (current += part);
    else if (part === ')') --depth === 0 || (current += part);
    else if (/^\s+and\s+$/i.test(part) && depth === 0) clauses.push(current), (current = '');
    else current += part;
  }
  clauses.push(current);
  const tests = clauses.map((c) => {
    const m = /^\s*([A-Za-z][\w.]*)\s+(eq|gt)\s+("(?:[^"\\]|\\.)*"|true|false)\s*$/i.exec(c);
    if (!m) return c.includes(' and ') || c.includes('(') ? parseFilter(c) : null;
    const [, path, op, raw] = m;
    const want = JSON.parse(raw) as unknown;
    if (op.toLowerCase() === 'eq') return (u: ScimUser) => { const v = valueAt(u, path); return typeof v === 'string' && typeof want === 'string' ? v.toLowerCase() === want.toLowerCase() : v === want; };
    // `gt` on a dateTime compares instants (RFC 7644 §3.4.2.2).
    return (u: ScimUser) => Date.parse(String(valueAt(u, path))) > Date.parse(String(want));
  });
  return tests.every((t) => t) ? (u) => tests.every((t) => t!(u)) : null;
}

export class ScimServer {
  readonly users = new Map<string, ScimUser>();
  readonly requests: { url: string; accept?: string; authorization?: string }[] = [];
  private clock = Date.parse('2026-01-01T00:00:00Z');
  private server!: Server;
  url = '';

  constructor(private readonly token: string) {}

  static async start(token: string): Promise<ScimServer> {
    const s = new ScimServer(token);
    s.server = createServer((req, res) => s.handle(req, res));
    await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r));
    s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}/scim/v2`;
    return s;
  }

  /** Adds or changes a user: a later `lastModified` (one second on) and a new version. */
  put(id: string, fields: Partial<Omit<ScimUser, 'id' | 'meta'>>): void {
    this.clock += 1000;
    const at = new Date(this.clock).toISOString();
    const before = this.users.get(id);
    const n = before ? Number(/\d+/.exec(before.meta.version)![0]) + 1 : 1;
    const base = before ?? { id, userName: id, displayName: id, active: true, title: '', emails: [] };
    this.users.set(id, { ...base, ...fields, id, meta: { resourceType: 'User', created: before?.meta.created ?? at, lastModified: at, version: `W/"${n}"`, location: `${this.url}/Users/${id}` } });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.requests.push({ url: req.url ?? '', accept: req.headers.accept, authorization: req.headers.authorization });
    const send = (status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/scim+json' }).end(JSON.stringify(body));
    const fail = (status: number, detail: string, scimType?: string) => send(status, { schemas: [ERROR], status: String(status), detail, ...(scimType ? { scimType } : {}) });
    if (req.headers.authorization !== `Bearer ${this.token}`) return fail(401, 'Authorization failure: the bearer token is not valid');
    const u = new URL(req.url ?? '/', 'http://x');
    const attributes = u.searchParams.get('attributes')?.split(',').map((a) => a.split('.')[0]);
    const project = (user: ScimUser) => ({ schemas: [USER], ...(attributes ? Object.fromEntries(Object.entries(user).filter(([k]) => k === 'id' || attributes.includes(k))) : user) });
    const one = /^\/scim\/v2\/Users\/([^/]+)$/.exec(u.pathname);
    if (one) {
      const user = this.users.get(decodeURIComponent(one[1]));
      return user ? send(200, project(user)) : fail(404, `Resource ${one[1]} not found`);
    }
    if (u.pathname !== '/scim/v2/Users') return fail(404, 'Unknown endpoint');
    const filterText = u.searchParams.get('filter');
    const filter = filterText ? parseFilter(filterText) : () => true;
    if (!filter) return fail(400, `Unsupported filter: ${filterText}`, 'invalidFilter');
    const matched = [...this.users.values()].filter(filter).sort((a, b) => a.id.localeCompare(b.id));
    const start = Math.max(1, Number(u.searchParams.get('startIndex') ?? 1));
    const count = Math.max(0, Number(u.searchParams.get('count') ?? 100));
    const page = matched.slice(start - 1, start - 1 + count);
    send(200, { schemas: [LIST], totalResults: matched.length, startIndex: start, itemsPerPage: page.length, Resources: page.map(project) });
  }
}
