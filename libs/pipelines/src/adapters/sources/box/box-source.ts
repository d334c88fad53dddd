import { createHash } from 'node:crypto';
import type { PageVersion } from '../../../domain/pipeline-run';
import type { BoxSourceSettings } from '../../../domain/pipeline-box-source';
import { download, fileText, MAX_FILE_BYTES, readable, readJson, SaasFetchJob, SaasFetchResult, send, serviceUrl, skipped, tokenCache } from '../saas-http';

interface BoxItem {
  type: 'file' | 'folder' | 'web_link';
  id: string;
  name?: string;
  etag?: string;
  sha1?: string;
  size?: number;
  modified_at?: string;
  path_collection?: { entries?: { id: string; name?: string }[] };
}
/** A collaboration as document-level ACL: who (user or group) has which role. */
export interface BoxAcl {
  readonly type: string;
  readonly id: string;
  readonly name: string | null;
  readonly login: string | null;
  readonly role: string;
}
interface Collaboration {
  role?: string;
  status?: string;
  accessible_by?: { type?: string; id?: string; name?: string; login?: string } | null;
}

const FIELDS = 'type,id,name,etag,sha1,size,modified_at';
const boxError = (b: Record<string, unknown>) => [b.code, b.message].filter((x) => typeof x === 'string').join(' ') || b.error;
const aclKey = (a: BoxAcl) => `${a.type}:${a.id}:${a.role}`;
const union = (a: readonly BoxAcl[], b: readonly BoxAcl[]): BoxAcl[] => [...new Map([...a, ...b].map((x) => [aclKey(x), x])).values()];

/**
 * Reads the files under a Box folder (docs/pipelines.md, The Box source): a Client Credentials Grant token for
 * the enterprise, `GET /2.0/folders/{id}/items` (marker paging) walked through every subfolder, each file's
 * `content` as text through the extraction library, its collaborations and its folders' as ACL metadata.
 */
