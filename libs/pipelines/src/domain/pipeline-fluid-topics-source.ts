/**
 * The document portal source of a pipeline, type `fluid_topics` (docs/pipelines.md, The document portal source):
 * the spec's `content_scope` (`documents`, `topics`, `maps`), `query` (ignored under `maps`) and `filters` (the
 * reserved key `id` matches a map identifier), on Fluid Topics' model. `api_key` is its secret field. Pure.
 */
import { isObject, type Problem } from './pipeline-source';

export type PortalScope = 'documents' | 'topics' | 'maps';

export interface FluidTopicsSourceSettings {
  readonly type: 'fluid_topics';
  /** The portal's root (`https://docs.example.com`); the API is under `/api/khub`. */
  readonly base_url: string;
  readonly content_scope: PortalScope;
  /** Full-text query of the clustered search (`topics`, `documents`); absent: every item. */
  readonly query?: string;
  /** Metadata key → accepted values (one must match); `id`: map identifiers. */
  readonly filters: Readonly<Record<string, readonly string[]>>;
  /** `contentLocale` of the search (e.g. `en-US`); absent: the portal's default. */
  readonly content_locale?: string;
  readonly secret_fields?: readonly string[];
  /** No generic `auth`: the API key is the secret field `api_key`. */
  readonly auth?: never;
}

const FIELDS = ['type', 'base_url', 'content_scope', 'query', 'filters', 'content_locale'];

function parseFilters(v: unknown, scope: PortalScope): Record<string, string[]> | Problem {
  if (!isObject(v) || Object.keys(v).length > 50) return ['source.filters', 'must be an object of at most 50 metadata keys, each a list of values'];
  for (const [key, values] of Object.entries(v)) {
    if (key.length > 255) return [`source.filters`, 'a metadata key has at most 255 characters'];
    if (!Array.isArray(values) || values.length < 1 || values.length > 100 || values.some((x) => typeof x !== 'string' || x.length > 1024)) return [`source.filters.${key}`, 'must be a list of 1 to 100 values'];
  }
  if (v.id !== undefined && scope === 'documents') return ['source.filters.id', 'the reserved key id matches a map identifier; documents belong to no map'];
  return v as Record<string, string[]>;
}

/** The settings without the secret field; `base`: the stored source a PATCH merges into. */
export function parseFluidTopicsSource(v: Record<string, unknown>, base?: FluidTopicsSourceSettings): Omit<FluidTopicsSourceSettings, 'secret_fields' | 'auth'> | Problem {
  const extra = Object.keys(v).find((k) => !FIELDS.includes(k));
  if (extra) return [`source.${extra}`, 'is not a field of the fluid_topics source'];
  const baseUrl = v.base_url ?? base?.base_url;
  if (typeof baseUrl !== 'string' || baseUrl.length > 2048 || !/^https?:\/\/.+/i.test(baseUrl)) return ['source.base_url', 'is required: the http(s) URL of the portal (at most 2048 characters)'];
  try {
    const u = new URL(baseUrl);
    if (u.search || u.hash || u.username || u.password) return ['source.base_url', 'must have no query, fragment or user info (the API key goes in api_key)'];
  } catch {
    return ['source.base_url', 'is not a valid URL'];
  }
  const scope = v.content_scope ?? base?.content_scope ?? 'topics';
  if (scope !== 'documents' && scope !== 'topics' && scope !== 'maps') return ['source.content_scope', 'must be documents, topics or maps'];
  const query = v.query === undefined ? base?.query : v.query;
  if (query !== undefined && query !== null && (typeof query !== 'string' || query.length > 1024)) return ['source.query', 'must be a query of at most 1024 characters'];
  const filters = parseFilters(v.filters === undefined ? (base?.filters ?? {}) : v.filters, scope);
  if (Array.isArray(filters)) return filters as Problem;
  const locale = v.content_locale === undefined ? base?.content_locale : v.content_locale;
  if (locale !== undefined && locale !== null && (typeof locale !== 'string' || !/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(locale))) return ['source.content_locale', 'must be a locale such as en-US'];
  return {
    type: 'fluid_topics',
    base_url: baseUrl.replace(/\/+$/, ''),
    content_scope: scope,
    ...(typeof query === 'string' && query.trim() ? { query } : {}),
    filters: filters as Record<string, string[]>,
    ...(typeof locale === 'string' ? { content_locale: locale } : {}),
  };
}
