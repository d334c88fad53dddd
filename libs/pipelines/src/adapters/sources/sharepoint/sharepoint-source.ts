import type { PageVersion } from '../../../domain/pipeline-run';
import type { SharepointSourceSettings } from '../../../domain/pipeline-sharepoint-source';
import { download, fileText, MAX_FILE_BYTES, readable, readJson, SaasFetchJob, SaasFetchResult, send, serviceUrl, skipped, tokenCache } from '../saas-http';

/** A drive item as Graph answers it (the fields used here). */
interface DriveItem {
  id: string;
  name?: string;
  eTag?: string;
  lastModifiedDateTime?: string;
  size?: number;
  webUrl?: string;
  file?: { mimeType?: string };
  folder?: object;
  root?: object;
  deleted?: object;
  parentReference?: { id?: string };
}

const graphError = (b: Record<string, unknown>) => (b.error as { message?: unknown } | undefined)?.message;
// Sync-state keys that are not records start with `~` (a drive item id never does).
const cursorKey = (drive: string, folder: string | undefined) => `~delta:${drive}:${folder ?? ''}`;
const FOLDER = '~folder:';

/**
 * Reads a SharePoint document library through Microsoft Graph (docs/pipelines.md, The SharePoint source): a
 * client-credentials token from the Microsoft identity platform, the site from `site_url`, its library, the
 * items by `delta` (paged by `@odata.nextLink`; the `@odata.deltaLink` kept as the next run's cursor), each
 * file's `content` as text through the extraction library.
 */
