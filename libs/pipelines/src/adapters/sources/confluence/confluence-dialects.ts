type Json = Record<string, unknown>;

/** An attachment as the source reads it, whichever API listed it. */
export interface Attachment {
  readonly id?: string;
  /** The attachment's own version (a new upload of the file raises it without editing the page). */
  readonly version?: number;
  readonly title: string;
  readonly mediaType?: string;
  readonly fileSize?: number;
  /** Relative to the site's web root (`{site}/wiki` on Cloud, `{site}` with its context path on Data Center). */
  readonly downloadLink?: string;
}

/**
 * The two Confluence REST APIs behind one shape: Cloud's v2 (`{site}/wiki/api/v2`, spaces by id, cursor links
 * from the origin) and Data Center's v1 (`{site}/rest/api`, spaces by key, `expand`, `start`/`limit` links
 * from the site's context path). Pages and attachments come out in the v2 shape the record is built from.
 */
export interface ConfluenceDialect {
  /** Where page links (`webui`) and attachment downloads are rooted. */
  readonly web: string;
  /** `_links.next` resolved to a URL. */
  next(link: string): string;
  spaces(keys: readonly string[]): string[];
  pages(space: { id: string; key: string }, withBody: boolean): string;
  page(id: string): string;
  attachments(pageId: string): string;
  /** The page in the v2 shape (`spaceId`, `version.number`, `body.storage.value`, `_links.webui`), with its space key when known. */
  normPage(page: Json): { page: Json; spaceKey: string | null };
  normAttachment(item: Json): Attachment;
}

const chunks = <T>(xs: readonly T[], n: number): T[][] => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));
const enc = encodeURIComponent;

export function cloudDialect(site: string): ConfluenceDialect {
  const api = `${site}/wiki/api/v2`;
  return {
    web: `${site}/wiki`,
    next: (link) => new URL(link, site).href,
    spaces: (keys) => (keys.length ? chunks(keys, 100).map((b) => `${api}/spaces?keys=${b.map(enc).join(',')}&limit=250`) : [`${api}/spaces?type=global&limit=250`]),
    pages: (space, withBody) => `${api}/spaces/${enc(space.id)}/pages?limit=250&status=current${withBody ? '&body-format=storage' : ''}`,
    page: (id) => `${api}/pages/${enc(id)}?body-format=storage`,
    attachments: (id) => `${api}/pages/${enc(id)}/attachments?limit=250`,
    normPage: (page) => ({ page, spaceKey: null }),
    normAttachment: (a) => ({ ...(a as unknown as Attachment), id: a.id === undefined ? undefined : String(a.id), version: (a.version as { number?: number } | undefined)?.number }),
  };
}

export function dataCenterDialect(site: string): ConfluenceDialect {
  const api = `${site}/rest/api`;
  const expand = (body: boolean) => `expand=version,space${body ? ',body.storage' : ''}`;
  return {
    web: site,
    // v1 links are paths under the site's context path (`_links.base`), not under its origin.
    next: (link) => new URL(link.startsWith('/') ? `${site}${link}` : link, site).href,
    spaces: (keys) => (keys.length ? chunks(keys, 100).map((b) => `${api}/space?${b.map((k) => `spaceKey=${enc(k)}`).join('&')}&limit=100`) : [`${api}/space?type=global&limit=100`]),
    pages: (space, withBody) => `${api}/content?spaceKey=${enc(space.key)}&type=page&status=current&limit=100&${expand(withBody)}`,
    page: (id) => `${api}/content/${enc(id)}?${expand(true)}`,
    attachments: (id) => `${api}/content/${enc(id)}/child/attachment?limit=100&expand=version`,
    normPage: (p) => {
      const version = (p.version ?? {}) as Json;
      const space = (p.space ?? {}) as Json;
      const body = (p.body as { storage?: unknown } | undefined)?.storage ? { body: p.body } : {};
      return { page: { id: p.id, title: p.title, spaceId: space.id ?? null, version: { number: version.number, createdAt: version.when }, _links: p._links, ...body }, spaceKey: typeof space.key === 'string' ? space.key : null };
    },
    normAttachment: (a) => {
      const ext = (a.extensions ?? {}) as Json;
      return { id: a.id === undefined ? undefined : String(a.id), version: (a.version as { number?: number } | undefined)?.number, title: String(a.title), mediaType: ext.mediaType as string | undefined, fileSize: ext.fileSize as number | undefined, downloadLink: (a._links as { download?: string } | undefined)?.download };
    },
  };
}
