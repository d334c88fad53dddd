import { importPKCS8, SignJWT } from 'jose';
import { readUpTo } from '@lib/platform';
import type { PageVersion } from '../../../domain/pipeline-run';
import { driveFolderId, GoogleDriveScope, GoogleDriveSourceSettings } from '../../../domain/pipeline-google-drive-source';
import { download, fileText, MAX_FILE_BYTES, readable, readJson, SaasFetchJob, SaasFetchResult, send, serviceUrl, skipped, tokenCache } from '../saas-http';

interface DriveFile {
  id: string;
  name?: string;
  mimeType?: string;
  md5Checksum?: string;
  modifiedTime?: string;
  version?: string;
  size?: string;
  driveId?: string;
  webViewLink?: string;
}

const FOLDER = 'application/vnd.google-apps.folder';
const FILE_FIELDS = 'id,name,mimeType,md5Checksum,modifiedTime,version,size,driveId,webViewLink';
/** Google's own formats, exported as text (Drive's export is capped at 10 MB by Google). */
const EXPORTS: Record<string, string> = { 'application/vnd.google-apps.document': 'text/plain', 'application/vnd.google-apps.presentation': 'text/plain', 'application/vnd.google-apps.spreadsheet': 'text/csv' };
/** A name the extraction library reads, for a file whose own name has no such extension. */
const EXTENSIONS: Record<string, string> = { 'application/pdf': 'pdf', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx', 'text/plain': 'txt', 'text/html': 'html', 'text/markdown': 'md', 'application/rtf': 'rtf' };
/** Drive's rate limits are 403s with these reasons (besides 429): to be backed off, not failed (Drive's guide). */
async function rateLimited(res: Response): Promise<boolean> {
  if (res.status !== 403) return false;
  const { bytes } = await readUpTo(res.clone(), 64 * 1024);
  return /"reason"\s*:\s*"(userRateLimitExceeded|rateLimitExceeded)"/.test(bytes.toString('utf8'));
}
const driveError = (b: Record<string, unknown>) => (b.error as { message?: unknown } | undefined)?.message ?? b.error;

/**
 * Reads Google Drive (docs/pipelines.md, The Google Drive source): per scope, an access token from a service-
 * account JWT (RS256 with `private_key`, `sub` the user for `my_drive`), then `files.list` by folder
 * (`'<id>' in parents`, pageToken paging) through every subfolder; binary files by `files.get?alt=media` as
 * text through the extraction library, Google Docs, Slides and Sheets by `files.export`.
 */
export async function fetchGoogleDriveSource(job: SaasFetchJob<GoogleDriveSourceSettings>): Promise<SaasFetchResult> {
  const { source, signal } = job;
  const tokenUrl = serviceUrl(job.env, 'GOOGLE_OAUTH_TOKEN_URL', 'https://oauth2.googleapis.com/token');
  const api = serviceUrl(job.env, 'GOOGLE_DRIVE_API_URL', 'https://www.googleapis.com/drive/v3');
  let key: Awaited<ReturnType<typeof importPKCS8>> | undefined;
  const tokens = new Map<string, () => Promise<string>>();
  const tokenFor = (subject: string | null) => {
    const id = subject ?? '';
    if (!tokens.has(id))
      tokens.set(
        id,
        tokenCache(async () => {
          key ??= await importPKCS8(job.secrets.private_key ?? '', 'RS256').catch(() => {
            throw new Error('private_key is not a PEM PKCS#8 RSA private key (the private_key of the service account JSON key)');
          });
          const now = Math.floor(Date.now() / 1000);
          const assertion = await new SignJWT({ scope: 'https://www.googleapis.com/auth/drive.readonly', ...(subject ? { sub: subject } : {}) }).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).setIssuer(source.client_email).setAudience(tokenUrl).setIssuedAt(now).setExpirationTime(now + 3600).sign(key);
          const res = await send(job, tokenUrl, { method: 'POST', body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }), redirect: 'error' });
          const body = await readJson<{ access_token?: string; expires_in?: number }>(res, 'the Google token endpoint', (b) => b.error);
          if (!body.access_token) throw new Error('the Google token endpoint gave no access_token');
          return { token: body.access_token, expiresIn: body.expires_in ?? 3600 };
        }),
      );
    return tokens.get(id)!;
  };
  const auth = async (subject: string | null) => ({ authorization: `Bearer ${await tokenFor(subject)()}` });
  const get = async <T>(url: string, subject: string | null, what: string): Promise<T | null> => {
    const res = await send(job, url, { headers: { ...(await auth(subject)), accept: 'application/json' }, redirect: 'error' }, rateLimited);
    if (res.status === 404) return void (await res.body?.cancel()), null;
    return readJson<T>(res, what, driveError);
  };

  let fetched = 0;
  const taken = new Set<string>();
  const take = async (file: DriveFile, subject: string | null, path: string, scope: GoogleDriveScope): Promise<void> => {
    if (job.known.has(file.id) || signal.aborted) return;
    const exportAs = EXPORTS[file.mimeType ?? ''];
    const name = file.name ?? file.id;
    const asName = readable(name) ? name : `${name}.${EXTENSIONS[file.mimeType ?? ''] ?? ''}`;
    if (!exportAs && !readable(asName)) return skipped(file.id, `${name} (${file.mimeType}): a type the extraction library does not read`);
    if (Number(file.size ?? 0) > MAX_FILE_BYTES) return skipped(file.id, `${name}: larger than ${MAX_FILE_BYTES} bytes`);
    const id = encodeURIComponent(file.id);
    const url = exportAs ? `${api}/files/${id}/export?mimeType=${encodeURIComponent(exportAs)}` : `${api}/files/${id}?alt=media&supportsAllDrives=true`;
    const bytes = await download(job, url, await auth(subject), file.id, exportAs ? 'files.export' : 'files.get?alt=media', rateLimited);
    const text = !bytes ? null : exportAs ? bytes.toString('utf8').replace(/^\uFEFF/, '') : await fileText(job, bytes, asName, file.id);
    if (!text) return;
    fetched++;
    await job.onRecord({ recordId: file.id, title: name, text, metadata: { google_drive: { file_id: file.id, name, path, mime_type: file.mimeType ?? null, drive_id: file.driveId ?? null, web_view_link: file.webViewLink ?? null, modified_time: file.modifiedTime ?? null, version: file.version ?? null, md5_checksum: file.md5Checksum ?? null, scope } } });
  };
  const subjectOf = (s: GoogleDriveScope) => (s.type === 'my_drive' ? s.subject_email : null);

  if (job.only) {
    for (const id of job.only) {
      for (const scope of source.scopes) {
        const file = await get<DriveFile>(`${api}/files/${encodeURIComponent(id)}?fields=${FILE_FIELDS}&supportsAllDrives=true`, subjectOf(scope), 'files.get');
        if (file && file.mimeType !== FOLDER) {
          await take(file, subjectOf(scope), `/${file.name ?? id}`, scope);
          break;
        }
      }
    }
    return { fetched, seen: {}, complete: false };
  }

  const seen: Record<string, PageVersion> = {};
  for (const scope of source.scopes) {
    const subject = subjectOf(scope);
    const start = scope.url ? driveFolderId(scope.url)! : 'root';
    const top = await get<DriveFile>(`${api}/files/${encodeURIComponent(start)}?fields=${FILE_FIELDS}&supportsAllDrives=true`, subject, 'files.get');
    if (!top || top.mimeType !== FOLDER) throw new Error(`${scope.url ?? `the My Drive of ${subject}`} is not a folder the service account can read`);
    const queue = [{ id: top.id, path: '' }];
    for (let folder = queue.shift(); folder && !signal.aborted; folder = queue.shift()) {
      for (let pageToken: string | undefined = ''; pageToken !== undefined && !signal.aborted; ) {
        const q: URLSearchParams = new URLSearchParams({ q: `'${folder.id.replace(/['\\]/g, '')}' in parents and trashed = false`, fields: `nextPageToken,files(${FILE_FIELDS})`, pageSize: '1000', supportsAllDrives: 'true', includeItemsFromAllDrives: 'true', ...(top.driveId ? { corpora: 'drive', driveId: top.driveId } : { corpora: 'user' }), ...(pageToken ? { pageToken } : {}) });
        const page: { files?: DriveFile[]; nextPageToken?: string } | null = await get(`${api}/files?${q}`, subject, 'files.list');
        if (!page) throw new Error(`files.list of folder ${folder.id} answered 404`);
        for (const file of page.files ?? []) {
          if (signal.aborted) break;
          const path = `${folder.path}/${file.name ?? file.id}`;
          if (file.mimeType === FOLDER) queue.push({ id: file.id, path });
          if (file.mimeType === FOLDER || taken.has(file.id)) continue;
          taken.add(file.id); // A file under two scopes (or with two parents) is one record.
          // Content first (md5Checksum of binary files: a rename is no change); Google's own formats have only their version.
          seen[file.id] = { etag: file.md5Checksum ?? `v${file.version ?? file.modifiedTime ?? ''}`, ...(file.modifiedTime ? { lastModified: file.modifiedTime } : {}) };
          if (job.versions?.[file.id]?.etag === seen[file.id].etag) continue;
          await take(file, subject, path, scope);
        }
        pageToken = page.nextPageToken || undefined;
      }
    }
  }
  return { fetched, seen, complete: !signal.aborted };
}