export async function fetchSharepointSource(job: SaasFetchJob<SharepointSourceSettings>): Promise<SaasFetchResult> {
  const { source, signal } = job;
  const login = serviceUrl(job.env, 'SHAREPOINT_LOGIN_URL', 'https://login.microsoftonline.com');
  const graph = serviceUrl(job.env, 'MICROSOFT_GRAPH_URL', 'https://graph.microsoft.com/v1.0');
  const token = tokenCache(async () => {
    const form = new URLSearchParams({ client_id: source.client_id, client_secret: job.secrets.client_secret ?? '', scope: 'https://graph.microsoft.com/.default', grant_type: 'client_credentials' });
    const res = await send(job, `${login}/${encodeURIComponent(source.tenant_id)}/oauth2/v2.0/token`, { method: 'POST', body: form, redirect: 'error' });
    // Only the error code: the description is the identity platform's prose, with trace ids.
    const body = await readJson<{ access_token?: string; expires_in?: number }>(res, 'the Microsoft identity platform token endpoint', (b) => b.error);
    if (!body.access_token) throw new Error('the Microsoft identity platform gave no access_token');
    return { token: body.access_token, expiresIn: body.expires_in ?? 3600 };
  });
  const get = async <T>(url: string, what: string): Promise<{ status: number; body: T | null }> => {
    // Graph's paging links are absolute: followed only on Graph's own origin, so the token goes nowhere else.
    if (new URL(url).origin !== new URL(graph).origin) throw new Error(`${what}: Graph sent a link to another host`);
    const res = await send(job, url, { headers: { authorization: `Bearer ${await token()}`, accept: 'application/json' }, redirect: 'error' });
    if (res.status === 404 || res.status === 410) return void (await res.body?.cancel()), { status: res.status, body: null };
    return { status: res.status, body: await readJson<T>(res, what, graphError) };
  };

  const site = new URL(source.site_url);
  const path = site.pathname.replace(/\/+$/, '');
  const siteRes = await get<{ id: string }>(`${graph}/sites/${site.hostname}${path ? `:${encodeURI(path)}` : ''}`, 'GET /sites');
  if (!siteRes.body) throw new Error(`the site ${source.site_url} was not found`);
  const driveId = source.drive_id ?? (await get<{ id: string }>(`${graph}/sites/${siteRes.body.id}/drive`, 'GET /sites/{id}/drive')).body?.id;
  if (!driveId) throw new Error('the site has no default document library');
  const drive = `${graph}/drives/${encodeURIComponent(driveId)}`;
  const scope = source.folder_path ? (await get<DriveItem>(`${drive}/root:${encodeURI(source.folder_path)}`, 'GET the folder_path')).body : null;
  if (source.folder_path && !scope?.folder) throw new Error(`folder_path ${source.folder_path} is not a folder of the library`);

  let fetched = 0;
  const fetchedIds: string[] = [];
  const take = async (item: DriveItem): Promise<void> => {
    if (job.known.has(item.id) || signal.aborted) return;
    const name = item.name ?? item.id;
    if (!readable(name)) return skipped(item.id, `${name}: a type the extraction library does not read`);
    if ((item.size ?? 0) > MAX_FILE_BYTES) return skipped(item.id, `${name}: larger than ${MAX_FILE_BYTES} bytes`);
    const bytes = await download(job, `${drive}/items/${encodeURIComponent(item.id)}/content`, { authorization: `Bearer ${await token()}` }, item.id, 'GET /drives/{id}/items/{id}/content');
    const text = bytes && (await fileText(job, bytes, name, item.id));
    if (text === null || text === undefined) return;
    fetched++;
    fetchedIds.push(item.id);
    await job.onRecord({ recordId: item.id, title: name, text, metadata: { sharepoint: { site_url: source.site_url, drive_id: driveId, item_id: item.id, name, web_url: item.webUrl ?? null, mime_type: item.file?.mimeType ?? null, size: item.size ?? null, last_modified: item.lastModifiedDateTime ?? null, etag: item.eTag ?? null } } });
  };
  const itemById = async (id: string) => (await get<DriveItem>(`${drive}/items/${encodeURIComponent(id)}`, 'GET /drives/{id}/items/{id}')).body;

  if (job.only) {
    for (const id of job.only) {
      const item = await itemById(id);
      if (item?.file) await take(item);
    }
    return { fetched, seen: {}, complete: false };
  }

  const versions = job.versions;
  const key = cursorKey(driveId, source.folder_path);
  const cursor = versions?.[key];
  const folders = new Map<string, string | undefined>();
  const seen: Record<string, PageVersion> = {};
  const changed = new Map<string, DriveItem>();
  // A cursor Graph no longer knows (410) starts a full listing, compared with the last versions item by item.
  const listed = await (async (): Promise<{ fresh: boolean; deltaLink: string }> => {
    for (const fresh of cursor?.etag ? [false, true] : [true]) {
      changed.clear();
      folders.clear();
      for (const k of Object.keys(seen)) delete seen[k];
      if (!fresh) {
        for (const [id, v] of Object.entries(versions!)) if (id.startsWith(FOLDER)) folders.set(id.slice(FOLDER.length), v.links?.[0]);
        for (const [id, v] of Object.entries(versions!)) if (!id.startsWith('~')) seen[id] = v;
      }
      for (let url = fresh ? `${drive}/root/delta` : cursor!.etag!; !signal.aborted; ) {
        const page = await get<{ value?: DriveItem[]; '@odata.nextLink'?: string; '@odata.deltaLink'?: string }>(url, 'GET /drives/{id}/root/delta');
        if (!page.body) {
          if (page.status === 410 && !fresh) break;
          throw new Error(`GET /drives/{id}/root/delta answered ${page.status}`);
        }
        // The same item may come more than once: the last one is its state.
        for (const item of page.body.value ?? []) {
          if (item.deleted) (changed.delete(item.id), folders.delete(item.id), delete seen[item.id]);
          else if (item.folder || item.root) folders.set(item.id, item.parentReference?.id);
          else if (item.file) changed.set(item.id, item);
        }
        if (page.body['@odata.nextLink']) url = page.body['@odata.nextLink'];
        else if (page.body['@odata.deltaLink']) return { fresh, deltaLink: page.body['@odata.deltaLink'] };
        else throw new Error('GET /drives/{id}/root/delta answered a page with neither @odata.nextLink nor @odata.deltaLink');
      }
      if (signal.aborted) break;
    }
    return { fresh: true, deltaLink: '' };
  })();
  if (signal.aborted || !listed.deltaLink) return { fetched, seen: {}, complete: false };

  const inScope = (item: DriveItem): boolean => {
    if (!scope) return true;
    let at = item.parentReference?.id;
    for (let depth = 0; at && depth < 1000; depth++, at = folders.get(at)) if (at === scope.id) return true;
    return false;
  };
  for (const item of changed.values()) {
    if (signal.aborted) break;
    if (!inScope(item)) {
      delete seen[item.id]; // Moved out of the folder: gone from this source.
      continue;
    }
    const before = versions?.[item.id];
    seen[item.id] = { ...(item.eTag ? { etag: item.eTag } : {}), ...(item.lastModifiedDateTime ? { lastModified: item.lastModifiedDateTime } : {}) };
    if (before?.etag && before.etag === item.eTag) continue;
    await take(item);
  }
  // Files the last run fetched that did not go through (dead letters) have no version: read again by id.
  for (const id of cursor?.links ?? []) {
    if (signal.aborted || id in seen || changed.has(id)) continue;
    const item = await itemById(id);
    if (!item?.file || !inScope(item)) continue;
    seen[id] = { ...(item.eTag ? { etag: item.eTag } : {}) };
    await take(item);
  }
  if (scope) for (const [id, parent] of folders) seen[`${FOLDER}${id}`] = { links: parent ? [parent] : [] };
  seen[key] = { etag: listed.deltaLink, links: fetchedIds };
  return { fetched, seen, complete: !signal.aborted };
}
