/**
 * The `sharepoint` source of a pipeline (docs/pipelines.md, The SharePoint source): the files of a site's document
 * library read through Microsoft Graph with an app's client credentials. Pure: a problem is a `[field, reason]`
 * pair (a 400 naming it). `client_secret` is a secret field: the edge takes it out before `parse`, seals it and
 * masks it on reads.
 */
import type { Problem } from './pipeline-source';

export interface SharepointSourceSettings {
  readonly type: 'sharepoint';
  /** `https://<tenant>.sharepoint.com/sites/<name>` (or the tenant's root site). */
  readonly site_url: string;
  readonly tenant_id: string;
  readonly client_id: string;
  /** A document library's id; absent: the site's default library (the reference's fields are strings: absent, not null). */
  readonly drive_id?: string;
  /** `/Contracts/2026`: only files under this folder; absent: the whole library. */
  readonly folder_path?: string;
  readonly secret_fields?: readonly string[];
  /** None: the credential is `client_secret` (code reading any source's generic `auth` sees it absent). */
  readonly auth?: never;
}

const FIELDS = ['type', 'site_url', 'tenant_id', 'client_id', 'drive_id', 'folder_path'];
// A tenant is a GUID or a verified domain (contoso.onmicrosoft.com); it is a path segment of the token URL.
const TENANT = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)$/i;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const given = <T>(v: unknown, base: T | undefined): unknown => (v === undefined ? base : v);

/** The settings without `client_secret`; `base`: the stored source a PATCH merges into (`null` clears `drive_id` or `folder_path`). */
export function parseSharepointSource(v: Record<string, unknown>, base?: SharepointSourceSettings): Omit<SharepointSourceSettings, 'secret_fields'> | Problem {
  const extra = Object.keys(v).find((k) => !FIELDS.includes(k));
  if (extra) return [`source.${extra}`, 'is not a field of the sharepoint source'];
  const siteUrl = given(v.site_url, base?.site_url);
  if (typeof siteUrl !== 'string' || siteUrl.length > 2048) return ['source.site_url', 'is required: the https URL of the SharePoint site'];
  let site: URL;
  try {
    site = new URL(siteUrl);
  } catch {
    return ['source.site_url', 'is not a valid URL'];
  }
  if (site.protocol !== 'https:' || site.search || site.hash || site.username || site.password) return ['source.site_url', 'must be an https URL of a site, without query, fragment or user info'];
  const tenant = given(v.tenant_id, base?.tenant_id);
  if (typeof tenant !== 'string' || !TENANT.test(tenant)) return ['source.tenant_id', 'is required: the Microsoft Entra tenant id (a GUID) or its domain'];
  const client = given(v.client_id, base?.client_id);
  if (typeof client !== 'string' || !GUID.test(client)) return ['source.client_id', 'is required: the application (client) id, a GUID'];
  const drive = given(v.drive_id, base?.drive_id ?? null);
  if (drive !== null && (typeof drive !== 'string' || !/^[A-Za-z0-9!_-]{1,256}$/.test(drive))) return ['source.drive_id', 'must be a document library (drive) id'];
  const folder = given(v.folder_path, base?.folder_path ?? null);
  if (folder !== null && (typeof folder !== 'string' || folder.length > 1024 || /[\r\n#?%]|\/\/|(^|\/)\.\.?(\/|$)/.test(folder))) return ['source.folder_path', 'must be a folder path such as /Contracts/2026 (no ., .., #, ?, %)'];
  const trimmed = typeof folder === 'string' ? folder.replace(/^\/+|\/+$/g, '') : '';
  return {
    type: 'sharepoint',
    site_url: site.href.replace(/\/+$/, ''),
    tenant_id: tenant,
    client_id: client,
    ...(typeof drive === 'string' ? { drive_id: drive } : {}),
    ...(trimmed ? { folder_path: `/${trimmed}` } : {}),
  };
}