export async function fetchBoxSource(job: SaasFetchJob<BoxSourceSettings>): Promise<SaasFetchResult> {
  const { source, signal } = job;
  const host = serviceUrl(job.env, 'BOX_API_URL', 'https://api.box.com');
  const api = `${host}/2.0`;
  const token = tokenCache(async () => {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: source.auth.client_id, client_secret: job.secrets['auth.client_secret'] ?? '', box_subject_type: 'enterprise', box_subject_id: source.auth.enterprise_id });
    const res = await send(job, `${host}/oauth2/token`, { method: 'POST', body: form, redirect: 'error' });
    const body = await readJson<{ access_token?: string; expires_in?: number }>(res, 'the Box token endpoint', (b) => b.error);
    if (!body.access_token) throw new Error('the Box token endpoint gave no access_token');
    return { token: body.access_token, expiresIn: body.expires_in ?? 3600 };
  });
  const get = async <T>(path: string, what: string): Promise<T | null> => {
    const res = await send(job, `${api}${path}`, { headers: { authorization: `Bearer ${await token()}`, accept: 'application/json' }, redirect: 'error' });
    if (res.status === 404) return void (await res.body?.cancel()), null;
    return readJson<T>(res, what, boxError);
  };
  /** Every accepted collaboration on a folder or file (marker paging), as ACL entries. */
  const collaborations = async (kind: 'folders' | 'files', id: string): Promise<BoxAcl[]> => {
    if (kind === 'folders' && id === '0') return []; // The root is no folder one can collaborate on.
    const out: BoxAcl[] = [];
    for (let marker: string | null = ''; marker !== null && !signal.aborted; ) {
      const page: { entries?: Collaboration[]; next_marker?: string | null } | null = await get(`/${kind}/${encodeURIComponent(id)}/collaborations?fields=role,status,accessible_by&limit=1000${marker ? `&marker=${encodeURIComponent(marker)}` : ''}`, `GET /${kind}/{id}/collaborations`);
      for (const c of page?.entries ?? []) {
        const who = c.accessible_by;
        if (c.status === 'accepted' && who?.type && who.id) out.push({ type: who.type, id: who.id, name: who.name ?? null, login: who.login ?? null, role: c.role ?? 'viewer' });
      }
      marker = page?.next_marker || null;
    }
    return out;
  };
  /** The collaborations a folder inherits from its ancestors within reach (path_collection, the root left out). */
  const inherited = async (ancestors: readonly { id: string }[]): Promise<BoxAcl[]> => {
    let acl: BoxAcl[] = [];
    for (const a of ancestors) acl = union(acl, await collaborations('folders', a.id));
    return acl;
  };

  let fetched = 0;
  const take = async (file: BoxItem, path: string, folderAcl: readonly BoxAcl[]): Promise<void> => {
    const name = file.name ?? file.id;
    if (job.known.has(file.id) || signal.aborted) return;
    if (!readable(name)) return skipped(file.id, `${name}: a type the extraction library does not read`);
    if ((file.size ?? 0) > MAX_FILE_BYTES) return skipped(file.id, `${name}: larger than ${MAX_FILE_BYTES} bytes`);
    const acl = union(folderAcl, await collaborations('files', file.id));
    const bytes = await download(job, `${api}/files/${encodeURIComponent(file.id)}/content`, { authorization: `Bearer ${await token()}` }, file.id, 'GET /files/{id}/content');
    const text = bytes && (await fileText(job, bytes, name, file.id));
    if (text === null || text === undefined) return;
    fetched++;
    await job.onRecord({ recordId: file.id, title: name, text, metadata: { box: { file_id: file.id, name, path, sha1: file.sha1 ?? null, etag: file.etag ?? null, modified_at: file.modified_at ?? null, size: file.size ?? null, web_url: `https://app.box.com/file/${file.id}`, collaborations: acl } } });
  };

  if (job.only) {
    for (const id of job.only) {
      const file = await get<BoxItem>(`/files/${encodeURIComponent(id)}?fields=${FIELDS},path_collection`, 'GET /files/{id}');
      if (!file) continue;
      const chain = file.path_collection?.entries ?? [];
      const from = chain.findIndex((f) => f.id === source.folder_id);
      if (from < 0) continue; // Moved out of the pipeline's folder.
      await take(file, ['', ...chain.slice(from + 1).map((f) => f.name), file.name].join('/'), await inherited(chain));
    }
    return { fetched, seen: {}, complete: false };
  }

  const top = await get<BoxItem>(`/folders/${encodeURIComponent(source.folder_id)}?fields=id,name,path_collection`, 'GET /folders/{id}');
  if (!top) throw new Error(`the Box folder ${source.folder_id} was not found (or the app cannot see it)`);
  const seen: Record<string, PageVersion> = {};
  const queue: { id: string; path: string; acl: BoxAcl[] }[] = [{ id: source.folder_id, path: '', acl: union(await inherited(top.path_collection?.entries ?? []), await collaborations('folders', source.folder_id)) }];
  for (let folder = queue.shift(); folder && !signal.aborted; folder = queue.shift()) {
    // The folders' collaborations are part of each file's version: a changed share makes its files records again.
    const aclHash = createHash('sha256').update(JSON.stringify(folder.acl.map(aclKey).sort())).digest('hex').slice(0, 16);
    for (let marker: string | null = ''; marker !== null && !signal.aborted; ) {
      const page: { entries?: BoxItem[]; next_marker?: string | null } | null = await get(`/folders/${encodeURIComponent(folder.id)}/items?fields=${FIELDS}&limit=1000&usemarker=true${marker ? `&marker=${encodeURIComponent(marker)}` : ''}`, 'GET /folders/{id}/items');
      if (!page) throw new Error(`the Box folder ${folder.id} disappeared while it was read`);
      for (const item of page.entries ?? []) {
        if (signal.aborted) break;
        const path = `${folder.path}/${item.name ?? item.id}`;
        if (item.type === 'folder') queue.push({ id: item.id, path, acl: union(folder.acl, await collaborations('folders', item.id)) });
        if (item.type !== 'file') continue;
        const version: PageVersion = { etag: `${item.sha1 ?? item.etag ?? ''}|acl:${aclHash}`, ...(item.modified_at ? { lastModified: item.modified_at } : {}) };
        seen[item.id] = version;
        if (job.versions?.[item.id]?.etag === version.etag) continue;
        await take(item, path, folder.acl);
      }
      marker = page.next_marker || null;
    }
  }
  return { fetched, seen, complete: !signal.aborted };
}
