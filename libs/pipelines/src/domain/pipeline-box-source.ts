/**
 * The `box` source of a pipeline (docs/pipelines.md, The Box source): the files under a Box folder, read with a
 * Box app's Client Credentials Grant. Pure: a problem is a `[field, reason]` pair (a 400 naming it).
 * `auth.client_secret` is a secret field: the edge takes it out before `parse`, seals it and masks it on reads.
 */
import { isObject, type Problem } from './pipeline-source';

/** The reference's BoxCcgAuth without its secret. */
export interface BoxCcgAuthSettings {
  readonly type: 'ccg';
  readonly client_id: string;
  readonly enterprise_id: string;
}

export interface BoxSourceSettings {
  readonly type: 'box';
  /** The folder walked with every descendant; `0` is the enterprise's root. */
  readonly folder_id: string;
  readonly auth: BoxCcgAuthSettings;
  readonly secret_fields?: readonly string[];
}

const FIELDS = ['type', 'folder_id', 'auth'];
const AUTH_FIELDS = ['type', 'client_id', 'enterprise_id'];
// `https://app.box.com/folder/123` or an enterprise's `https://acme.app.box.com/folder/123`.
const FOLDER_URL = /^https:\/\/([a-z0-9-]+\.)?app\.box\.com\/folder\/(\d{1,20})\/?([?#].*)?$/i;


/** A folder id from an id or a Box folder URL (the reference accepts both); null when it is neither. */
export function boxFolderId(v: string): string | null {
  if (/^\d{1,20}$/.test(v)) return v;
  return FOLDER_URL.exec(v)?.[2] ?? null;
}

/** The settings without `auth.client_secret`; `base`: the stored source a PATCH merges into (`auth` fields merge too). */
export function parseBoxSource(v: Record<string, unknown>, base?: BoxSourceSettings): Omit<BoxSourceSettings, 'secret_fields'> | Problem {
  const extra = Object.keys(v).find((k) => !FIELDS.includes(k));
  if (extra) return [`source.${extra}`, 'is not a field of the box source'];
  const rawFolder = v.folder_id ?? base?.folder_id ?? '0';
  const folder = typeof rawFolder === 'string' ? boxFolderId(rawFolder.trim()) : null;
  if (!folder) return ['source.folder_id', 'must be a Box folder id (digits) or a Box folder URL such as https://app.box.com/folder/123'];
  if (v.auth !== undefined && !isObject(v.auth)) return ['source.auth', 'must be the ccg auth object: type, client_id, client_secret, enterprise_id'];
  const auth = { ...(base?.auth ?? {}), ...((v.auth as Record<string, unknown> | undefined) ?? {}) } as Record<string, unknown>;
  if (!base && v.auth === undefined) return ['source.auth', 'is required: type ccg, client_id, client_secret, enterprise_id'];
  const extraAuth = Object.keys(auth).find((k) => !AUTH_FIELDS.includes(k));
  if (extraAuth) return [`source.auth.${extraAuth}`, 'is not a field of ccg auth'];
  if ((auth.type ?? 'ccg') !== 'ccg') return ['source.auth.type', 'must be ccg (the Client Credentials Grant)'];
  if (typeof auth.client_id !== 'string' || !/^[A-Za-z0-9]{1,128}$/.test(auth.client_id)) return ['source.auth.client_id', 'is required: the Box app’s client id'];
  if (typeof auth.enterprise_id !== 'string' || !/^\d{1,20}$/.test(auth.enterprise_id)) return ['source.auth.enterprise_id', 'is required: the Box enterprise id (digits, as a string)'];
  return { type: 'box', folder_id: folder, auth: { type: 'ccg', client_id: auth.client_id, enterprise_id: auth.enterprise_id } };
}
