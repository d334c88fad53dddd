/**
 * The `google_drive` source of a pipeline (docs/pipelines.md, The Google Drive source): files of shared drives and
 * of users' My Drives, read with a service account. Pure: a problem is a `[field, reason]` pair (a 400 naming
 * it). `private_key` is a secret field: the edge takes it out before `parse`, seals it and masks it on reads.
 */
import type { Problem } from './pipeline-source';

/** The reference's GoogleDriveScope: a shared drive (or a folder of one), or a user's My Drive by delegation. */
export type GoogleDriveScope = { readonly type: 'shared'; readonly url: string } | { readonly type: 'my_drive'; readonly subject_email: string; readonly url?: string };

export interface GoogleDriveSourceSettings {
  readonly type: 'google_drive';
  readonly scopes: readonly GoogleDriveScope[];
  readonly client_email: string;
  readonly secret_fields?: readonly string[];
  /** None: the credential is `private_key` (code reading any source's generic `auth` sees it absent). */
  readonly auth?: never;
}

const FIELDS = ['type', 'scopes', 'client_email'];
const EMAIL = /^[^\s@]{1,256}@[^\s@]{1,253}\.[^\s@]{1,63}$/;
// `https://drive.google.com/drive/folders/<id>`, with an account segment (`/drive/u/0/folders/…`) or a query.
const FOLDER_URL = /^https:\/\/drive\.google\.com\/drive\/(?:u\/\d+\/)?folders\/([A-Za-z0-9_-]{10,200})\/?(?:[?#].*)?$/;

/** The folder (or shared drive) id of a Drive folder URL; null when it is not one. */
export function driveFolderId(url: string): string | null {
  return FOLDER_URL.exec(url)?.[1] ?? null;
}

function parseScope(v: unknown, at: string): GoogleDriveScope | Problem {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return [at, 'must be a scope object with a type: shared or my_drive'];
  const s = v as Record<string, unknown>;
  const allowed = s.type === 'shared' ? ['type', 'url'] : ['type', 'subject_email', 'url'];
  if (s.type !== 'shared' && s.type !== 'my_drive') return [`${at}.type`, 'must be shared or my_drive'];
  const extra = Object.keys(s).find((k) => !allowed.includes(k));
  if (extra) return [`${at}.${extra}`, `is not a field of a ${s.type} scope`];
  const urlGiven = s.url !== undefined && s.url !== null;
  if ((s.type === 'shared' || urlGiven) && (typeof s.url !== 'string' || !driveFolderId(s.url))) return [`${at}.url`, `${s.type === 'shared' ? 'is required: ' : 'must be '}a Drive folder URL such as https://drive.google.com/drive/folders/<id>`];
  if (s.type === 'shared') return { type: 'shared', url: s.url as string };
  if (typeof s.subject_email !== 'string' || !EMAIL.test(s.subject_email)) return [`${at}.subject_email`, 'is required: the email of the user whose My Drive is read'];
  return { type: 'my_drive', subject_email: s.subject_email, ...(urlGiven ? { url: s.url as string } : {}) };
}

/** The settings without `private_key`; `base`: the stored source a PATCH merges into (a given `scopes` replaces the list). */
export function parseGoogleDriveSource(v: Record<string, unknown>, base?: GoogleDriveSourceSettings): Omit<GoogleDriveSourceSettings, 'secret_fields' | 'auth'> | Problem {
  const extra = Object.keys(v).find((k) => !FIELDS.includes(k));
  if (extra) return [`source.${extra}`, 'is not a field of the google_drive source'];
  const rawScopes = v.scopes ?? base?.scopes;
  if (!Array.isArray(rawScopes) || rawScopes.length < 1 || rawScopes.length > 50) return ['source.scopes', 'is required: a list of 1 to 50 scopes (shared or my_drive)'];
  const scopes: GoogleDriveScope[] = [];
  for (const [i, s] of rawScopes.entries()) {
    const parsed = parseScope(s, `source.scopes[${i}]`);
    if (Array.isArray(parsed)) return parsed as unknown as Problem;
    scopes.push(parsed as GoogleDriveScope);
  }
  const email = v.client_email ?? base?.client_email;
  if (typeof email !== 'string' || !EMAIL.test(email)) return ['source.client_email', 'is required: the service account’s email (client_email of its JSON key)'];
  return { type: 'google_drive', scopes, client_email: email };
}
