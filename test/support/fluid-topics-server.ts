import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small Fluid Topics portal for the fluid_topics source's tests, after its Knowledge Hub API: `GET
 * /api/khub/maps`, `/maps/{id}/topics` (the table of contents, nested), `/maps/{id}/topics/{contentId}/content`
 * (HTML), `/documents/{id}/content` (the file), and `POST /api/khub/clustered-search` (`query`, `filters` as
 * `[{key, values}]`, `contentLocale`, `paging {page, perPage}` with perPage capped at `maxPerPage`; clusters of
 * MAP/TOPIC/DOCUMENT entries, `paging.isLastPage`). The API key is checked as a bearer token.
 */
interface Meta {
  [key: string]: string[];
}
export interface PortalTopic {
  contentId: string;
  title: string;
  html: string;
  edition: string;
  children?: PortalTopic[];
}
export interface PortalMap {
  id: string;
  title: string;
  metadata: Meta;
  topics: PortalTopic[];
}
export interface PortalDocument {
  documentId: string;
  title: string;
  filename: string;
  mimeType: string;
  edition: string;
  metadata: Meta;
  data: Buffer;
}

const meta = (m: Meta, edition: string) => [...Object.entries(m).map(([key, values]) => ({ key, label: key, values })), { key: 'ft:lastEdition', label: 'Last edition', values: [edition] }];
const flat = (topics: PortalTopic[]): PortalTopic[] => topics.flatMap((t) => [t, ...flat(t.children ?? [])]);
const text = (html: string) => html.replace(/<[^>]+>/g, ' ');

export class FluidTopicsServer {
  readonly maps: PortalMap[] = [];
  readonly documents: PortalDocument[] = [];
  readonly requests: { method: string; url: string; body?: Record<string, unknown> }[] = [];
  maxPerPage = 2;
  private server!: Server;
  url = '';

  constructor(private readonly apiKey: string) {}

  static async start(apiKey: string): Promise<FluidTopicsServer> {
    const s = new FluidTopicsServer(apiKey);
    s.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => s.handle(req, res, body));
    });
    await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r));
    s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
    return s;
  }

  topic(mapId: string, contentId: string): PortalTopic {
    return flat(this.maps.find((m) => m.id === mapId)!.topics).find((t) => t.contentId === contentId)!;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private mapEdition(m: PortalMap): string {
    return flat(m.topics).map((t) => t.edition).sort().pop() ?? '';
  }

  private handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const send = (status: number, body: unknown, type = 'application/json') => void res.writeHead(status, { 'content-type': type }).end(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
    this.requests.push({ method: req.method ?? '', url: req.url ?? '', ...(body ? { body } : {}) });
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) return send(401, { message: 'The API key is missing or invalid' });
    const path = new URL(req.url ?? '/', this.url).pathname;
    if (req.method === 'POST' && path === '/api/khub/clustered-search') return this.search(body ?? {}, send);
    if (path === '/api/khub/maps') return send(200, this.maps.map((m) => ({ id: m.id, title: m.title, lastEdition: this.mapEdition(m), readerUrl: `${this.url}/r/${m.id}`, metadata: meta(m.metadata, this.mapEdition(m)) })));
    const toc = /^\/api\/khub\/maps\/([^/]+)\/topics$/.exec(path);
    const map = toc ? this.maps.find((m) => m.id === decodeURIComponent(toc[1])) : undefined;
    const tree = (ts: PortalTopic[]): unknown[] => ts.map((t) => ({ tocId: `toc-${t.contentId}`, contentId: t.contentId, title: t.title, children: tree(t.children ?? []) }));
    if (map) return send(200, tree(map.topics));
    const content = /^\/api\/khub\/maps\/([^/]+)\/topics\/([^/]+)\/content$/.exec(path);
    const topic = content ? this.maps.find((m) => m.id === decodeURIComponent(content[1])) && flat(this.maps.find((m) => m.id === decodeURIComponent(content[1]))!.topics).find((t) => t.contentId === decodeURIComponent(content[2])) : undefined;
    if (topic) return send(200, `<div class="content-locale-en-US">${topic.html}</div>`, 'text/html');
    const doc = /^\/api\/khub\/documents\/([^/]+)\/content$/.exec(path);
    const file = doc ? this.documents.find((d) => d.documentId === decodeURIComponent(doc[1])) : undefined;
    if (file) return send(200, file.data, file.mimeType);
    send(404, { message: 'Not found' });
  }

  private search(body: Record<string, unknown>, send: (status: number, body: unknown) => void): void {
    const query = String(body.query ?? '').toLowerCase();
    const filters = (body.filters ?? []) as { key: string; values: string[] }[];
    const paging = (body.paging ?? {}) as { page?: number; perPage?: number };
    const keep = (m: Meta, words: string) => filters.every((f) => (m[f.key] ?? []).some((v) => f.values.includes(v))) && (!query || words.toLowerCase().includes(query));
    const entries = [
      ...this.maps.flatMap((m) => flat(m.topics).filter((t) => keep(m.metadata, `${t.title} ${text(t.html)}`)).map((t) => ({ type: 'TOPIC', topic: { mapId: m.id, contentId: t.contentId, tocId: `toc-${t.contentId}`, title: t.title, mapTitle: m.title, breadcrumb: [m.title, t.title], readerUrl: `${this.url}/r/${m.id}/${t.contentId}`, metadata: meta(m.metadata, t.edition) } }))),
      ...this.documents.filter((d) => keep(d.metadata, d.title)).map((d) => ({ type: 'DOCUMENT', document: { documentId: d.documentId, title: d.title, filename: d.filename, mimeType: d.mimeType, metadata: meta(d.metadata, d.edition) } })),
    ];
    const perPage = Math.min(paging.perPage ?? 20, this.maxPerPage);
    const page = paging.page ?? 1;
    const results = entries.slice((page - 1) * perPage, page * perPage).map((e) => ({ metadataVariableAxis: '', entries: [e] }));
    send(200, { facets: [], results, announcements: [], paging: { currentPage: page, isLastPage: page * perPage >= entries.length, totalResultsCount: entries.length, totalClustersCount: entries.length } });
  }
}
