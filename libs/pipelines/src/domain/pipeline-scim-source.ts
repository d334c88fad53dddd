/**
 * The `scim` source of a pipeline (docs/pipelines.md, The SCIM source): a SCIM 2.0 service provider's Users
 * read page by page. Pure, like the web source's checks: a problem is a `[field, reason]` pair (a 400 naming it).
 */
import type { Problem, WebAuthSettings } from './pipeline-source';

export type ScimIncrementalStrategy = 'last_modified_filter' | 'client_side';

export interface ScimSourceSettings {
  readonly type: 'scim';
  /** The service provider's root (`…/scim/v2`); resources are read from `{base_url}/Users`. */
  readonly base_url: string;
  /** A SCIM filter (RFC 7644 §3.4.2.2) sent as is; null: every user. */
  readonly filter: string | null;
  /** Attributes to ask for (`attributes=`); empty: the provider's default set. */
  readonly attributes: readonly string[];
  readonly incremental_strategy: ScimIncrementalStrategy;
  /** `count` of each page request. */
  readonly page_size: number;
  readonly auth?: WebAuthSettings;
}

const SCIM_FIELDS = ['type', 'base_url', 'auth', 'filter', 'attributes', 'incremental_strategy', 'page_size'];
// An attribute path: `userName`, `name.givenName`, or a URN-qualified one (`urn:…:enterprise:2.0:User:employeeNumber`).
const ATTRIBUTE = /^(urn:[A-Za-z0-9:._-]+:)?[A-Za-z][A-Za-z0-9_$-]*(\.[A-Za-z][A-Za-z0-9_$-]*)?$/;

/** The settings without `auth` (checked and sealed with the web source's rules); `base`: the stored source a PATCH merges into. */
export function parseScimSource(v: Record<string, unknown>, base?: ScimSourceSettings): Omit<ScimSourceSettings, 'auth'> | Problem {
  const extra = Object.keys(v).find((k) => !SCIM_FIELDS.includes(k));
  if (extra) return [`source.${extra}`, 'is not a field of the scim source'];
  const baseUrl = v.base_url ?? base?.base_url;
  if (typeof baseUrl !== 'string' || baseUrl.length > 2048 || !/^https?:\/\//i.test(baseUrl)) return ['source.base_url', 'must be the http(s) URL of the SCIM service provider (at most 2048 characters)'];
  try {
    const u = new URL(baseUrl);
    if (u.search || u.hash || u.username || u.password) return ['source.base_url', 'must have no query, fragment or user info (put credentials in auth)'];
  } catch {
    return ['source.base_url', 'is not a valid URL'];
  }
  if (v.filter !== undefined && v.filter !== null && (typeof v.filter !== 'string' || v.filter.trim() === '' || v.filter.length > 2048 || /[\r\n]/.test(v.filter))) return ['source.filter', 'must be a SCIM filter of at most 2048 characters on one line'];
  if (v.attributes !== undefined && (!Array.isArray(v.attributes) || v.attributes.length > 100)) return ['source.attributes', 'must be a list of at most 100 attribute names'];
  for (const [i, a] of ((v.attributes as unknown[] | undefined) ?? []).entries()) if (typeof a !== 'string' || a.length > 512 || !ATTRIBUTE.test(a)) return [`source.attributes[${i}]`, 'must be a SCIM attribute path such as userName or name.givenName'];
  if (v.incremental_strategy !== undefined && v.incremental_strategy !== 'last_modified_filter' && v.incremental_strategy !== 'client_side') return ['source.incremental_strategy', 'must be last_modified_filter or client_side'];
  if (v.page_size !== undefined && (typeof v.page_size !== 'number' || !Number.isInteger(v.page_size) || v.page_size < 1 || v.page_size > 1000)) return ['source.page_size', 'must be an integer from 1 to 1000'];
  const attributes = (v.attributes as string[] | undefined) ?? base?.attributes ?? [];
  return {
    type: 'scim',
    base_url: baseUrl.replace(/\/+$/, ''),
    filter: v.filter === undefined ? (base?.filter ?? null) : ((v.filter as string | null) ?? null),
    attributes,
    incremental_strategy: (v.incremental_strategy as ScimIncrementalStrategy | undefined) ?? base?.incremental_strategy ?? 'last_modified_filter',
    page_size: (v.page_size as number | undefined) ?? base?.page_size ?? 100,
  };
}
